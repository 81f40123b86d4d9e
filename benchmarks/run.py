#!/usr/bin/env python
"""Headline benchmarks of `energy_transformer`, in one process: medians of several timed repeats after a warm-up.

    python benchmarks/run.py                     # full settings; writes benchmarks/results/bench.{json,md}
    python benchmarks/run.py --quick --out DIR   # tiny settings (seconds): checks that everything runs
    python benchmarks/run.py --only descent ...  # measure some sections again; they replace theirs in bench.json
    python benchmarks/run.py --recompute-quality # re-evaluate the shipped checkpoints instead of reading their logs

Sections: (1) float32 matmul roof (best of repeats over square products and the products the model runs),
(2) ET descent step (analytic FLOPs, fraction of the roof, closed form vs autograd), (3) training step (naive
autograd-of-autograd vs closed form + remat: time and memory, memory vs T), and every candidate for a faster training
gradient, read from the file `benchmarks/variants.py` writes (`make bench` runs it first), (4) where the time of the
shipped image recipe's training step goes, (5) softmax vs taylor attention per descent step, (6) batched dense
exponential recall, (7) inpainting quality at 50% masking, (8) cached vs recomputed text generation, (9) time to
quality and training methods against CPU seconds, read from the files `benchmarks/training_methods.py` writes.
Every section records the machine it ran on (CPU, cores, load average before and after, date): machines are shared
and noisy, ratios measured side by side are more telling than absolutes. Sections read from files carry those
files' own stamps; a file without one is left out.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "benchmarks")):
    if _p not in sys.path: sys.path.insert(0, _p)

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from equal_time import load, machine  # noqa: E402

from energy_transformer.checkpoint import load_checkpoint  # noqa: E402
from energy_transformer.core import EnergyLayerNorm, EnergyTransformer, ETConfig, descend  # noqa: E402
from energy_transformer.data import load_images  # noqa: E402
from energy_transformer.dense import ExponentialMemory, recall_batch  # noqa: E402
from energy_transformer.evaluate import baselines, eval_set, evaluate  # noqa: E402
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig  # noqa: E402
from energy_transformer.image_training import compiled_train_step, masked_image_loss, preset  # noqa: E402
from energy_transformer.language import CausalET, LMConfig  # noqa: E402
from energy_transformer.language_training import generation_speed, masked_generation_speed  # noqa: E402
from energy_transformer.patches import keep_count, mask_count  # noqa: E402
from energy_transformer.patterns import flip_bits, random_patterns  # noqa: E402
from energy_transformer.pretrained import load_pretrained  # noqa: E402
from energy_transformer.text import CharVocab  # noqa: E402
from energy_transformer.train import make_optimizer, make_train_step, trainable  # noqa: E402

# --------------------------------------------------------------------------------------------- settings
FULL = dict(
    roof_sizes=(256, 512, 1024, 2048, 4096), roof_repeats=7,
    descent=(("medium", 64, 65), ("full", 8, 197)), descent_T=12, repeats=5,
    train_image="fashion_mnist", train_batch=64, train_T=12, train_Ts=(12, 24, 48), train_repeats=5, train_all=True,
    attn_Ns=(256, 1024, 4096), attn_T=3, attn_repeats=5,
    dense=dict(B=100, K=1024, D=1024, sweeps=2, beta=0.05, flip=0.2), dense_repeats=5,
    quality_n=None,  # recompute on as many test images as the shipped log's final evaluation
    profile_preset="fashion_mnist", profile_repeats=9, profile_min_time=0.2,
)
QUICK = dict(
    roof_sizes=(256,), roof_repeats=3,
    descent=(("small", 4, 17),), descent_T=2, repeats=3,
    train_image="tiny", train_batch=4, train_T=2, train_Ts=(2, 3), train_repeats=2, train_all=False,
    attn_Ns=(64, 128), attn_T=1, attn_repeats=2,
    dense=dict(B=8, K=64, D=64, sweeps=1, beta=0.2, flip=0.1), dense_repeats=2,
    quality_n=32,
    profile_preset="tiny", profile_repeats=9, profile_min_time=0.03,
)
GOALS = dict(roof_fraction=0.70, train_speedup=1.5, train_memory=5.0, flat_in_T=1.5, taylor_speedup=5.0, generation_speedup=10.0)


# ------------------------------------------------------------------------------------------ generation
def bench_generation(quick: bool) -> dict:
    """Characters per second of the shipped causal ET (`kjv_ar`, context 256) generating up to a full context, with the
    descent cache and by recomputation (`language_training.generation_speed`), and of the masked ET (`kjv_mlm`) writing
    by unmasking; --quick: a small random causal model."""
    if quick:
        c = LMConfig(CharVocab.from_text("abcdefgh ").chars, N=32, et=ETConfig(D=32, H=2, Y=16, M=64, exclude_self=False), T=2)
        return dict(model="random (quick)", **generation_speed(CausalET(c, key=jax.random.PRNGKey(0)), prompt="abc", repeats=1))
    return dict(model="kjv_ar", **generation_speed(load_pretrained("kjv_ar"), repeats=3),
                masked=dict(model="kjv_mlm", **masked_generation_speed(load_pretrained("kjv_mlm"), repeats=3)))


# ---------------------------------------------------------------------------------------------- helpers
STAMP = ("date", "cpu", "cores", "cores_used", "load_start", "load_end")


def stamped(fn, *args, **kw) -> dict:
    """`fn(*args, **kw)` (a dict) with the machine it ran on: date, CPU, cores of the machine and cores this process
    may use, load average at the start and at the end (`equal_time.machine`)."""
    m = machine()
    out = fn(*args, **kw)
    out["machine"] = {k: m[k] for k in STAMP if k in m} | dict(load_end=load())
    return out


MIN_TIME = [0.05]  # seconds per timed repeat (smaller with --quick)


def timeit(fn, *args, repeats: int = 5, min_time: float | None = None) -> dict:
    """Median seconds per call of a compiled `fn(*args)`: one warm-up call, then `repeats` timed repeats of
    `inner` calls each, `inner` chosen so that a repeat lasts at least `min_time` (short calls are noisy)."""
    min_time = MIN_TIME[0] if min_time is None else min(min_time, 4 * MIN_TIME[0])
    jax.block_until_ready(fn(*args))  # warm-up (and compilation, when `fn` is not compiled yet)
    t0 = time.perf_counter(); jax.block_until_ready(fn(*args)); t1 = time.perf_counter() - t0
    inner = max(1, int(math.ceil(min_time / max(t1, 1e-9))))
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner): r = fn(*args)
        jax.block_until_ready(r)
        ts.append((time.perf_counter() - t0) / inner)
    return dict(median_s=statistics.median(ts), min_s=min(ts), max_s=max(ts), repeats=repeats, inner=inner)


def timeit_interleaved(programs: dict, repeats: int, min_time: float) -> dict:
    """Best (shortest) seconds per call of each compiled `fn(*args)` in `programs` ({name: (fn, args)}), their repeats
    taken in turn (a, b, c, a, b, c, ...) so that a change of load on a shared machine touches them all alike: for
    differences of times. Each: one warm-up call, `inner` calls per repeat lasting at least `min_time`."""
    inner = {}
    for name, (fn, args) in programs.items():
        jax.block_until_ready(fn(*args))
        t0 = time.perf_counter(); jax.block_until_ready(fn(*args)); t1 = time.perf_counter() - t0
        inner[name] = max(1, int(math.ceil(min_time / max(t1, 1e-9))))
    best = dict.fromkeys(programs, math.inf)
    for _ in range(repeats):
        for name, (fn, args) in programs.items():
            t0 = time.perf_counter()
            for _ in range(inner[name]): out = fn(*args)
            jax.block_until_ready(out)
            best[name] = min(best[name], (time.perf_counter() - t0) / inner[name])
    return best


def memory(compiled) -> dict:
    "XLA's memory analysis of a compiled program (bytes): temporaries, arguments, outputs and their sum."
    c = getattr(compiled, "compiled", compiled)  # eqx.filter_jit wraps the jax Compiled object
    m = c.memory_analysis()
    out = dict(temp_bytes=int(m.temp_size_in_bytes), argument_bytes=int(m.argument_size_in_bytes),
               output_bytes=int(m.output_size_in_bytes), alias_bytes=int(m.alias_size_in_bytes))
    out["peak_bytes"] = out["temp_bytes"] + out["argument_bytes"] + out["output_bytes"] - out["alias_bytes"]
    return out


def compile_jit(f, *args):
    "`jax.jit(f)` lowered and compiled for `args`, with the compile time."
    t0 = time.perf_counter()
    c = jax.jit(f).lower(*args).compile()
    return c, time.perf_counter() - t0


def preset_config(name: str, **kw) -> ETConfig:
    return getattr(ETConfig, name)(**kw)


# ------------------------------------------------------------------------------------------ 1. the roof
def roof_products(s: dict) -> list[tuple[str, str, tuple, tuple, int]]:
    """The products the roof is measured on: square n x n @ n x n for each size, and for each descent preset the two
    dots the model itself runs, its batched query/key projection `einsum("bnd,hdz->bhnz", g, W)` with W (H, D, 2Y)
    and the Hopfield product g (B N, D) @ Xi^T (D, M). (kind, label, shape a, shape b, FLOPs)."""
    out = [("square", f"{n} x {n} @ {n} x {n}", (n, n), (n, n), 2 * n ** 3) for n in s["roof_sizes"]]
    for name, B, N in s["descent"]:
        c = preset_config(name)
        out.append(("projection", f"{name}: einsum bnd,hdz->bhnz, ({B}, {N}, {c.D}) x ({c.H}, {c.D}, {2 * c.Y})",
                    (B, N, c.D), (c.H, c.D, 2 * c.Y), 2 * B * N * c.D * c.H * 2 * c.Y))
        out.append(("hopfield", f"{name}: ({B * N}, {c.D}) @ ({c.D}, {c.M})", (B * N, c.D), (c.D, c.M), 2 * B * N * c.D * c.M))
    return out


def bench_roof(s: dict) -> dict:
    """float32 GFLOP/s of each product of `roof_products`, from the best (shortest) of several timed repeats after a
    warm-up; the roof is the best of them all, a rate that no kernel of the same kind should exceed."""
    rows = []
    ops = dict(square=jnp.matmul, hopfield=jnp.matmul, projection=lambda g, W: jnp.einsum("bnd,hdz->bhnz", g, W))
    for i, (kind, label, sa, sb, flops) in enumerate(roof_products(s)):
        ka, kb = jax.random.split(jax.random.PRNGKey(i))
        a = jax.random.normal(ka, sa, jnp.float32); b = jax.random.normal(kb, sb, jnp.float32)
        t = timeit(jax.jit(ops[kind]), a, b, repeats=s["roof_repeats"], min_time=0.2)
        rows.append(dict(kind=kind, product=label, flops=flops, gflops=flops / t["min_s"] / 1e9,
                         gflops_median=flops / t["median_s"] / 1e9, **t))
        del a, b
    best = max(rows, key=lambda r: r["gflops"])
    return dict(sizes=rows, roof_gflops=best["gflops"], roof_product=best["product"])


# ------------------------------------------------------------------------------------ 2. descent step
def step_flops(c: ETConfig, N: int) -> dict:
    """Analytic FLOPs of ONE closed-form softmax descent step x <- x - alpha dE/dg(LN(x)) on one token set
    (N x D); a multiply-add counts 2, exp/log/div/sqrt count 1.

    * layer norm, per token: mean (D), centre (D), square + mean (2D), divide by the scale (D), x gamma (D),
      + delta (D)                                                                       ~ 7 N D
    * projections Q, K = g Wq, g Wk:            2 N D (2 H Y)
    * scores S = beta Q K^T:                    2 H N^2 Y  (+ H N^2 for beta)
    * masked softmax over keys: select, subtract max, exp, row sum, divide            ~ 5 H N^2
    * softmax-weighted sums P K and P^T Q:      2 x 2 H N^2 Y
    * back through both projections (dQ, dK) -> dE/dg:   2 N (2 H Y) D
    * Hopfield: g Xi^T (2 N D M), relu (N M), relu(.) Xi (2 N M D)
    * dE/dg = attention + Hopfield (N D), x - alpha d (2 N D)
    """
    D, H, Y, M = c.D, c.H, c.Y, c.M
    parts = dict(
        layer_norm=7 * N * D,
        projections=2 * N * D * 2 * H * Y,
        scores=2 * H * N * N * Y + H * N * N,
        softmax=5 * H * N * N,
        weighted_sums=2 * 2 * H * N * N * Y,
        back_projection=2 * N * 2 * H * Y * D,
        hopfield=2 * N * D * M + N * M + 2 * N * M * D,
        update=3 * N * D,
    )
    parts["total"] = sum(parts.values())
    return parts


def _make_descend(T: int, autograd: bool):
    def f(et, ln, x, alpha):
        return jax.vmap(lambda xi: descend(et, ln, xi, alpha=alpha, T=T, grad=jax.grad(et.energy) if autograd else None))(x)
    return f


def _model(c: ETConfig, seed: int = 0):
    et = EnergyTransformer(c, key=jax.random.PRNGKey(seed))
    return et, EnergyLayerNorm(c.D)


def bench_breakdown(c: ETConfig, B: int, N: int, repeats: int, only: tuple | None = None) -> dict:
    """Where the time of one closed-form softmax step goes: each part compiled and timed alone, with its share
    of the FLOPs of `step_flops` and its GFLOP/s (median time). The attention parts re-state core's contractions.
    `only`: time these parts only."""
    et, ln = _model(c)
    x = jax.random.normal(jax.random.PRNGKey(1), (B, N, c.D), jnp.float32)
    lnb = jax.vmap(jax.vmap(ln))
    g = jax.jit(lnb)(x)
    W = jnp.concatenate([et.Wq, et.Wk], -1)  # (H, D, 2Y)
    allowed = jnp.asarray(~np.eye(N, dtype=bool)) if c.exclude_self else jnp.ones((N, N), bool)
    QK = jnp.einsum("bnd,hdz->bhnz", g, W)
    Q, K = QK[..., :c.Y], QK[..., c.Y:]

    def softmax(Q, K):
        S = jnp.where(allowed, et.beta * jnp.einsum("bhcy,bhky->bhck", Q, K), -jnp.inf)
        e = jnp.exp(S - jax.lax.stop_gradient(S.max(-1, keepdims=True)))
        return e / e.sum(-1, keepdims=True)
    P = jax.jit(softmax)(Q, K)
    dQK = jnp.concatenate([jnp.einsum("bhck,bhky->bhcy", P, K), jnp.einsum("bhck,bhcy->bhky", P, Q)], -1)
    fl = step_flops(c, N)
    parts = dict(
        layer_norm=(lnb, (x,), fl["layer_norm"]),
        projections=(lambda g, W: jnp.einsum("bnd,hdz->bhnz", g, W), (g, W), fl["projections"]),
        scores_softmax=(softmax, (Q, K), fl["scores"] + fl["softmax"]),
        weighted_sums=(lambda P, Q, K: (jnp.einsum("bhck,bhky->bhcy", P, K), jnp.einsum("bhck,bhcy->bhky", P, Q)),
                       (P, Q, K), fl["weighted_sums"]),
        back_projection=(lambda d, W: jnp.einsum("bhnz,hdz->bnd", d, W), (dQK, W), fl["back_projection"]),
        hopfield=(jax.vmap(et.hn_grad), (g,), fl["hopfield"]),
        attention_grad=(jax.vmap(et.attn_grad), (g,), fl["projections"] + fl["scores"] + fl["softmax"]
                        + fl["weighted_sums"] + fl["back_projection"]),
    )
    out = {}
    for name, (f, args, flops) in parts.items():
        if only is not None and name not in only: continue
        t = timeit(jax.jit(f), *args, repeats=repeats)
        out[name] = dict(s=t["median_s"], flops=B * flops, gflops=B * flops / t["median_s"] / 1e9)
    if only is None:
        out["sum_of_parts_s"] = sum(out[k]["s"] for k in ("layer_norm", "projections", "scores_softmax", "weighted_sums",
                                                          "back_projection", "hopfield"))
    return out


def bench_descent(s: dict, roof: float) -> dict:
    "Time per batched descent step (T steps per call / T), closed form and autograd, against the FLOP count."
    rows = []
    T = s["descent_T"]
    for name, B, N in s["descent"]:
        c = preset_config(name)
        et, ln = _model(c)
        x = jax.random.normal(jax.random.PRNGKey(1), (B, N, c.D), jnp.float32)
        alpha = jnp.float32(0.1)
        fl = step_flops(c, N)
        row = dict(preset=name, D=c.D, H=c.H, Y=c.Y, M=c.M, batch=B, N=N, T=T, flops_per_step=B * fl["total"],
                   flops_breakdown_per_example={k: int(v) for k, v in fl.items()})
        for kind, ag in (("closed_form", False), ("autograd", True)):
            comp, ct = compile_jit(_make_descend(T, ag), et, ln, x, alpha)
            t = timeit(comp, et, ln, x, alpha, repeats=s["repeats"])
            step_s = t["median_s"] / T
            row[kind] = dict(step_s=step_s, gflops=B * fl["total"] / step_s / 1e9, compile_s=ct,
                             temp_bytes=memory(comp)["temp_bytes"], **t)
        row["roof_fraction"] = row["closed_form"]["gflops"] / roof
        row["autograd_over_closed_form"] = row["autograd"]["step_s"] / row["closed_form"]["step_s"]
        row["load"] = load()
        rows.append(row)
    name, B, N = s["descent"][-1]
    return dict(rows=rows, roof_gflops=roof, breakdown=dict(preset=name, batch=B, N=N,
                **bench_breakdown(preset_config(name), B, N, s["repeats"])))


# ------------------------------------------------------------------------------------- 3. training step
def _train_step_parts(image_preset: str, batch: int, T: int, autograd: bool, remat: bool):
    "A compiled training step of the image model (the library's), its arguments, compile seconds and config."
    mc = getattr(ImageETConfig, image_preset)(T=T)
    return (*compiled_train_step(mc, batch, autograd=autograd, remat=remat), mc)


def bench_training(s: dict) -> dict:
    "Naive path (autograd of autograd, no remat) vs the project's path (closed form + remat): time, memory, T."
    B, T0 = s["train_batch"], s["train_T"]
    paths = dict(naive=dict(autograd=True, remat=False), project=dict(autograd=False, remat=True))
    # the other two corners of (gradient, checkpointing), to tell the two effects apart
    corners = dict(closed_form_no_remat=dict(autograd=False, remat=False), autograd_remat=dict(autograd=True, remat=True))
    out = dict(image_preset=s["train_image"], batch=B, T=T0)
    for name, kw in ({**paths, **corners} if s["train_all"] else paths).items():
        comp, args, ct, mc = _train_step_parts(s["train_image"], B, T0, **kw)
        t = timeit(comp, *args, repeats=s["train_repeats"])
        out[name] = dict(**kw, compile_s=ct, step_s=t["median_s"], images_per_s=B / t["median_s"], **memory(comp), **t)
        out.update(N_tokens=mc.N + 1, D=mc.et.D, H=mc.et.H, Y=mc.et.Y, M=mc.et.M)
    out["speedup"] = out["naive"]["step_s"] / out["project"]["step_s"]
    out["temp_memory_ratio"] = out["naive"]["temp_bytes"] / out["project"]["temp_bytes"]
    mem_T = []
    for T in s["train_Ts"]:
        row = dict(T=T)
        for name, kw in paths.items():
            if name == "naive" and not s["train_all"]: continue
            if T == T0: row[name + "_temp_bytes"] = out[name]["temp_bytes"]; continue  # compiled above
            comp, *_ = _train_step_parts(s["train_image"], B, T, **kw)
            row[name + "_temp_bytes"] = memory(comp)["temp_bytes"]
        mem_T.append(row)
    out["memory_vs_T"] = mem_T
    out["project_flatness"] = mem_T[-1]["project_temp_bytes"] / mem_T[0]["project_temp_bytes"]
    if s["train_all"]: out["naive_growth"] = mem_T[-1]["naive_temp_bytes"] / mem_T[0]["naive_temp_bytes"]
    out["load"] = load()
    return out


# ---------------------------------------------------------------------------------- training step profile
def bench_training_profile(s: dict) -> dict:
    """Where the time of the shipped image recipe's training step goes (`image_training.preset`, its batch size, the
    package's `masked_image_loss`, `make_optimizer` and `make_train_step`). Four programs, each compiled and timed
    alone (best of the repeats): (a) the loss with T = 0 (embedding, decoder, loss), (b) the loss with the recipe's T,
    (c) its value and gradient, (d) the whole training step (gradient + clipped AdamW update). The split:
    embed/decode/loss = a, descent forward = b - a, backward = c - b, optimizer = d - c. Then one descent step's
    energy gradient in parts (attention, Hopfield, layer norm), timed alone at this configuration (`bench_breakdown`).
    The four programs' repeats are taken in turn (`timeit_interleaved`), so that their differences hold under a
    changing load."""

    mc, task, tc = preset(s["profile_preset"])
    B, reps = tc.batch_size, s["profile_repeats"]
    model = ImageEnergyTransformer(mc, key=jax.random.PRNGKey(0))
    params, static = eqx.partition(model, trainable(model))
    opt = make_optimizer(tc)
    opt_state = opt.init(params)
    n_chosen = mask_count(mc.N, task.mask_ratio)
    loss_of = lambda kw: masked_image_loss(n_chosen, keep_count(n_chosen, task.keep), kw)
    images = jnp.asarray(np.random.default_rng(0).random((B, *mc.image_shape), dtype=np.float32))
    key = jax.random.PRNGKey(1)
    on_params = lambda loss: (lambda p, im, k: loss(eqx.combine(p, static), im, k))
    programs = dict(
        loss_T0=(jax.jit(on_params(loss_of((("T", 0),)))), (params, images, key)),
        loss=(jax.jit(on_params(loss_of(()))), (params, images, key)),
        value_and_grad=(jax.jit(jax.value_and_grad(on_params(loss_of(())))), (params, images, key)),
        train_step=(make_train_step(loss_of(()), opt), (params, static, opt_state, images, key)),
    )
    programs = {name: (f.lower(*args).compile(), args) for name, (f, args) in programs.items()}
    times = timeit_interleaved(programs, reps, s["profile_min_time"])
    d = times["train_step"]
    split = dict(embed_decode_loss=times["loss_T0"], descent_forward=times["loss"] - times["loss_T0"],
                 backward=times["value_and_grad"] - times["loss"], optimizer=d - times["value_and_grad"])
    N = mc.N + 1  # the patches and the CLS token
    per = bench_breakdown(mc.et, B, N, reps, only=("attention_grad", "hopfield", "layer_norm"))
    per_sum = sum(v["s"] for v in per.values())
    return dict(preset=s["profile_preset"], batch=B, T=mc.T, N_tokens=N, D=mc.et.D, H=mc.et.H, Y=mc.et.Y, M=mc.et.M,
                times_s=times, step_s=d, parts={k: dict(s=v, share=v / d) for k, v in split.items()},
                per_step={k: dict(s=v["s"], share=v["s"] / per_sum, gflops=v["gflops"]) for k, v in per.items()})


# ----------------------------------------------------------------------------------- 4. attention kinds
def bench_attention(s: dict) -> dict:
    "Time per descent step (medium D/H/Y/M, batch 1) for softmax and taylor attention energies."
    rows, T = [], s["attn_T"]
    for N in s["attn_Ns"]:
        row = dict(N=N, T=T)
        for kind in ("softmax", "taylor"):
            c = ETConfig.medium(attention=kind) if N > 200 else ETConfig.small(attention=kind)
            et, ln = _model(c)
            x = jax.random.normal(jax.random.PRNGKey(2), (1, N, c.D), jnp.float32)
            alpha = jnp.float32(0.1)
            comp, ct = compile_jit(_make_descend(T, False), et, ln, x, alpha)
            t = timeit(comp, et, ln, x, alpha, repeats=s["attn_repeats"])
            row[kind] = dict(step_s=t["median_s"] / T, compile_s=ct, temp_bytes=memory(comp)["temp_bytes"], **t)
            row.update(D=c.D, H=c.H, Y=c.Y, M=c.M)
        row["taylor_speedup"] = row["softmax"]["step_s"] / row["taylor"]["step_s"]
        row["load"] = load()
        rows.append(row)
    return dict(rows=rows)


# -------------------------------------------------------------------------------------- 5. dense recall
def bench_dense(s: dict) -> dict:
    "Batched asynchronous recall of an exponential dense associative memory: time and XLA memory."
    d = s["dense"]
    Xi = random_patterns(jax.random.PRNGKey(40), d["K"], d["D"])
    mem = ExponentialMemory(Xi, beta=d["beta"])
    cues = flip_bits(jax.random.PRNGKey(41), Xi[:d["B"]], d["flip"])
    f = lambda mem, cues: recall_batch(mem, cues, sweeps=d["sweeps"])[0]
    comp, ct = compile_jit(f, mem, cues)
    t = timeit(comp, mem, cues, repeats=s["dense_repeats"])
    final = np.asarray(comp(mem, cues))
    exact = float(np.mean(np.all(final == np.asarray(Xi[:d["B"]]), axis=1)))
    return dict(**d, compile_s=ct, time_s=t["median_s"], exact_recall=exact, **memory(comp), timing=t, load=load())


# ---------------------------------------------------------------------------------- 6. inpainting quality
CKPT_DIR = ROOT / "energy_transformer" / "checkpoints"


def _quality_row(name: str, final: dict, source: str, model: str | None = None) -> dict:
    return dict(checkpoint=name, model=model, source=source, mask_ratio=final.get("mask_ratio"), n_images=final.get("n_images"),
                model_mse=final["model"]["mse"], model_psnr=final["model"]["psnr"],
                mean_fill_mse=final["mean_fill"]["mse"], biharmonic_mse=final["biharmonic"]["mse"],
                biharmonic_psnr=final["biharmonic"]["psnr"])


def _shipped_logs() -> dict:
    "Training logs with a final evaluation shipped next to the checkpoints: {name: log}."
    logs = {}
    for p in sorted(CKPT_DIR.glob("*.json")):
        try: log = json.loads(p.read_text())
        except (OSError, ValueError): continue
        if isinstance(log, dict) and log.get("task") == "inpainting" and "final" in log: logs[p.stem] = log
    return logs


def _recompute(model, test_x, n: int, ratio: float, seed: int = 1) -> dict:
    fx, fmask = eval_set(test_x, model.patcher.N, n, ratio, seed=seed)
    return dict(n_images=len(fx), mask_ratio=ratio, model=evaluate(model, fx, fmask), **baselines(fx, fmask, model.patcher))


def bench_quality(s: dict, recompute: bool, quick: bool) -> dict:
    """Masked-patch MSE at 50% masking: read from the shipped training logs, or recomputed on the shipped
    checkpoints (same fixed test masks as the log's final evaluation). With no shipped checkpoint and `--quick`,
    an untrained tiny model is evaluated instead, to exercise the code path."""
    logs = _shipped_logs()
    rows = []
    for name, log in logs.items():
        ckpt = CKPT_DIR / f"{name}.npz"
        if not recompute or not ckpt.is_file() or log.get("model") != "ImageEnergyTransformer":
            rows.append(_quality_row(name, log["final"], f"energy_transformer/checkpoints/{name}.json", log.get("model")))
            continue
        model = load_checkpoint(ckpt, ImageEnergyTransformer)
        data = log.get("task_config", {}).get("data", name)
        n = s["quality_n"] or log["final"].get("n_images", 1000)
        rows.append(_quality_row(name, _recompute(model, load_images(data, "test"), n, 0.5), f"recomputed from {ckpt.name}",
                                 log.get("model")))
    if not rows and quick:
        model = ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.PRNGKey(0))
        rows.append(_quality_row("untrained-tiny", _recompute(model, load_images("fashion_mnist", "test"), s["quality_n"], 0.5),
                                 "recomputed (untrained tiny model: smoke test)", "ImageEnergyTransformer"))
    return dict(rows=rows, load=load())


# ------------------------------------------------------------------------------------- time to quality
TRANSFORMERS = ("matched transformer", "tied transformer")  # the baselines of `training_methods.py`; others are ETs
TTQ_KEYS = ("method", "seconds", "description", "n_params", "steps", "steps_per_cpu_s", "train_cpu_s", "valid", "test", "curve",
            "machine")


def bench_time_to_quality(folder: Path) -> dict:
    """Held-out quality after equal CPU time for each task and training method: every file that
    `benchmarks/training_methods.py` wrote to `folder` (one run each, minutes of training, pinned to a core), as
    {task: {metric, lower_is_better, rows}}, rows sorted by budget then method, each with its run's machine stamp.
    Files without a stamp are left out."""
    out = {}
    for f in sorted(Path(folder).glob("*.json")):
        r = json.loads(f.read_text())
        if "machine" not in r: continue
        t = out.setdefault(r["task"], dict(metric=r["metric"], lower_is_better=r["lower_is_better"], rows=[]))
        t["rows"].append({k: r.get(k) for k in TTQ_KEYS} | dict(source=f"benchmarks/results/ttq/{f.name}"))
    for t in out.values(): t["rows"].sort(key=lambda x: (x["seconds"], x["method"]))
    return out


def _best(rows: list[dict], lower_is_better: bool) -> dict | None:
    "The ET row (not a transformer baseline) with the best validation value."
    ets = [x for x in rows if x["method"] not in TRANSFORMERS]
    if not ets: return None
    return (min if lower_is_better else max)(ets, key=lambda x: x["valid"])


def bench_training_methods(folder: Path) -> dict | None:
    """The ways of training the image ET (and its transformer baselines) at the smallest budget of the files in
    `folder`: quality, steps per CPU second of each phase, the cosine of approximate gradients to the exact one, and
    the best ET method by validation masked MSE."""
    runs = [r for r in map(lambda f: json.loads(f.read_text()), sorted(Path(folder).glob("*.json")))
            if r.get("task") == "image" and "machine" in r]
    if not runs: return None
    seconds = min(r["seconds"] for r in runs)
    keys = TTQ_KEYS + ("grad_cosine", "phases", "baselines")
    rows = sorted(({k: r.get(k) for k in keys} for r in runs if r["seconds"] == seconds), key=lambda x: x["method"])
    best = _best(rows, runs[0]["lower_is_better"])
    return dict(task="image", metric=runs[0]["metric"], lower_is_better=runs[0]["lower_is_better"], seconds=seconds,
                rows=rows, best=best["method"] if best else None)


def bench_training_candidates(results: Path) -> dict | None:
    """Every candidate for a faster training gradient, timed side by side in one run of `benchmarks/variants.py`
    (`make bench` runs it first): time and temporary memory against the naive path, and the cosine of each gradient
    to the exact one, with that run's machine stamp (a file without one is left out)."""
    f = results / "variants.json"
    if not f.is_file(): return None
    v = json.loads(f.read_text())
    if not isinstance(v, dict) or "machine" not in v: return None
    rows = v["rows"]
    naive = next(r for r in rows if r["mode"] == "naive")
    for r in rows:
        r.update(speedup=naive["s"] / r["s"], memory_ratio=naive["temp_bytes"] / r["temp_bytes"])
    exact = [r for r in rows if r["cos_to_exact"] > 0.9999]
    approx = [r for r in rows if r["cos_to_exact"] <= 0.9999]
    pick = lambda rs: max(rs, key=lambda r: r["speedup"])["mode"] if rs else None
    return dict(source="benchmarks/results/variants.json", T=naive["T"], batch=naive["batch"], rows=rows,
                best_exact=pick(exact), best_approximate=pick(approx), machine=v["machine"])


# ------------------------------------------------------------------------------------------- reporting
def _mib(b): return f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 2**10:.0f} KiB"
def _ms(t): return f"{t * 1e3:.3g} ms"
def _yes(ok): return "yes" if ok else "**no**"


