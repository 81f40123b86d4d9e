#!/usr/bin/env python
"""The shipped ET classifier's novelty detector: calibrated, written beside the checkpoint, and measured.

    python -m benchmarks.novelty [--model fashion_mnist_classifier] [--quantile 0.95]

`classify.calibrate_novelty` fits the class Gaussians on the model's features of all training images and sets the
threshold at `--quantile` of the validation images' scores; the detector goes to `<model>.novelty.npz` beside the
checkpoint (`classify.novelty_path`), where `et-classify` finds it. Then the fraction flagged of the 10,000 test images
and of the photo probes (`novelty.photo_probes`: 29 photos, whole and 5 crops each, as given and inverted), and, for
comparison, the same fractions for two other scores thresholded the same way on validation: the readout's confidence
(1 - the largest class probability) and the descent's final energy. Writes the section `novelty` of
energy_transformer/checkpoints/classification_quality.json.
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from energy_transformer.checkpoint import checkpoint_dir, write_json
from energy_transformer.classify import (
    calibrate_novelty,
    classification_splits,
    classifier_features,
    load_classifier,
    novelty_path,
)
from energy_transformer.novelty import photo_probes, save_novelty


def flagged(score_valid: np.ndarray, scores: dict[str, np.ndarray], quantile: float) -> dict[str, float]:
    "Fraction of each set whose score is above the `quantile` of the validation scores"
    threshold = np.quantile(score_valid, quantile)
    return {k: round(float((v > threshold).mean()), 4) for k, v in scores.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="fashion_mnist_classifier")
    ap.add_argument("--quantile", type=float, default=0.95)
    a = ap.parse_args()
    model, sp = load_classifier(a.model), classification_splits("fashion_mnist")
    nov = calibrate_novelty(model, sp, a.quantile)
    save_novelty(nov, novelty_path(a.model))
    probes = photo_probes(model.config.image_shape)
    sets = {"valid": sp["valid"].images, "test": sp["test"].images, "photos": probes, "photos_inverted": 1 - probes}
    mahalanobis = {k: nov.score(classifier_features(model, v)) for k, v in sets.items()}
    confidence = {k: 1 - model.predict_proba(v).max(-1) for k, v in sets.items()}
    energy = {k: model.descents(v)[1][:, -1] for k, v in sets.items()}
    rows = {name: flagged(s["valid"], {k: v for k, v in s.items() if k != "valid"}, a.quantile)
            for name, s in (("mahalanobis", mahalanobis), ("confidence", confidence), ("energy", energy))}
    result = dict(model=a.model, quantile=a.quantile, threshold=round(nov.threshold, 2), features=int(nov.means.shape[1]),
                  n={k: len(v) for k, v in sets.items()}, flagged=rows,
                  photo_scores_median=round(float(np.median(mahalanobis["photos"])), 1),
                  test_scores_median=round(float(np.median(mahalanobis["test"])), 1))
    path = checkpoint_dir() / "classification_quality.json"
    write_json({**json.loads(path.read_text()), "novelty": result}, path)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
