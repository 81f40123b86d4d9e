#!/usr/bin/env python
"""Exact vs Jacobian-free gradients of the descent: masked-image training for the same wall time.

    python benchmarks/jfb_quality.py [--seconds 300] [--k 1 3]

`backprop_steps=k` differentiates only the last k of the T descent steps (the earlier ones count as the identity
in the backward pass). Each gradient gets the same CPU time: its throughput is measured on a short run, then a
fresh model is trained with a full learning-rate schedule of as many steps as fit in `--seconds`, and scored on
held-out Fashion-MNIST test images at 50% masking. Writes results/jfb_quality.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (str(ROOT), str(ROOT / "benchmarks")):
    if p not in sys.path: sys.path.insert(0, p)

import jax  # noqa: E402
from equal_time import train_for_seconds  # noqa: E402

from energy_transformer.image import ImageEnergyTransformer, ImageETConfig  # noqa: E402
from energy_transformer.image_training import preset, train_inpainting  # noqa: E402


def run(seconds: float, ks: list[int], final_eval_size: int = 2000) -> dict:
    mc, task, tc = preset("fashion_mnist")
    mc, tc = ImageETConfig.fashion_mnist(), replace(tc, lr=2e-3)  # the paper-sized block these were measured with
    task = replace(task, eval_size=64, final_eval_size=final_eval_size)
    rows = {}
    for k in [None, *ks]:
        kw = () if k is None else (("backprop_steps", k),)
        name = "exact" if k is None else f"last {k} of {mc.T} steps"
        t0 = time.time()
        train = lambda tc, kw=kw, **k: train_inpainting(ImageEnergyTransformer(mc, key=jax.random.PRNGKey(tc.seed)), task, tc,
                                                        progress=False, descend_kw=kw, **k)
        _, log, rate = train_for_seconds(train, tc, seconds)
        steps = log["train_config"]["steps"]
        rows[name] = dict(backprop_steps=k, steps_per_s=rate, steps=steps, wall_s=round(time.time() - t0, 1),  # with the probe
                          train_s=round(log["train_time_s"], 1), final_loss=log["history"][-1]["loss"],
                          test_masked_mse=log["final"]["model"]["mse"], test_psnr=log["final"]["model"]["psnr"])
        print(name, rows[name], flush=True)
    base = rows["exact"]
    for r in rows.values(): r["speedup_per_step"] = round(r["steps_per_s"] / base["steps_per_s"], 2)
    return dict(preset="fashion_mnist", T=mc.T, batch=tc.batch_size, seconds_each=seconds,
                test_images=final_eval_size, mask_ratio=task.mask_ratio, runs=rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--k", type=int, nargs="*", default=[1])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    r = run(a.seconds, a.k)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    (out / "jfb_quality.json").write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