def _cpu(name: str) -> str:
    "A CPU's model name without trademarks and clock: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz' -> 'Intel Xeon Gold 6338'"
    for x in ("(R)", "(TM)", "(tm)", " CPU"): name = name.replace(x, "")
    return name.split(" @")[0].strip()


def _cores(m: dict) -> str:
    used = m.get("cores_used", m["cores"])
    return f"{m['cores']} cores" if used == m["cores"] else f"{used} of {m['cores']} cores"


def tag(*stamps: dict | None) -> str:
    """The 'measured on' cell of one or more machine stamps: CPU, cores (used of the machine's), the load average
    at the start and end (its range over several runs), the date (range)."""
    ms = [m for m in stamps if m]
    if not ms: return ""
    cpu = ", ".join(sorted({_cpu(m["cpu"]) for m in ms}))
    cores = ", ".join(sorted({_cores(m) for m in ms}))
    if len(ms) == 1: load_ = f"load {ms[0]['load_start']:.1f}→{ms[0]['load_end']:.1f}"
    else:
        ls = [m[k] for m in ms for k in ("load_start", "load_end")]
        load_ = f"load {min(ls):.1f}–{max(ls):.1f}"
    days = sorted({m["date"][:10] for m in ms})
    return f"{cpu}, {cores}{' each' if len(ms) > 1 else ''}, {load_}, {days[0]}" + (f" to {days[-1]}" if len(days) > 1 else "")


