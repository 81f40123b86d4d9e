"""Section `context` of `run.py`: the causal ET's cost against its context length N, softmax attention (with its
position bias) against Taylor attention (with its decay): training step time and memory at a fixed number of
characters per batch, and characters per second of cached generation at the end of a full context."""
from __future__ import annotations

from dataclasses import replace

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.equal_time import load
from benchmarks.timing import memory, timeit
from energy_transformer import language as lm
from energy_transformer.generation import cached_generation_speed
from energy_transformer.language_training import kjv_alphabet, lm_preset
from energy_transformer.train import make_optimizer, make_train_step, trainable


def context_config(kind: str, N: int, quick: bool) -> lm.LMConfig:
    """The shipped causal recipe's sizes (`kjv_ar`: D = 192, H = 6, Y = 32, M = 768, T = 2) at context N, with softmax
    attention and a position bias over every offset, or Taylor attention with its decay; --quick: a small model"""
    _, mc, _ = lm_preset("kjv_ar", kjv_alphabet())
    if quick: mc = replace(mc, et=replace(mc.et, D=32, H=2, Y=16, M=64))
    et = replace(mc.et, rel_pos=N - 1) if kind == "softmax" else replace(mc.et, attention="taylor", decay=True, rel_pos=0)
    return replace(mc, N=N, et=et)


def _train_step(model: lm.CausalET, batch: int):
    "The library's compiled training step (`make_train_step` with the recipe's optimizer) of a CausalET, and its arguments"
    mc, (_, _, tc) = model.config, lm_preset("kjv_ar", model.config.chars)
    params, static = eqx.partition(model, trainable(model))
    opt = make_optimizer(tc)
    ids = jnp.asarray(np.random.default_rng(0).integers(0, len(mc.chars), (batch, mc.N + 1)), jnp.int32)
    args = (params, static, opt.init(params), ids, jax.random.key(1))
    step = make_train_step(lm.ar_loss, opt)
    return step.lower(*args).compile(), args


def bench_context(s: dict) -> dict:
    """For each N of `s["context_Ns"]` and each attention: seconds per training step on `s["context_chars"]` characters
    (N = 256: 16 windows; 4,096: one), its peak memory, and cached generation speed at positions N - 64 .. N - 1"""
    rows = []
    for N in s["context_Ns"]:
        row = dict(N=N, batch=max(1, s["context_chars"] // N))
        for kind in ("softmax", "taylor"):
            model = lm.CausalET(context_config(kind, N, s["quick"]), key=jax.random.key(0))  # timed in training and generation
            comp, args = _train_step(model, row["batch"])
            t = timeit(comp, *args, repeats=s["context_repeats"])
            gen = cached_generation_speed(model, N - s["context_new"], s["context_new"], repeats=s["context_repeats"])
            row[kind] = dict(step_s=t["median_s"], chars_per_s=row["batch"] * N / t["median_s"],
                             peak_bytes=memory(comp)["peak_bytes"], generation_chars_per_s=gen)
        row["taylor_step_speedup"] = row["softmax"]["step_s"] / row["taylor"]["step_s"]
        row["taylor_generation_speedup"] = row["taylor"]["generation_chars_per_s"] / row["softmax"]["generation_chars_per_s"]
        rows.append(row)
    first, last = rows[0], rows[-1]
    flat = {k: first[k]["generation_chars_per_s"] / last[k]["generation_chars_per_s"] for k in ("softmax", "taylor")}
    mc = context_config("taylor", rows[0]["N"], s["quick"])  # the sizes, the same for every N and kind
    return dict(rows=rows, generation_slowdown=flat, load=load(),
                sizes=dict(D=mc.et.D, H=mc.et.H, Y=mc.et.Y, M=mc.et.M, T=mc.T, chars_per_step=s["context_chars"]))
