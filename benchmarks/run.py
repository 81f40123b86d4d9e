#!/usr/bin/env python
"""Headline benchmarks of `energy_transformer`, in one process: medians of several timed repeats after a warm-up.

    python benchmarks/run.py                     # full settings; writes benchmarks/results/bench.{json,md}
    python benchmarks/run.py --quick --out DIR   # tiny settings (seconds): checks that everything runs
    python benchmarks/run.py --recompute-quality # re-evaluate the shipped checkpoints instead of reading their logs

Sections: (1) float32 matmul roof, (2) ET descent step (analytic FLOPs, fraction of the roof, closed form vs
autograd), (3) training step (naive autograd-of-autograd vs closed form + remat: time and memory, memory vs T), and every
candidate for a faster training gradient, read from the file `benchmarks/variants.py` writes (`make bench` runs it
first), (4) softmax vs taylor attention per descent step, (5) batched dense exponential recall, (6) inpainting quality
at 50% masking, (7) cached vs recomputed text generation, (8) time to quality against a parameter-matched
transformer, read from the files of `benchmarks/time_to_quality.py` (minutes of training each), (9) circulant
against dense query/key projections, read from the file of `benchmarks/circulant.py`. Machines are
shared and noisy: ratios measured side by side are more telling than absolutes, and the load average is recorded
next to every section.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from energy_transformer.core import EnergyLayerNorm, EnergyTransformer, ETConfig, descend  # noqa: E402
from energy_transformer.language import CausalET, LMConfig  # noqa: E402
from energy_transformer.language_training import generation_speed, masked_generation_speed  # noqa: E402
from energy_transformer.pretrained import load_pretrained  # noqa: E402
from energy_transformer.text import CharVocab  # noqa: E402

# --------------------------------------------------------------------------------------------- settings
FULL = dict(
    roof_sizes=(2048, 4096), roof_repeats=5,
    descent=(("medium", 64, 65), ("full", 8, 197)), descent_T=12, repeats=5,
    train_image="fashion_mnist", train_batch=64, train_T=12, train_Ts=(12, 24, 48), train_repeats=5, train_all=True,
    attn_Ns=(256, 1024, 4096), attn_T=3, attn_repeats=5,
    dense=dict(B=100, K=1024, D=1024, sweeps=2, beta=0.05, flip=0.2), dense_repeats=5,
    quality_n=None,  # recompute on as many test images as the shipped log's final evaluation
)
QUICK = dict(
    roof_sizes=(256,), roof_repeats=3,
    descent=(("small", 4, 17),), descent_T=2, repeats=3,
    train_image="tiny", train_batch=4, train_T=2, train_Ts=(2, 3), train_repeats=2, train_all=False,
    attn_Ns=(64, 128), attn_T=1, attn_repeats=2,
    dense=dict(B=8, K=64, D=64, sweeps=1, beta=0.2, flip=0.1), dense_repeats=2,
    quality_n=32,
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
def load() -> float:
    "1-minute load average of the machine."
    return round(os.getloadavg()[0], 2)


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
def bench_roof(s: dict) -> dict:
    "float32 matmul GFLOP/s for square n x n @ n x n products; the roof is the best size."
    rows = []
    mm = jax.jit(jnp.matmul)
    for n in s["roof_sizes"]:
        ka, kb = jax.random.split(jax.random.PRNGKey(n))
        a = jax.random.normal(ka, (n, n), jnp.float32); b = jax.random.normal(kb, (n, n), jnp.float32)
        t = timeit(mm, a, b, repeats=s["roof_repeats"], min_time=0.2)
        rows.append(dict(n=n, gflops=2 * n ** 3 / t["median_s"] / 1e9, **t))
        del a, b
    best = max(rows, key=lambda r: r["gflops"])
    return dict(sizes=rows, roof_gflops=best["gflops"], roof_n=best["n"], load=load())


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


def bench_breakdown(c: ETConfig, B: int, N: int, repeats: int) -> dict:
    """Where the time of one closed-form softmax step goes: each part compiled and timed alone, with its share
    of the FLOPs of `step_flops` and its GFLOP/s. The attention parts re-state core's contractions."""
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
        t = timeit(jax.jit(f), *args, repeats=repeats)
        out[name] = dict(s=t["median_s"], flops=B * flops, gflops=B * flops / t["median_s"] / 1e9)
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
    from energy_transformer.image import ImageETConfig
    from energy_transformer.image_training import compiled_train_step
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
    from energy_transformer.dense import ExponentialMemory, recall_batch
    from energy_transformer.patterns import flip_bits, random_patterns
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
    from energy_transformer.evaluate import baselines, eval_set, evaluate
    fx, fmask = eval_set(test_x, model.patcher.N, n, ratio, seed=seed)
    return dict(n_images=len(fx), mask_ratio=ratio, model=evaluate(model, fx, fmask), **baselines(fx, fmask, model.patcher))