METRIC = dict(masked_mse="validation masked MSE", bpc="validation bits per character", accuracy="validation accuracy")


def _value(metric: str, v: float) -> str:
    return f"{v:.1%}" if metric == "accuracy" else f"{v:.3f}" if metric == "bpc" else f"{v:.4f}"


def _compare(metric: str, et: float, tf: float) -> str:
    "ET against the transformer: a ratio of MSEs, a difference of bits per character or of accuracy points."
    if metric == "bpc": return f"{et - tf:+.3f} bits"
    if metric == "accuracy": return f"{(et - tf) * 100:+.1f} points"
    return f"{et / tf:.2f}x"


def ttq_summary(q: dict) -> list[dict]:
    """One entry per budget of a time-to-quality task (`bench.json`'s `time_to_quality[task]`): the budget, the best
    ET row, the matched transformer's row (or None), the comparison, and the machine stamps of all its runs."""
    out = []
    for sec in sorted({x["seconds"] for x in q["rows"]}):
        rows = [x for x in q["rows"] if x["seconds"] == sec]
        best = _best(rows, q["lower_is_better"])
        tf = next((x for x in rows if x["method"] == "matched transformer"), None)
        out.append(dict(seconds=sec, best=best, transformer=tf, n_et=sum(x["method"] not in TRANSFORMERS for x in rows),
                        compare=_compare(q["metric"], best["valid"], tf["valid"]) if best and tf else None,
                        cores_used=sorted({x["machine"].get("cores_used", x["machine"]["cores"]) for x in rows}),
                        machines=[x["machine"] for x in rows]))
    return out


