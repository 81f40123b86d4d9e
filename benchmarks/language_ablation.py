#!/usr/bin/env python
"""Which changes make an Energy Transformer a working character language model: an ablation on small models.

    python -m benchmarks.language_ablation [--steps 1500] [--only NAME ...]

Every row trains a small model (N = 64, D = 64, H = 4, Y = 16, M = 256, T = 4; about 37,000 parameters) on the training
books of the King James Bible with the same recipe (batch 32, AdamW, lr 3e-3, warm-up then cosine decay), and scores
bits per character on 60,000 characters of the **validation** books (masked rows: 15% of the characters masked, given
both sides; causal rows: every next character). The transformers are matched to the ET's parameter count. No test
character is read: the shipped recipes are chosen from this table. Writes results/language_ablation.json (one entry per
row, with its validation curve and the training seconds on this machine), keeping the rows not re-run.
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import replace
from pathlib import Path

from energy_transformer.core import ETConfig, count_params
from energy_transformer.language import CausalET, CausalTransformer, LMConfig, MaskedET, MaskedTransformer, matched_transformer
from energy_transformer.language_training import fit_language_model, kjv_alphabet
from energy_transformer.train import TrainConfig

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "benchmarks" / "results" / "language_ablation.json"


def rows(chars: str) -> dict:
    "name -> (what changes, model class, model config); every ET row differs from the one above it in one setting"
    et = ETConfig(D=64, H=4, Y=16, M=256, exclude_self=False)
    mlm = LMConfig(chars, objective="mlm", N=64, et=et, alpha=1.0, T=4, pos_std=0.2)
    ar = replace(mlm, objective="ar")
    bias = lambda c: replace(c, et=replace(c.et, rel_pos=c.N - 1))
    return {
        "mlm_et": ("masked ET as before: position embeddings only", MaskedET, mlm),
        "mlm_et_bias": ("+ position bias in the energy", MaskedET, bias(mlm)),
        "mlm_et_bias_alpha0.3": ("+ bias, step alpha = 0.3", MaskedET, replace(bias(mlm), alpha=0.3)),
        "mlm_et_bias_T2": ("+ bias, T = 2 descent steps", MaskedET, replace(bias(mlm), T=2)),
        "mlm_transformer": ("matched transformer encoder, 1 block", MaskedTransformer, matched_transformer(bias(mlm), L=1)),
        "ar_et": ("causal ET as before: position embeddings only", CausalET, ar),
        "ar_et_bias": ("+ position bias in the energy", CausalET, bias(ar)),
        "ar_et_bias_T2": ("+ bias, T = 2 descent steps", CausalET, replace(bias(ar), T=2)),
        "ar_transformer": ("matched causal transformer, 1 block", CausalTransformer, matched_transformer(bias(ar), L=1)),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--only", nargs="*", help="row names to (re-)run (default: all)")
    a = p.parse_args(argv)
    chars = kjv_alphabet()
    tc = TrainConfig(steps=a.steps, batch_size=32, lr=3e-3, warmup=0.05, end_lr=0.1, weight_decay=0.05, b2=0.99,
                     eval_every=250, log_every=50)
    old = json.loads(OUT.read_text()) if OUT.exists() else {}
    res = dict(old.get("rows", {}))
    for name, (what, cls, mc) in rows(chars).items():
        if a.only and name not in a.only: continue
        t = time.time()
        model, log = fit_language_model(cls, mc, tc, name=name, progress=False)
        res[name] = dict(what=what, cls=cls.__name__, objective=mc.objective, params=count_params(model),
                         rel_pos=mc.et.rel_pos, alpha=mc.alpha, T=mc.T, steps=tc.steps,
                         chars_seen=tc.steps * tc.batch_size * mc.N, train_s=round(log["train_time_s"], 1),
                         valid_bpc=round(log["evals"][-1]["bpc"], 4),
                         curve=[dict(step=e["step"], bpc=round(e["bpc"], 4)) for e in log["evals"]])
        print(name, {k: v for k, v in res[name].items() if k != "curve"}, f"{time.time() - t:.0f} s", flush=True)
        OUT.write_text(json.dumps(dict(machine=platform.processor() or platform.machine(), valid_chars=60_000,
                                       train_config=tc.to_dict(), rows=res), indent=1))


if __name__ == "__main__":
    main()