def bench_quality(s: dict, recompute: bool, quick: bool) -> dict:
    """Masked-patch MSE at 50% masking: read from the shipped training logs, or recomputed on the shipped
    checkpoints (same fixed test masks as the log's final evaluation). With no shipped checkpoint and `--quick`,
    an untrained tiny model is evaluated instead, to exercise the code path."""
    from energy_transformer.checkpoint import load_checkpoint
    from energy_transformer.data import load_images
    from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
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
TTQ_FILES = {"image": "time_to_quality.json", "language": "time_to_quality_language.json"}


def _result(results: Path, name: str):
    "The JSON another benchmark script wrote to `results/name`, or None where it has not been run."
    f = results / name
    return json.loads(f.read_text()) if f.is_file() else None


def bench_time_to_quality(results: Path) -> dict:
    """Quality after equal CPU time, ET vs the parameter-matched transformer: read from the files that
    `benchmarks/time_to_quality.py` writes (minutes of training each, longer than this script's budget)."""
    out = {}
    for task, name in TTQ_FILES.items():
        r = _result(results, name)
        if r is None: continue
        metric = "test_masked_mse" if task == "image" else "test_bpc"
        out[task] = dict(source=f"benchmarks/results/{name}", seconds_each=r["seconds_each"], metric=metric,
                         models={k: dict(n_params=m["n_params"], steps=m["steps"], steps_per_s=m["steps_per_s"],
                                         value=m[metric]) for k, m in r["models"].items()})
    return out


def bench_circulant(results: Path) -> dict:
    """Circulant query/key projections against dense ones on Fashion-MNIST inpainting: read from the file that
    `benchmarks/circulant.py` writes (two training runs, longer than this script's budget)."""
    r = _result(results, "circulant.json")
    if r is None: return {}
    d, c = r["models"]["dense"], r["models"]["circulant"]
    return dict(source="benchmarks/results/circulant.json", steps=d["steps"], test_images=r["test_images"],
                mse_ratio=c["test_masked_mse"] / d["test_masked_mse"], fft_over_dense=r["projection"]["fft_over_dense"],
                models=r["models"])


def bench_training_candidates(results: Path) -> dict:
    """Every candidate for a faster training gradient, timed side by side in one run of `benchmarks/variants.py`
    (`make bench` runs it first): time and temporary memory against the naive path, and the
    cosine of each gradient to the exact one."""
    rows = _result(results, "variants.json")
    if rows is None: return {}
    naive = next(r for r in rows if r["mode"] == "naive")
    for r in rows:
        r.update(speedup=naive["s"] / r["s"], memory_ratio=naive["temp_bytes"] / r["temp_bytes"])
    exact = [r for r in rows if r["cos_to_exact"] > 0.9999]
    approx = [r for r in rows if r["cos_to_exact"] <= 0.9999]
    pick = lambda rs: max(rs, key=lambda r: r["speedup"])["mode"] if rs else None
    return dict(source="benchmarks/results/variants.json", T=naive["T"], batch=naive["batch"], rows=rows,
                best_exact=pick(exact), best_approximate=pick(approx))


# ------------------------------------------------------------------------------------------- reporting
def _mib(b): return f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 2**10:.0f} KiB"
def _ms(t): return f"{t * 1e3:.3g} ms"
def _yes(ok): return "yes" if ok else "**no**"