def table(r: dict) -> list[list[str]]:
    "Rows (measure, value, goal, met?, measured on) of the Markdown table; sections missing from `r` are skipped."
    r = stamped_only(r)
    rows = []
    on = lambda k: tag(r[k].get("machine"))
    if "roof" in r:
        roof = r["roof"]
        squares = [str(x.get("n") or x["product"].split(" ")[0]) for x in roof["sizes"] if x.get("kind", "square") == "square"]
        others = sum(x.get("kind", "square") != "square" for x in roof["sizes"])
        best = roof.get("roof_product") or f"n = {roof['roof_n']}"
        rows.append([f"float32 matmul roof (best of square n = {', '.join(squares)}"
                     + (f" and {others} products shaped like the model's" if others else "") + ")",
                     f"{roof['roof_gflops']:.0f} GFLOP/s ({best})", "", "", on("roof")])
    if "descent" in r:
        for d in r["descent"]["rows"]:
            tag_ = f"{d['preset']} (B = {d['batch']}, N = {d['N']})"
            cf = d["closed_form"]
            goal = d["preset"] == "full"
            rows.append([f"descent step, {tag_}: closed form",
                         f"{cf['step_s'] * 1e3:.2f} ms, {cf['gflops']:.0f} GFLOP/s = {d['roof_fraction']:.0%} of roof",
                         f">= {GOALS['roof_fraction']:.0%} of roof" if goal else "",
                         _yes(d["roof_fraction"] >= GOALS["roof_fraction"]) if goal else "", on("descent")])
            rows.append([f"descent step, {tag_}: autograd / closed form", f"{d['autograd_over_closed_form']:.2f}x time "
                         f"({d['autograd']['step_s'] * 1e3:.2f} ms)", "", "", on("descent")])
        if "roof" in r:
            k = kernels(r["descent"])
            name, g = max(k.items(), key=lambda x: x[1])
            roof_ = r["roof"]["roof_gflops"]
            md, mr = r["descent"].get("machine"), r["roof"].get("machine")
            rows.append([f"no measured kernel above the roof ({len(k)} descent kernels: steps and their parts)",
                         f"highest {name}: {g:.0f} GFLOP/s = {g / roof_:.0%} of roof", "<= roof",
                         _yes(g <= roof_), tag(md) if (md or {}).get("date") == (mr or {}).get("date") else tag(md, mr)])
    if "training" in r:
        t = r["training"]
        tag_ = f"{t['image_preset']}, B = {t['batch']}, N = {t['N_tokens']}, T = {t['T']}"
        rows.append([f"training step ({tag_}): naive / project time",
                     f"{t['speedup']:.2f}x ({t['naive']['step_s'] * 1e3:.0f} ms vs {t['project']['step_s'] * 1e3:.0f} ms)",
                     f">= {GOALS['train_speedup']}x", _yes(t["speedup"] >= GOALS["train_speedup"]), on("training")])
        rows.append([f"training step ({tag_}): naive / project temp memory",
                     f"{t['temp_memory_ratio']:.1f}x ({_mib(t['naive']['temp_bytes'])} vs {_mib(t['project']['temp_bytes'])})",
                     f">= {GOALS['train_memory']}x", _yes(t["temp_memory_ratio"] >= GOALS["train_memory"]), on("training")])
        if "autograd_remat" in t: rows.append([f"training step ({tag_}): the other two paths", "; ".join(
            f"{lab} {t[k]['step_s'] * 1e3:.0f} ms, temp {_mib(t[k]['temp_bytes'])}" for k, lab in
            (("closed_form_no_remat", "closed form without remat"), ("autograd_remat", "autograd with remat"))), "", "",
            on("training")])
        mt = t["memory_vs_T"]
        rows.append(["training temp memory vs T, project path: " + ", ".join(f"T = {m['T']}" for m in mt),
                     ", ".join(_mib(m["project_temp_bytes"]) for m in mt) + f" ({t['project_flatness']:.2f}x over the range)",
                     f"flat (<= {GOALS['flat_in_T']}x)", _yes(t["project_flatness"] <= GOALS["flat_in_T"]), on("training")])
        if "naive_growth" in t: rows.append(["training temp memory vs T, naive path (for contrast)",
                     ", ".join(_mib(m["naive_temp_bytes"]) for m in mt) + f" ({t['naive_growth']:.2f}x)", "", "", on("training")])
    if "training_profile" in r:
        p = r["training_profile"]
        tag_ = f"{p['preset']}, B = {p['batch']}, T = {p['T']}"
        sh = {k: v["share"] for k, v in p["parts"].items()}
        rows.append([f"training step profile ({tag_})",
                     f"{_ms(p['step_s'])} per step: descent forward {sh['descent_forward']:.0%}, backward "
                     f"{sh['backward']:.0%}, embed/decode/loss {sh['embed_decode_loss']:.0%}, optimizer {sh['optimizer']:.0%}",
                     "", "", on("training_profile")])
        ps = p["per_step"]
        rows.append([f"training step profile ({tag_}): one descent step's energy gradient, N = {p['N_tokens']}",
                     f"attention {ps['attention_grad']['share']:.0%}, Hopfield {ps['hopfield']['share']:.0%}, "
                     f"layer norm {ps['layer_norm']['share']:.0%} ({_ms(ps['attention_grad']['s'])}, "
                     f"{_ms(ps['hopfield']['s'])}, {_ms(ps['layer_norm']['s'])})", "", "", on("training_profile")])
    c = r.get("training_candidates")
    if c:
        by = {x["mode"]: x for x in c["rows"]}
        b = by[c["best_exact"]]
        n_exact = sum(x["cos_to_exact"] > 0.9999 for x in c["rows"])
        rows.append([f"training step, every exact-gradient candidate (B = {c['batch']}, T = {c['T']}; {c['source']}): "
                     "best / naive time",
                     f"{b['speedup']:.2f}x ({c['best_exact']}, temp memory {b['memory_ratio']:.1f}x less; "
                     f"best of {n_exact} exact candidates)",
                     f">= {GOALS['train_speedup']}x", _yes(b["speedup"] >= GOALS["train_speedup"]), on("training_candidates")])
        if c["best_approximate"]:
            a_ = by[c["best_approximate"]]
            rows.append([f"training step, approximate gradient ({c['best_approximate']}): time / naive",
                         f"{a_['speedup']:.2f}x, cosine {a_['cos_to_exact']:.3f} to the exact gradient", "", "",
                         on("training_candidates")])
    if "attention" in r:
        last = r["attention"]["rows"][-1]["N"]
        for a in r["attention"]["rows"]:
            goal = a["N"] == last
            rows.append([f"descent step softmax vs taylor, N = {a['N']} (D = {a['D']}, H = {a['H']}, Y = {a['Y']}, B = 1)",
                         f"{a['softmax']['step_s'] * 1e3:.2f} ms vs {a['taylor']['step_s'] * 1e3:.2f} ms: "
                         f"{a['taylor_speedup']:.2f}x",
                         f">= {GOALS['taylor_speedup']}x" if goal else "",
                         _yes(a["taylor_speedup"] >= GOALS["taylor_speedup"]) if goal else "", on("attention")])
    if "dense" in r:
        d = r["dense"]
        rows.append([f"dense exponential recall, {d['B']} queries x {d['K']} patterns x {d['D']} bits, "
                     f"{d['sweeps']} async sweeps",
                     f"{_ms(d['time_s'])}, peak {_mib(d['peak_bytes'])} (temp {_mib(d['temp_bytes'])}), "
                     f"exact recall {d['exact_recall']:.0%}", "", "", on("dense")])
    if "quality" in r:
        for q in r["quality"]["rows"]:
            rows.append([f"inpainting {q['checkpoint']} ({q.get('model') or 'model'}): masked MSE at {q['mask_ratio']:.0%} "
                         f"masking ({q['n_images']} test images)",
                         f"model {q['model_mse']:.4f} ({q['model_psnr']:.1f} dB); biharmonic {q['biharmonic_mse']:.4f}; "
                         f"mean fill {q['mean_fill_mse']:.4f}", "", "",
                         on("quality") if q["source"].startswith("recomputed")
                         else "not timed: the training log's final evaluation"])
        if not r["quality"]["rows"]:
            rows.append(["inpainting masked MSE at 50% masking", "no shipped checkpoint logs found", "", "", on("quality")])
    g = r.get("generation")
    if g: rows.append([f"generation, {g['model']}: {g['new_chars']} characters up to context {g['context']}, cached / recomputed",
                       f"{g['speedup']:.1f}x ({g['cached_chars_per_s']:.0f} vs {g['recompute_chars_per_s']:.0f} chars/s)",
                       f">= {GOALS['generation_speedup']:.0f}x", _yes(g["speedup"] >= GOALS["generation_speedup"]),
                       on("generation")])
    if g and g.get("masked"):
        m = g["masked"]
        rows.append([f"generation, {m['model']}: {m['new_chars']} new characters by unmasking, {m['rounds']} rounds per "
                     f"{m['context'] // 2}", f"{m['chars_per_s']:.0f} chars/s", "", "", on("generation")])
    for task, q in r.get("time_to_quality", {}).items():
        for e in ttq_summary(q):
            if e["best"] is None: continue
            per = "one core" if e["cores_used"] == [1] else "/".join(map(str, e["cores_used"])) + " cores"
            b, tf = e["best"], e["transformer"]
            value = (f"ET {b['method']} {_value(q['metric'], b['valid'])}"
                     + (f" (best of {e['n_et']} ET methods)" if e["n_et"] > 1 else "")
                     + (f" vs matched transformer {_value(q['metric'], tf['valid'])} ({e['compare']})" if tf
                        else "; no matched transformer at this budget"))
            rows.append([f"time to quality, {task}, {METRIC.get(q['metric'], q['metric'])} after {e['seconds']:.0f} CPU s "
                         f"each ({per} per run)", value, "", "", tag(*e["machines"])])
    tm = r.get("training_methods")
    if tm:
        for x in tm["rows"]:
            rates = " / ".join(f"{v:.3g}" for v in x.get("steps_per_cpu_s") or [])
            cos = "".join(f"; gradient cosine to the exact one {c_['initial']:.2f} at the start, {c_['trained']:.2f} trained"
                          for c_ in (x.get("grad_cosine") or {}).values())
            rows.append([f"training method, image, {tm['seconds']:.0f} CPU s: {x['method']}"
                         + (" (best ET)" if x["method"] == tm["best"] else ""),
                         f"{METRIC.get(tm['metric'], tm['metric'])} {_value(tm['metric'], x['valid'])} (test "
                         f"{_value(tm['metric'], x['test'])}), {x['steps']} steps at {rates} steps per CPU s{cos}",
                         "", "", tag(x["machine"])])
    return rows


