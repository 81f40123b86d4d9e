#!/usr/bin/env python
"""Time to quality: masked-image error against CPU seconds of training, for the image ET and a transformer MAE
with the same parameter count (`image.matched_mae`), trained the same way.

    python benchmarks/time_to_quality.py [--seconds 240]

Each model gets the same CPU time: its throughput is measured on a short run, then a fresh model is trained with a
full learning-rate schedule of as many steps as fit in `--seconds`. The masked MSE on 500 held-out test images
is recorded at eight points of training (evaluation time is not counted), the final one on 2,000 test images.
Writes results/time_to_quality.json.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import jax

ROOT = Path(__file__).resolve().parents[1]
for p in (str(ROOT), str(ROOT / "benchmarks")):
    if p not in sys.path: sys.path.insert(0, p)

from equal_time import train_for_seconds  # noqa: E402

from energy_transformer.core import count_params  # noqa: E402
from energy_transformer.image import ImageEnergyTransformer, TransformerMAE, matched_mae  # noqa: E402
from energy_transformer.image_training import preset  # noqa: E402


def run(seconds: float, final_eval_size: int = 2000) -> dict:
    mc, task, tc = preset("fashion_mnist")
    task = replace(task, eval_size=500, final_eval_size=final_eval_size)
    makers = {"ET": lambda: ImageEnergyTransformer(mc, key=jax.random.PRNGKey(tc.seed)),
              "matched transformer": lambda: TransformerMAE(matched_mae(mc), key=jax.random.PRNGKey(tc.seed))}
    rows = {}
    for name, make in makers.items():
        model, log, rate = train_for_seconds(make, task, tc, seconds)
        steps = log["train_config"]["steps"]
        rows[name] = dict(n_params=count_params(model), steps_per_s=rate, steps=steps, train_s=round(log["train_time_s"], 1),
                          curve=[dict(step=e["step"], time_s=e["time_s"], masked_mse=e["mse"]) for e in log["evals"]],
                          test_masked_mse=log["final"]["model"]["mse"],
                          baselines={k: log["final"][k]["mse"] for k in ("mean_fill", "biharmonic")})
        print(name, {k: v for k, v in rows[name].items() if k != "curve"}, flush=True)
    return dict(preset="fashion_mnist", batch=tc.batch_size, seconds_each=seconds, eval_images=task.eval_size,
                test_images=final_eval_size, mask_ratio=task.mask_ratio, models=rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    r = run(a.seconds)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    (out / "time_to_quality.json").write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
