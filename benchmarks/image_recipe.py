#!/usr/bin/env python
"""Recipe choice for the Fashion-MNIST image ET, measured on a validation split.

    python -m benchmarks.image_recipe [--seconds 200]

The last 5,000 training images are held out as the validation split (nothing here sees the test set). Each
candidate trains for the same CPU time (`train_for_seconds`: throughput probed, then a full learning-rate schedule
of as many steps as fit) and is scored by masked MSE at 50% masking on all 5,000 validation images. The shipped
preset is the candidate with the lowest validation error. Writes results/image_recipe.json.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.equal_time import train_for_seconds
from energy_transformer.core import ETConfig, count_params
from energy_transformer.data import load_images
from energy_transformer.image import ImageETConfig
from energy_transformer.image_training import ImageTaskConfig, train_inpainting
from energy_transformer.train import TrainConfig

ROOT = Path(__file__).resolve().parents[1]

N_VALID = 5000
CANDIDATES = {  # name: (model, peak learning rate)
    "D128 T12": (ImageETConfig.fashion_mnist(), 2e-3),
    "D128 T6": (ImageETConfig.fashion_mnist(T=6), 2e-3),
    "D64 T8": (ImageETConfig.fashion_mnist(et=ETConfig(D=64, H=4, Y=16, M=256), T=8), 3e-3),
}


def run(seconds: float) -> dict:
    x = load_images("fashion_mnist", "train")
    data = (x[:-N_VALID], x[-N_VALID:])
    task = ImageTaskConfig(data="fashion_mnist", eval_size=500, final_eval_size=N_VALID)
    rows = {}
    for name, (mc, lr) in CANDIDATES.items():
        tc = TrainConfig(steps=1000, batch_size=32, lr=lr)
        train = lambda tc, mc=mc, **k: train_inpainting(mc, task, tc, data=data, progress=False, **k)
        model, log, rate = train_for_seconds(train, tc, seconds)
        rows[name] = dict(D=mc.et.D, M=mc.et.M, T=mc.T, lr=lr, n_params=count_params(model), steps_per_s=rate,
                          steps=log["train_config"]["steps"], valid_masked_mse=log["final"]["model"]["mse"],
                          curve=[dict(step=e["step"], masked_mse=e["mse"]) for e in log["evals"]])
        print(name, {k: v for k, v in rows[name].items() if k != "curve"}, flush=True)
    best = min(rows, key=lambda k: rows[k]["valid_masked_mse"])
    return dict(data="fashion_mnist", valid_images=N_VALID, batch=32, mask_ratio=task.mask_ratio, seconds_each=seconds,
                candidates=rows, best=best)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=200)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    r = run(a.seconds)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    (out / "image_recipe.json").write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