def kernels(descent: dict) -> dict[str, float]:
    "GFLOP/s of every kernel the descent section measured: each preset's closed-form and autograd step, and the parts."
    k = {}
    for d in descent["rows"]:
        for kind in ("closed_form", "autograd"): k[f"{d['preset']} {kind.replace('_', ' ')} step"] = d[kind]["gflops"]
    b = descent.get("breakdown", {})
    for name, v in b.items():
        if isinstance(v, dict) and "gflops" in v: k[f"{b['preset']} {name.replace('_', ' ')}"] = v["gflops"]
    return k


def markdown(r: dict) -> str:
    m = r["machine"]
    head = (f"Written {m['date']} with jax {m['jax']} ({m['platform']}){' on quick settings' if r['quick'] else ''}. "
            "Each row names the machine it was measured on, with the load average at the start and the end of its "
            "section; timings are medians of several repeats after a warm-up (the roof: the best repeat), and a ratio "
            "compares two figures measured side by side.\n\n")
    return head + table_markdown(r) + "\n"


def table_markdown(r: dict) -> str:
    "The Markdown table of the measures (bench.md's and the site's benchmarks page's)."
    lines = ["| measure | value | goal | met? | measured on |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in table(r)]
    return "\n".join(lines)


def _finite(x, path="") -> list[str]:
    "Paths of non-finite floats in a nested structure."
    if isinstance(x, float): return [] if math.isfinite(x) else [path]
    if isinstance(x, dict): return [p for k, v in x.items() for p in _finite(v, f"{path}.{k}")]
    if isinstance(x, (list, tuple)): return [p for i, v in enumerate(x) for p in _finite(v, f"{path}[{i}]")]
    return []


SECTIONS = ("roof", "descent", "training", "training_profile", "training_candidates", "attention", "dense", "quality",
            "generation", "time_to_quality", "training_methods")
UNTIMED = {"training_candidates": "the file `benchmarks/variants.py` writes (with its run's machine)",
           "time_to_quality": "the files `benchmarks/training_methods.py` writes (each with its run's machine)",
           "training_methods": "the files `benchmarks/training_methods.py` writes (each with its run's machine)"}
TTQ_DIR = ROOT / "benchmarks" / "results" / "ttq"


def has_stamp(name: str, sec) -> bool:
    "Whether a section carries machine stamps: its own, or for the time-to-quality sections, one per row."
    if not isinstance(sec, dict): return False
    if name == "time_to_quality":
        return all("rows" in t and all(x.get("machine") for x in t["rows"]) for t in sec.values())
    if name == "training_methods": return all(x.get("machine") for x in sec.get("rows", []))
    return bool(sec.get("machine"))


def stamped_only(r: dict) -> dict:
    """`r` without the sections that carry no machine stamp (a bench.json from before every section was stamped, or a
    result file without one) and without the keys no longer reported: old rows are dropped, not mixed with new ones."""
    return {k: v for k, v in r.items() if k not in ("updates", "circulant") and (k not in SECTIONS or has_stamp(k, v))}


def merge(r: dict, old: dict) -> dict:
    """The sections of a partial run `r` (`--only`) in place of theirs in an earlier run's bench.json `old`: whole
    sections, each keeping its own machine stamp; `old`'s sections without a stamp are dropped (`stamped_only`). Nothing of
    `old` is kept when one is a quick run and the other not."""
    old = stamped_only(old)
    if old.get("quick") != r["quick"]: return r
    return {**{k: v for k, v in r.items() if k not in SECTIONS},
            **{k: r[k] if k in r else old[k] for k in SECTIONS if k in r or k in old}}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny settings (checks the script end to end in seconds)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="folder for bench.json and bench.md")
    p.add_argument("--recompute-quality", action="store_true", help="re-evaluate the shipped checkpoints")
    p.add_argument("--only", nargs="*", choices=SECTIONS,
                   help="run only these sections; they replace theirs in an earlier run's bench.json in --out")
    a = p.parse_args(argv)
    s = QUICK if a.quick else FULL
    if a.quick: MIN_TIME[0] = 0.005
    only = set(a.only or SECTIONS)
    r = dict(quick=a.quick, settings={k: v for k, v in s.items()}, goals=GOALS, machine=machine())
    t_start = time.perf_counter()
    log = lambda msg: print(f"[{time.perf_counter() - t_start:7.1f} s, load {load():5.2f}] {msg}", flush=True)
    if "roof" in only or "descent" in only:
        log("roof"); r["roof"] = stamped(bench_roof, s)
        for x in r["roof"]["sizes"]: log(f"  {x['product']:58s} {x['gflops']:7.1f} GFLOP/s (median {x['gflops_median']:.1f})")
    if "descent" in only:
        log("descent"); r["descent"] = stamped(bench_descent, s, r["roof"]["roof_gflops"])
        for d in r["descent"]["rows"]:
            log(f"  {d['preset']}: {d['closed_form']['gflops']:.0f} GFLOP/s ({d['roof_fraction']:.0%}), "
                f"autograd {d['autograd_over_closed_form']:.2f}x")
        for k, v in r["descent"]["breakdown"].items():
            if isinstance(v, dict) and "s" in v: log(f"    {k:16s} {v['s'] * 1e3:8.3f} ms {v['gflops']:7.1f} GFLOP/s")
    if "training" in only:
        log("training"); r["training"] = stamped(bench_training, s)
        t = r["training"]
        log(f"  speedup {t['speedup']:.2f}x, memory {t['temp_memory_ratio']:.1f}x, flat {t['project_flatness']:.2f}x")
    if "training_profile" in only:
        log("training profile"); r["training_profile"] = stamped(bench_training_profile, s)
        p_ = r["training_profile"]
        log(f"  step {p_['step_s'] * 1e3:.1f} ms: " + ", ".join(f"{k} {v['s'] * 1e3:.2f} ms ({v['share']:.0%})"
                                                             for k, v in p_["parts"].items()))
        log("  per descent step: " + ", ".join(f"{k} {v['share']:.0%}" for k, v in p_["per_step"].items()))
    if "training_candidates" in only:
        c = bench_training_candidates(ROOT / "benchmarks" / "results")
        if c: r["training_candidates"] = c
        else: log("variants.json missing or without a machine stamp: training_candidates left out")
    if "attention" in only:
        log("attention"); r["attention"] = stamped(bench_attention, s)
        for a_ in r["attention"]["rows"]: log(f"  N = {a_['N']}: taylor {a_['taylor_speedup']:.2f}x")
    if "dense" in only:
        log("dense"); r["dense"] = stamped(bench_dense, s)
        log(f"  {r['dense']['time_s'] * 1e3:.0f} ms, peak {_mib(r['dense']['peak_bytes'])}")
    if "quality" in only:
        log("quality"); r["quality"] = stamped(bench_quality, s, a.recompute_quality, a.quick)
    if "generation" in only:
        log("generation"); r["generation"] = stamped(bench_generation, a.quick)
        log(f"  cached / recomputed: {r['generation']['speedup']:.1f}x")
    if "time_to_quality" in only:
        q = bench_time_to_quality(TTQ_DIR)
        if q: r["time_to_quality"] = q
        log(f"time to quality: {sum(len(t['rows']) for t in q.values())} runs in {TTQ_DIR}")
    if "training_methods" in only:
        tm = bench_training_methods(TTQ_DIR)
        if tm: r["training_methods"] = tm
    r["machine"]["load_end"] = load()
    r["wall_s"] = time.perf_counter() - t_start
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    prev = out / "bench.json"
    if only != set(SECTIONS) and prev.is_file(): r = merge(r, json.loads(prev.read_text()))
    bad = _finite(r)
    if bad: print(f"warning: non-finite values at {bad}", file=sys.stderr)
    (out / "bench.json").write_text(json.dumps(r, indent=1, default=float) + "\n")
    md = markdown(r)
    (out / "bench.md").write_text(md)
    print(md)
    log(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")


if __name__ == "__main__":
    main()
