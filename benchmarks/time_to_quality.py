#!/usr/bin/env python
"""Time to quality: held-out error against CPU seconds of training, for an ET and a transformer with the same
parameter count, trained the same way, on image inpainting or on language modelling.

    python benchmarks/time_to_quality.py [--task image|language] [--seconds 240]

Each model gets the same CPU time: its throughput is measured on a short run, then a fresh model is trained with a
full learning-rate schedule of as many steps as fit in `--seconds`, evaluated at eight points of training
(evaluation time is not counted).
- image: Fashion-MNIST, the image ET against `image.matched_mae`; masked MSE at 50% masking on 500 held-out test
  images during training, on 2,000 at the end. Writes results/time_to_quality.json.
- language: the King James Bible, the causal ET `kjv_ar` against `kjv_ar_transformer` (the same recipe); bits per
  character on 60,000 characters of the validation books during training and on the first 60,000 characters of
  the test books at the end. Writes results/time_to_quality_language.json.
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
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig, TransformerMAE, matched_mae  # noqa: E402
from energy_transformer.image_training import preset, train_inpainting  # noqa: E402
from energy_transformer.language_training import lm_evaluator, lm_preset, train_language_model  # noqa: E402
from energy_transformer.text import CharVocab, kjv_splits  # noqa: E402


def run(seconds: float, final_eval_size: int = 2000) -> dict:
    mc, task, tc = preset("fashion_mnist")
    mc, tc = ImageETConfig.fashion_mnist(), replace(tc, lr=2e-3)  # the paper-sized block these were measured with
    task = replace(task, eval_size=500, final_eval_size=final_eval_size)
    makers = {"ET": lambda: ImageEnergyTransformer(mc, key=jax.random.PRNGKey(tc.seed)),
              "matched transformer": lambda: TransformerMAE(matched_mae(mc), key=jax.random.PRNGKey(tc.seed))}
    rows = {}
    for name, make in makers.items():
        train = lambda tc, make=make, **k: train_inpainting(make(), task, tc, progress=False, **k)
        model, log, rate = train_for_seconds(train, tc, seconds)
        steps = log["train_config"]["steps"]
        rows[name] = dict(n_params=count_params(model), steps_per_s=rate, steps=steps, train_s=round(log["train_time_s"], 1),
                          curve=[dict(step=e["step"], time_s=e["time_s"], masked_mse=e["mse"]) for e in log["evals"]],
                          test_masked_mse=log["final"]["model"]["mse"],
                          baselines={k: log["final"][k]["mse"] for k in ("mean_fill", "biharmonic")})
        print(name, {k: v for k, v in rows[name].items() if k != "curve"}, flush=True)
    return dict(preset="fashion_mnist", batch=tc.batch_size, seconds_each=seconds, eval_images=task.eval_size,
                test_images=final_eval_size, mask_ratio=task.mask_ratio, models=rows)


def run_language(seconds: float, test_chars: int = 60_000) -> dict:
    splits = kjv_splits()
    chars = CharVocab.from_text("".join(splits.values())).chars
    rows = {}
    for name, preset_name in (("ET", "kjv_ar"), ("matched transformer", "kjv_ar_transformer")):  # the same recipe
        _, mc, tc = lm_preset(preset_name, chars)
        train = lambda tc, preset_name=preset_name, **k: train_language_model(preset_name, tc=tc, progress=False, **k)
        model, log, rate = train_for_seconds(train, tc, seconds)
        rows[name] = dict(preset=preset_name, n_params=count_params(model), steps_per_s=rate,
                          steps=log["train_config"]["steps"], train_s=round(log["train_time_s"], 1),
                          curve=[dict(step=e["step"], time_s=e["time_s"], valid_bpc=e["bpc"]) for e in log["evals"]],
                          test_bpc=round(lm_evaluator(splits["test"], mc, test_chars)(model)["bpc"], 4))
        print(name, {k: v for k, v in rows[name].items() if k != "curve"}, flush=True)
    return dict(task="language", batch=tc.batch_size, context=mc.N, seconds_each=seconds, valid_chars=60_000,
                test_chars=test_chars, models=rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=("image", "language"), default="image")
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    r = run(a.seconds) if a.task == "image" else run_language(a.seconds)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    name = "time_to_quality.json" if a.task == "image" else "time_to_quality_language.json"
    (out / name).write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