def table(r: dict) -> list[list[str]]:
    "Rows (measure, value, goal, met?) of the Markdown table."
    rows = []
    roof = r["roof"]
    rows.append(["float32 matmul roof (best of n = " + ", ".join(str(x["n"]) for x in roof["sizes"]) + ")",
                 f"{roof['roof_gflops']:.0f} GFLOP/s (n = {roof['roof_n']})", "", ""])
    for d in r["descent"]["rows"]:
        tag = f"{d['preset']} (B = {d['batch']}, N = {d['N']})"
        cf = d["closed_form"]
        goal = d["preset"] == "full"
        rows.append([f"descent step, {tag}: closed form",
                     f"{cf['step_s'] * 1e3:.2f} ms, {cf['gflops']:.0f} GFLOP/s = {d['roof_fraction']:.0%} of roof",
                     f">= {GOALS['roof_fraction']:.0%} of roof" if goal else "",
                     _yes(d["roof_fraction"] >= GOALS["roof_fraction"]) if goal else ""])
        rows.append([f"descent step, {tag}: autograd / closed form", f"{d['autograd_over_closed_form']:.2f}x time "
                     f"({d['autograd']['step_s'] * 1e3:.2f} ms)", "", ""])
    t = r["training"]
    tag = f"{t['image_preset']}, B = {t['batch']}, N = {t['N_tokens']}, T = {t['T']}"
    rows.append([f"training step ({tag}): naive / project time",
                 f"{t['speedup']:.2f}x ({t['naive']['step_s'] * 1e3:.0f} ms vs {t['project']['step_s'] * 1e3:.0f} ms)",
                 f">= {GOALS['train_speedup']}x", _yes(t["speedup"] >= GOALS["train_speedup"])])
    rows.append([f"training step ({tag}): naive / project temp memory",
                 f"{t['temp_memory_ratio']:.1f}x ({_mib(t['naive']['temp_bytes'])} vs {_mib(t['project']['temp_bytes'])})",
                 f">= {GOALS['train_memory']}x", _yes(t["temp_memory_ratio"] >= GOALS["train_memory"])])
    if "autograd_remat" in t: rows.append([f"training step ({tag}): the other two paths", "; ".join(
        f"{lab} {t[k]['step_s'] * 1e3:.0f} ms, temp {_mib(t[k]['temp_bytes'])}" for k, lab in
        (("closed_form_no_remat", "closed form without remat"), ("autograd_remat", "autograd with remat"))), "", ""])
    mt = t["memory_vs_T"]
    rows.append(["training temp memory vs T, project path: " + ", ".join(f"T = {m['T']}" for m in mt),
                 ", ".join(_mib(m["project_temp_bytes"]) for m in mt) + f" ({t['project_flatness']:.2f}x over the range)",
                 f"flat (<= {GOALS['flat_in_T']}x)", _yes(t["project_flatness"] <= GOALS["flat_in_T"])])
    if "naive_growth" in t: rows.append(["training temp memory vs T, naive path (for contrast)",
                 ", ".join(_mib(m["naive_temp_bytes"]) for m in mt) + f" ({t['naive_growth']:.2f}x)", "", ""])
    last = r["attention"]["rows"][-1]["N"]
    for a in r["attention"]["rows"]:
        goal = a["N"] == last
        rows.append([f"descent step softmax vs taylor, N = {a['N']} (D = {a['D']}, H = {a['H']}, Y = {a['Y']}, B = 1)",
                     f"{a['softmax']['step_s'] * 1e3:.2f} ms vs {a['taylor']['step_s'] * 1e3:.2f} ms: {a['taylor_speedup']:.2f}x",
                     f">= {GOALS['taylor_speedup']}x" if goal else "",
                     _yes(a["taylor_speedup"] >= GOALS["taylor_speedup"]) if goal else ""])
    d = r["dense"]
    rows.append([f"dense exponential recall, {d['B']} queries x {d['K']} patterns x {d['D']} bits, {d['sweeps']} async sweeps",
                 f"{_ms(d['time_s'])}, peak {_mib(d['peak_bytes'])} (temp {_mib(d['temp_bytes'])}), "
                 f"exact recall {d['exact_recall']:.0%}", "", ""])
    for q in r["quality"]["rows"]:
        rows.append([f"inpainting {q['checkpoint']} ({q.get('model') or 'model'}): masked MSE at {q['mask_ratio']:.0%} masking "
                     f"({q['n_images']} test images)",
                     f"model {q['model_mse']:.4f} ({q['model_psnr']:.1f} dB); biharmonic {q['biharmonic_mse']:.4f}; "
                     f"mean fill {q['mean_fill_mse']:.4f}", "", ""])
    if not r["quality"]["rows"]:
        rows.append(["inpainting masked MSE at 50% masking", "no shipped checkpoint logs found", "", ""])
    g = r.get("generation")
    if g: rows.append([f"generation, {g['model']}: {g['new_chars']} characters up to context {g['context']}, cached / recomputed",
                       f"{g['speedup']:.1f}x ({g['cached_chars_per_s']:.0f} vs {g['recompute_chars_per_s']:.0f} chars/s)",
                       f">= {GOALS['generation_speedup']:.0f}x", _yes(g["speedup"] >= GOALS["generation_speedup"])])
    if g and g.get("masked"):
        m = g["masked"]
        rows.append([f"generation, {m['model']}: {m['new_chars']} new characters by unmasking, {m['rounds']} rounds per "
                     f"{m['context'] // 2}", f"{m['chars_per_s']:.0f} chars/s", "", ""])
    c = r.get("training_candidates")
    if c:
        by = {x["mode"]: x for x in c["rows"]}
        b = by[c["best_exact"]]
        n_exact = sum(x["cos_to_exact"] > 0.9999 for x in c["rows"])
        rows.append([f"training step, every exact-gradient candidate (B = {c['batch']}, T = {c['T']}; {c['source']}): "
                     "best / naive time",
                     f"{b['speedup']:.2f}x ({c['best_exact']}, temp memory {b['memory_ratio']:.1f}x less; "
                     f"best of {n_exact} exact candidates)",
                     f">= {GOALS['train_speedup']}x", _yes(b["speedup"] >= GOALS["train_speedup"])])
        if c["best_approximate"]:
            a_ = by[c["best_approximate"]]
            rows.append([f"training step, approximate gradient ({c['best_approximate']}): time / naive",
                         f"{a_['speedup']:.2f}x, cosine {a_['cos_to_exact']:.3f} to the exact gradient", "", ""])
    cq = r.get("circulant")
    if cq:
        d, c = cq["models"]["dense"], cq["models"]["circulant"]
        rows.append([f"circulant Q/K projections vs dense, Fashion-MNIST inpainting, {cq['steps']} steps each ({cq['source']})",
                     f"masked MSE {c['test_masked_mse']:.4f} vs {d['test_masked_mse']:.4f} ({cq['mse_ratio']:.2f}x); Q/K "
                     f"parameters {c['qk_params']:,} vs {d['qk_params']:,}; FFT projection {cq['fft_over_dense']:.1f}x the "
                     "time of the dense one", "", ""])
    for task, q in r.get("time_to_quality", {}).items():
        what = "inpainting, masked MSE" if task == "image" else "language, test bits per character"
        et, tf = q["models"]["ET"], q["models"]["matched transformer"]
        rows.append([f"time to quality, {what} after {q['seconds_each']:.0f} s of training each ({q['source']})",
                     f"ET {et['value']:.4g} ({et['steps']} steps, {et['n_params']:,} parameters) vs matched transformer "
                     f"{tf['value']:.4g} ({tf['steps']} steps, {tf['n_params']:,} parameters)", "", ""])
    return rows


