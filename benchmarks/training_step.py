"""Section 3 of `run.py`: the training step, naive (autograd of autograd, no remat) vs the package's path (closed form
+ remat), where the shipped image recipe's step spends its time, and every candidate for a faster training gradient
(read from the file `benchmarks/variants.py` writes)."""
from __future__ import annotations

import json
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.descent import bench_breakdown
from benchmarks.equal_time import load
from benchmarks.timing import memory, timeit, timeit_interleaved
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.image_training import compiled_train_step, masked_image_loss, preset
from energy_transformer.patches import keep_count, mask_count
from energy_transformer.train import make_optimizer, make_train_step, trainable


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


# ------------------------------------------------------------------------- faster-gradient candidates
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
