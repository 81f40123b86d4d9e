"""The natural_image task of `benchmarks.training_methods`: inpainting crops of natural photos under the shipped
`natural` recipe, one run of a variant of its ET (cold or warm start, fewer descent steps, other heads, stacked
energy blocks) or of a parameter-matched transformer, trained with the exact-gradient path `et-train` would choose."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import jax

from benchmarks.equal_time import train_for_seconds
from benchmarks.methods_image import fewer_steps
from benchmarks.methods_runs import resumable
from energy_transformer.crops import load_natural
from energy_transformer.evaluate import eval_set, evaluate
from energy_transformer.image import ImageEnergyTransformer, TransformerMAE, matched_mae
from energy_transformer.image_training import fastest_exact_path, preset, train_inpainting

# natural_image: warm-started ETs of the recipe's parameter count, shaped otherwise: name -> (T, ETConfig fields, label)
WARM_VARIANTS = {"warm T=2, 8 heads, 128 memories": (2, dict(H=8, M=128), "twice the heads and half the memories"),
                 "warm T=2, 1 head of 64": (2, dict(H=1, Y=64), "1 head of 64"),
                 **{f"warm T=1, {k}": (1, v, k) for k, v in {
                     "attending to itself": dict(exclude_self=False), "2 heads of 32": dict(H=2, Y=32),
                     "1 head of 64": dict(H=1, Y=64), "2 heads of 64, 128 memories": dict(H=2, Y=64, M=128),
                     "2 heads of 32, attending to itself": dict(H=2, Y=32, exclude_self=False)}.items()}}


def natural_methods(mc):
    """name -> (description, model maker): the natural-photo ET and its parameter-matched one-block transformer, hidden
    patches starting cold (the MASK token) or warm (the harmonic fill plus the MASK token, residual output)"""
    warm = replace(mc, start="harmonic", residual=True)
    head64 = replace(warm, et=replace(warm.et, H=1, Y=64))  # the warm recipe with one head of 64 (the same parameters)
    stack = preset("natural_stack")[0]  # four energy blocks of one step, one head of 16 and 64 memories each
    self_stack = replace(stack, et=replace(stack.et, exclude_self=False))
    et = lambda c: (lambda seed: ImageEnergyTransformer(c, key=jax.random.PRNGKey(seed)))
    mae = lambda c: (lambda seed: TransformerMAE(c, key=jax.random.PRNGKey(seed)))
    return {"cold": ("ET, hidden patches start as the MASK token", et(mc)),
            "warm": ("ET, hidden patches start from their harmonic fill; output = fill + what the descent adds", et(warm)),
            **{f"warm T={T}": (f"ET, warm start, T = {T}, alpha x {warm.T // T} (alpha T kept): more steps per CPU second",
                               et(fewer_steps(warm, T))) for T in (1, 2, 4)},
            **{name: (f"ET, warm start, T = {T}, {label} (the same parameter count)",
                      et(fewer_steps(replace(warm, et=replace(warm.et, **fields)), T)))
               for name, (T, fields, label) in WARM_VARIANTS.items()},
            "warm, 4 energy blocks": ("ET, warm start, four distinct energy blocks of one step each (one head of 16 and 64 "
                                      "memories per block: the same parameter count)", et(stack)),
            "warm, 4 two-weight energy blocks": ("ET, warm start, four energy blocks of one step each whose memory has weights "
                                                 "of its own in and out (`natural_two_weight`: 31 hidden units per block, "
                                                 "1.1% fewer parameters)", et(preset("natural_two_weight")[0])),
            "warm, 4 energy blocks, attending to itself": ("ET, warm start, four energy blocks of one step each, each token's "
                                                           "attention including itself", et(self_stack)),
            "matched transformer warm, 4 blocks": ("4 transformer blocks shaped like the 4 energy blocks (one head of 16), the "
                                                   "same parameter count, warm start", mae(matched_mae(stack, L=4))),
            "matched transformer": ("1 transformer block, the same parameter count, cold start", mae(matched_mae(mc))),
            "matched transformer warm": ("1 transformer block, the same parameter count, warm start", mae(matched_mae(warm))),
            "matched transformer warm, 1 head of 64": ("1 transformer block, the same parameter count, warm start, 1 head "
                                                       "of 64", mae(matched_mae(head64))),
            **{f"matched transformer warm, {label}values tied": (
                f"1 transformer block, the same parameter count, warm start, {label}values = keys and output = queries' "
                "projection transposed as in an energy step, the MLP wider", mae(matched_mae(c, tied_values=True)))
               for label, c in (("", warm), ("1 head of 64, ", head64))}}


def run_natural(method: str, seconds: float, run_dir: Path | None = None, evals: int = 8, lr: float | None = None,
                seed: int | None = None, steps: int | None = None, weight_decay: float | None = None) -> dict:
    """One natural-photo run: the shipped recipe (`preset("natural")`, peak learning rate `lr`, default 1e-3, seed `seed`
    of the initialisation and the data order, default the recipe's; AdamW's `weight_decay`, default the recipe's 0.05) on
    crops of all the training photos, masked MSE
    at 50% on 500 validation crops during training and 2,000 at the end, 2,000 test crops once;
    resumable in `run_dir` like the language runs. `steps` given: exactly that many training steps instead of as many
    as fit in `seconds` (an equal-steps comparison). An ET trains with the exact-gradient path that `et-train` would
    choose on this machine (`exact_path`), named in the result."""
    mc, task, tc = preset("natural")
    task, tc = replace(task, eval_size=500, final_eval_size=2000), replace(tc, lr=1e-3 if lr is None else lr)
    if seed is not None: tc = replace(tc, seed=seed)
    if weight_decay is not None: tc = replace(tc, weight_decay=weight_decay)
    desc, make = natural_methods(mc)[method]
    data = (load_natural("train"), load_natural("valid"))
    path, kw = exact_path(make(tc.seed), tc.batch_size)
    train = lambda tc, **k: train_inpainting(make(tc.seed), task, tc, data=data, progress=False, descend_kw=kw, **k)
    rate, final = resumable(train, tc, run_dir, seconds, steps)
    model, log, rate = train_for_seconds(train, tc, seconds, rate, evals=evals, steps=steps, **final)
    fx, fmask = eval_set(load_natural("test"), model.patcher.N, 2000, task.mask_ratio, seed=1)
    return dict(metric="masked_mse", lower_is_better=True, description=desc, steps_per_cpu_s=[round(rate, 3)], log=log,
                valid=log["final"]["model"]["mse"], test=float(evaluate(model, fx, fmask)["mse"]),
                baselines={k: log["final"][k]["mse"] for k in ("mean_fill", "biharmonic")},
                curve=[dict(step=e["step"], cpu_s=e["cpu_s"], value=e["mse"]) for e in log["evals"]], model=model,
                **({"gradient_path": path} if path else {}))


def exact_path(model, batch_size: int) -> tuple[str | None, tuple]:
    """The exact-gradient path `et-train` would train an image ET with (`fastest_exact_path`, timed here), as (name,
    `predict_tokens` keywords); (None, ()) for a transformer, which has no energy gradient to compute"""
    if not isinstance(model, ImageEnergyTransformer): return None, ()
    name, kw, _ = fastest_exact_path(model.config, batch_size, iters=2)
    return name, kw