def markdown(r: dict) -> str:
    m = r["machine"]
    head = (f"Measured {m['date']} on {m['cpu']} ({m['cores']} cores, {m['platform']}), jax {m['jax']}; "
            f"load average {m['load_start']} at the start, {m['load_end']} at the end"
            f"{' (quick settings)' if r['quick'] else ''}. Medians of several repeats after a warm-up.\n\n")
    for u in r.get("updates", []):  # sections refreshed later with --only
        if set(u["sections"]) <= UNTIMED.keys():
            head += (f"Updated {u['date']} ({', '.join(u['sections'])}): nothing timed, read from "
                     f"{' and '.join(UNTIMED[k] for k in u['sections'])}.\n\n")
            continue
        head += (f"Re-measured {u['date']} ({', '.join(u['sections'])}): load average {u['load_start']} at the start, "
                 f"{u['load_end']} at the end; those rows replace the first run's.\n\n")
    return head + table_markdown(r) + "\n"


def table_markdown(r: dict) -> str:
    "The Markdown table of the measures (bench.md's and the site's benchmarks page's)."
    lines = ["| measure | value | goal | met? |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in table(r)]
    return "\n".join(lines)


def machine() -> dict:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"): cpu = line.split(":", 1)[1].strip(); break
    except OSError: pass
    return dict(date=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), cpu=cpu, cores=os.cpu_count(),
                platform=f"{platform.system()} {platform.machine()}", python=platform.python_version(), jax=jax.__version__,
                devices=[str(d) for d in jax.devices()], load_start=load())


def _finite(x, path="") -> list[str]:
    "Paths of non-finite floats in a nested structure."
    if isinstance(x, float): return [] if math.isfinite(x) else [path]
    if isinstance(x, dict): return [p for k, v in x.items() for p in _finite(v, f"{path}.{k}")]
    if isinstance(x, (list, tuple)): return [p for i, v in enumerate(x) for p in _finite(v, f"{path}[{i}]")]
    return []


SECTIONS = ("roof", "descent", "training", "training_candidates", "attention", "dense", "quality", "generation",
            "time_to_quality", "circulant")
UNTIMED = {"quality": "the shipped training logs", "time_to_quality": "the files `benchmarks/time_to_quality.py` writes",
           "training_candidates": "the file `benchmarks/variants.py` writes",
           "circulant": "the file `benchmarks/circulant.py` writes"}  # nothing timed here: read from these


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny settings (checks the script end to end in seconds)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="folder for bench.json and bench.md")
    p.add_argument("--recompute-quality", action="store_true", help="re-evaluate the shipped checkpoints")
    p.add_argument("--only", nargs="*", choices=SECTIONS,
                   help="run only these sections; they replace their part of an earlier full run's bench.json in --out")
    a = p.parse_args(argv)
    s = QUICK if a.quick else FULL
    if a.quick: MIN_TIME[0] = 0.005
    only = set(a.only or SECTIONS)
    r = dict(quick=a.quick, settings={k: v for k, v in s.items()}, goals=GOALS, machine=machine())
    t_start = time.perf_counter()
    log = lambda msg: print(f"[{time.perf_counter() - t_start:7.1f} s, load {load():5.2f}] {msg}", flush=True)
    if "roof" in only or "descent" in only:
        log("roof"); r["roof"] = bench_roof(s)
        log(f"  {r['roof']['roof_gflops']:.0f} GFLOP/s")
    if "descent" in only:
        log("descent"); r["descent"] = bench_descent(s, r["roof"]["roof_gflops"])
        for d in r["descent"]["rows"]:
            log(f"  {d['preset']}: {d['closed_form']['gflops']:.0f} GFLOP/s ({d['roof_fraction']:.0%}), "
                f"autograd {d['autograd_over_closed_form']:.2f}x")
        for k, v in r["descent"]["breakdown"].items():
            if isinstance(v, dict): log(f"    {k:16s} {v['s'] * 1e3:8.3f} ms {v['gflops']:7.1f} GFLOP/s")
    if "training" in only:
        log("training"); r["training"] = bench_training(s)
        t = r["training"]
        log(f"  speedup {t['speedup']:.2f}x, memory {t['temp_memory_ratio']:.1f}x, flat {t['project_flatness']:.2f}x")
    if "training_candidates" in only:
        r["training_candidates"] = bench_training_candidates(ROOT / "benchmarks" / "results")
    if "attention" in only:
        log("attention"); r["attention"] = bench_attention(s)
        for a_ in r["attention"]["rows"]: log(f"  N = {a_['N']}: taylor {a_['taylor_speedup']:.2f}x")
    if "dense" in only:
        log("dense"); r["dense"] = bench_dense(s)
        log(f"  {r['dense']['time_s'] * 1e3:.0f} ms, peak {_mib(r['dense']['peak_bytes'])}")
    if "quality" in only:
        log("quality"); r["quality"] = bench_quality(s, a.recompute_quality, a.quick)
    if "generation" in only:
        log("generation"); r["generation"] = bench_generation(a.quick)
        log(f"  cached / recomputed: {r['generation']['speedup']:.1f}x")
    if "time_to_quality" in only:
        r["time_to_quality"] = bench_time_to_quality(ROOT / "benchmarks" / "results")
    if "circulant" in only:
        r["circulant"] = bench_circulant(ROOT / "benchmarks" / "results")
    r["machine"]["load_end"] = load()
    r["wall_s"] = time.perf_counter() - t_start
    bad = _finite(r)
    if bad: print(f"warning: non-finite values at {bad}", file=sys.stderr)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    prev = out / "bench.json"
    if only != set(SECTIONS) and prev.is_file():  # refresh these sections of an earlier full run
        old = json.loads(prev.read_text())
        if old.get("quick") == a.quick and all(k in old or k in only for k in SECTIONS):
            updated = {k: r[k] for k in SECTIONS if k in r and k in only}
            old.update(updated)
            old.setdefault("updates", []).append(dict(sections=sorted(updated), **r["machine"]))
            r, only = old, set(SECTIONS)
    (out / "bench.json").write_text(json.dumps(r, indent=1, default=float) + "\n")
    md = markdown(r) if only == set(SECTIONS) else "partial run (--only): see bench.json\n"
    (out / "bench.md").write_text(md)
    print(md)
    log(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")


if __name__ == "__main__":
    main()
