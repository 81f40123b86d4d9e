#!/usr/bin/env python
"""Time to quality: held-out quality against CPU seconds of training, for each task, each way of training its ET and
the parameter-matched transformer. One run per call, so that runs can be pinned to cores (`taskset -c 0 ...`):

    python -m benchmarks.training_methods --task image --method exact --seconds 240
    python -m benchmarks.training_methods --list

Every run gets the same CPU time (seconds of `time.process_time`, all threads of the process): its throughput is
probed on a short run, then a fresh model is trained with a full learning-rate schedule of as many steps as fit in
the budget (`equal_time.train_for_seconds`), evaluated at eight points (evaluation time is not counted). A result also
records the kernel's share of those seconds (`train_sys_s`) and the minor page faults (`page_faults`): a large share
means the steps paid for fresh memory, not for arithmetic.
- image: Fashion-MNIST inpainting, the shipped `fashion_mnist` recipe; masked MSE at 50% masking on validation
  images (the last 5,000 training images: 500 during training, 2,000 at the end), and on 2,000 test images once.
- language: the King James Bible, the shipped `kjv_ar` recipe at D = 128 and, for "exact", T = 4 (`LANGUAGE_WIDTH`,
  `LANGUAGE_T`; masked_language: the shipped `kjv_mlm`); bits per character
  (masked: of 15% masked characters) on 60,000 characters of the validation books during training and of the test
  books at the end. `--width` changes the ET's width, `--run-dir` saves the run to ship it and resumes it.
  long_language: the shipped `kjv_taylor` recipe (context 1,024); at the end also the bits per character on all the
  test books, the bits by context depth there and the Taylor heads' half-lives (`long_context`).
- classification: Fashion-MNIST, the shipped classifier's recipe (`--width` changes its D, with M = 4 D); validation
  accuracy on 2,000 validation images during training, on the whole validation split (`valid_all`) and all 10,000
  test images at the end.
Writes results/ttq/<task>__<method>__<seconds>.json with the machine it ran on; `benchmarks/run.py` collects them.
`--steps N` (natural_image, classification, the language tasks) trains exactly N steps instead, whatever they cost, for a
comparison at equal steps: results/equal_steps/<task>__<method>__<N>steps.json, not part of the equal-time tables.
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.equal_time import cpu_rate, load, machine, train_for_seconds
from energy_transformer.checkpoint import read_log, resolve_checkpoint
from energy_transformer.classify import (
    ClassifierConfig,
    ImageClassifier,
    PixelMLP,
    Split,
    accuracy,
    classification_splits,
    error_by_energy,
    fit_classifier,
    matched_transformer,
)
from energy_transformer.convnet import matched_convnet
from energy_transformer.core import EnergyTransformer, ETConfig, count_params
from energy_transformer.data import load_images, load_natural
from energy_transformer.evaluate import eval_set, evaluate
from energy_transformer.image import ImageEnergyTransformer, TransformerMAE, matched_mae
from energy_transformer.image_training import fastest_exact_path, masked_image_loss, preset, train_inpainting
from energy_transformer.language import CausalTransformer, MaskedTransformer
from energy_transformer.language import matched_transformer as matched_lm
from energy_transformer.language_training import context_profile, fit_language_model, kjv_alphabet, lm_evaluator, lm_preset
from energy_transformer.patches import keep_count, mask_count
from energy_transformer.pretrained import load_pretrained
from energy_transformer.text import kjv_splits
from energy_transformer.train import TrainConfig, trainable

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "benchmarks" / "results" / "ttq"
EQUAL_STEPS = RESULTS.parent / "equal_steps"  # runs of given steps (`--steps`), outside the equal-time tables
N_VALID = 5000


# ------------------------------------------------------------------------------------------------- image
def _image_setup():
    mc, task, tc = preset("fashion_mnist")
    task = replace(task, eval_size=500, final_eval_size=2000)
    train = load_images("fashion_mnist", "train")
    return mc, task, tc, (train[:-N_VALID], train[-N_VALID:])


def _fewer_steps(mc, T: int):
    "The image recipe `mc` with T descent steps and alpha scaled to keep the total step alpha T (alpha is not trained)"
    return replace(mc, T=T, alpha=mc.alpha * mc.T / T)


def _image_methods(mc):
    """name -> (description, model maker, phases): each phase is (fraction of the steps, `predict_tokens` keywords)."""
    et = lambda c: (lambda seed: ImageEnergyTransformer(c, key=jax.random.PRNGKey(seed)))
    mae = lambda c: (lambda seed: TransformerMAE(c, key=jax.random.PRNGKey(seed)))
    few = functools.partial(_fewer_steps, mc)
    return {
        "exact": (f"ET, T = {mc.T}, exact gradient (closed form + nested remat)", et(mc), [(1.0, ())]),
        "T=2": ("ET, T = 2, alpha x 4 (alpha T kept)", et(few(2)), [(1.0, ())]),
        "T=4": ("ET, T = 4, alpha x 2 (alpha T kept)", et(few(4)), [(1.0, ())]),
        "T curriculum": (f"ET, T = 2 for the first 3/4 of the steps, then T = {mc.T}", et(mc),
                         [(0.75, (("T", 2),)), (0.25, ())]),
        "truncated, then exact": (f"ET, T = {mc.T}: backprop through the last step only for 3/4 of the steps, "
                                  "then the exact gradient", et(mc), [(0.75, (("backprop_steps", 1),)), (0.25, ())]),
        "matched transformer": ("1 transformer block, the same parameter count", mae(matched_mae(mc)), [(1.0, ())]),
        "tied transformer": (f"1 transformer block applied {mc.T} times (weights shared): the ET's parameters and "
                             "depth", mae(replace(matched_mae(mc), repeat=mc.T)), [(1.0, ())]),
    }


def _grad_cosine(model, task, images, kw, seed=0) -> float:
    "Cosine between the parameter gradient of the masked loss with `predict_tokens` keywords `kw` and the exact one."
    n_chosen = mask_count(model.patcher.N, task.mask_ratio)
    params, static = eqx.partition(model, trainable(model))
    def grad(kw):
        loss = masked_image_loss(n_chosen, keep_count(n_chosen, task.keep), kw)
        g = eqx.filter_grad(lambda p: loss(eqx.combine(p, static), jnp.asarray(images), jax.random.PRNGKey(seed)))(params)
        return jnp.concatenate([x.ravel() for x in jax.tree.leaves(g)])
    a, b = grad(kw), grad(())
    return float(a @ b / (jnp.linalg.norm(a) * jnp.linalg.norm(b)))


def run_image(method: str, seconds: float) -> dict:
    mc, task, tc, (train_x, valid_x) = _image_setup()
    desc, make, phases = _image_methods(mc)[method]
    with tempfile.TemporaryDirectory() as tmp:
        def train(tc, kw=(), stop_at=None, resume=False):
            return train_inpainting(make(tc.seed), task, tc, data=(train_x, valid_x), progress=False, out=tmp,
                                    name="run", resume=resume, stop_at=stop_at, descend_kw=kw)
        rates = [cpu_rate(lambda tc, kw=kw, **k: train(tc, kw, **k), tc) for _, kw in phases]
        for f in Path(tmp).iterdir(): f.unlink()  # the probes' checkpoints
        steps = max(16, int(seconds / sum(f / r for (f, _), r in zip(phases, rates, strict=True))))
        tc_run = replace(tc, steps=steps, eval_every=max(1, steps // 8), log_every=max(1, steps // 40))
        ends = np.cumsum([f for f, _ in phases]) * steps
        for i, ((_, kw), end) in enumerate(zip(phases, ends, strict=True)):
            last = i == len(phases) - 1
            model, log = train(tc_run, kw, stop_at=None if last else int(end), resume=i > 0)
    test_x = load_images("fashion_mnist", "test")
    fx, fmask = eval_set(test_x, model.patcher.N, 2000, task.mask_ratio, seed=1)
    cos = {}
    kws = {kw for _, kw in phases if kw}  # the approximate phases
    for kw in kws:  # cosine to the exact gradient, at the start and at the end of training
        cos[str(dict(kw))] = dict(initial=_grad_cosine(make(tc.seed), task, valid_x[:tc.batch_size], kw),
                                  trained=_grad_cosine(model, task, valid_x[:tc.batch_size], kw))
    return dict(metric="masked_mse", lower_is_better=True, description=desc, phases=[[f, dict(kw)] for f, kw in phases],
                steps_per_cpu_s=[round(r, 3) for r in rates], log=log,
                valid=log["final"]["model"]["mse"], test=float(evaluate(model, fx, fmask)["mse"]),
                baselines={k: log["final"][k]["mse"] for k in ("mean_fill", "biharmonic")}, grad_cosine=cos,
                curve=[dict(step=e["step"], cpu_s=e["cpu_s"], value=e["mse"]) for e in log["evals"]], model=model)


# ----------------------------------------------------------------------------------------- natural photos
# natural_image: warm-started ETs of the recipe's parameter count, shaped otherwise: name -> (T, ETConfig fields, label)
WARM_VARIANTS = {"warm T=2, 8 heads, 128 memories": (2, dict(H=8, M=128), "twice the heads and half the memories"),
                 "warm T=2, 1 head of 64": (2, dict(H=1, Y=64), "1 head of 64"),
                 **{f"warm T=1, {k}": (1, v, k) for k, v in {
                     "attending to itself": dict(exclude_self=False), "2 heads of 32": dict(H=2, Y=32),
                     "1 head of 64": dict(H=1, Y=64), "2 heads of 64, 128 memories": dict(H=2, Y=64, M=128),
                     "2 heads of 32, attending to itself": dict(H=2, Y=32, exclude_self=False)}.items()}}


def _natural_methods(mc):
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
                               et(_fewer_steps(warm, T))) for T in (1, 2, 4)},
            **{name: (f"ET, warm start, T = {T}, {label} (the same parameter count)",
                      et(_fewer_steps(replace(warm, et=replace(warm.et, **fields)), T)))
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
    desc, make = _natural_methods(mc)[method]
    data = (load_natural("train"), load_natural("valid"))
    path, kw = exact_path(make(tc.seed), tc.batch_size)
    train = lambda tc, **k: train_inpainting(make(tc.seed), task, tc, data=data, progress=False, descend_kw=kw, **k)
    rate, final = _resumable(train, tc, run_dir, seconds, steps)
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


def _resumable(train, tc, run_dir: Path | None, seconds: float, steps: int | None = None) -> tuple[float | None, dict]:
    """(rate, keywords of the final training call) of a run of `seconds` CPU seconds (or of `steps` steps) saved in
    `run_dir` and resumed from it when started again: the probed rate (none for a run of given steps) and the budget
    are kept in `rate.json`, the run in `run.npz`/`run.json` (None: a run that saves nothing). A run is resumed only
    with the budget its step count was planned for."""
    if run_dir is None: return None, {}
    run_dir.mkdir(parents=True, exist_ok=True)
    rate_file, plan = run_dir / "rate.json", dict(seconds=seconds) if steps is None else dict(steps=steps)
    if rate_file.is_file():
        saved = json.loads(rate_file.read_text())
        was = dict(steps=saved["steps"]) if "steps" in saved else dict(seconds=saved.get("seconds", seconds))
        if was != plan:
            (k, v), = was.items()
            raise SystemExit(f"{run_dir} holds a run planned for {v:g} {'CPU seconds' if k == 'seconds' else k}; resume "
                             f"it with --{k} {v:g}, or give another --run-dir")
        rate = saved.get("steps_per_cpu_s")
    else:
        rate = cpu_rate(train, tc) if steps is None else None
        rate_file.write_text(json.dumps(dict(steps_per_cpu_s=rate, **plan)))
    return rate, dict(out=run_dir, name="run", resume=True)


# ---------------------------------------------------------------------------------------------- language
# long_language methods: how many softmax heads over the last 64 characters, and a floor on the taylor heads' half-lives
WINDOW_HEADS = {"window heads": (2, 0), "window heads 3": (3, 0), "window heads 3, half-lives >= 64": (3, 64),
                "window heads 3, half-lives >= 256": (3, 256)}


# The causal time-to-quality runs (`--task language`): kjv_ar's recipe at width D = 128 unless `--width` is given, with
# T = 4 descent steps for "exact" and kjv_ar's own T = 2 for "T=2", alpha T kept (alpha 1 and 2)
LANGUAGE_WIDTH, LANGUAGE_T = 128, {"exact": 4, "T=2": 2}


def language_config(method: str, width: int | None = None, preset: str = "kjv_ar"):
    """(model class, model configuration, training configuration) of a language method: the shipped recipe `preset`
    (`kjv_ar` causal, `kjv_mlm` masked), at width D = `width` (H = D / 32 heads of 32, M = 4 D memories) when given;
    the causal recipe at `LANGUAGE_WIDTH` otherwise, with the descent steps of `LANGUAGE_T`; "T=2" halves the descent
    steps of a recipe with T = 4 and doubles alpha (the masked recipe has T = 2 already); "window heads" makes the first
    two heads of a taylor recipe softmax heads over the last 64 characters ("window heads 3": the first three;
    "half-lives >= f": the taylor heads' decays floored); the matched transformer has the ET's parameter count"""
    cls, mc, tc = lm_preset(preset, kjv_alphabet())
    if preset == "kjv_ar": width, T = width or LANGUAGE_WIDTH, LANGUAGE_T.get(method)
    else: T = 2 if method == "T=2" else None
    if width: mc = replace(mc, et=replace(mc.et, D=width, H=width // 32, Y=32, M=4 * width))
    if T is not None and mc.T != T: mc = replace(mc, T=T, alpha=mc.alpha * mc.T / T)
    if method in WINDOW_HEADS:
        w, f = WINDOW_HEADS[method]  # the window of the shipped kjv_window recipe ("window heads 3" is that recipe)
        mc = replace(mc, et=replace(mc.et, window_heads=w, rel_pos=lm_preset("kjv_window", mc.chars)[1].et.rel_pos,
                                    min_half_life=f))
    if method == "matched transformer":
        cls, mc = (CausalTransformer if mc.objective == "ar" else MaskedTransformer), matched_lm(mc, L=1)
    return cls, mc, tc


def run_language(method: str, seconds: float, chars: int = 60_000, width: int | None = None,
                 run_dir: Path | None = None, evals: int = 8, preset: str = "kjv_ar", init: str | None = None,
                 lr: float | None = None, seed: int | None = None, steps: int | None = None) -> dict:
    """One language run (as many steps as fit in `seconds`, or exactly `steps`). With `run_dir`, the run saves its state
    there (`run.npz`, `run.json`) at each evaluation and resumes from it when started again with the same arguments (the
    probed rate is kept in `rate.json`), so the trained model stays there to be shipped (`tools/ship_checkpoint.py`).
    With `init` (a shipped name or a checkpoint of this method's model) the run continues that model under a new
    schedule (peak `lr`, data order `seed`); its log keeps the earlier run's in `meta.previous`."""
    splits = kjv_splits()
    cls, mc, tc = language_config(method, width, preset)
    tc = replace(tc, **{k: v for k, v in dict(lr=lr, seed=seed).items() if v is not None})
    start, meta = None, None
    if init is not None:
        start = load_pretrained(init)
        if type(start) is not cls:
            raise SystemExit(f"--init {init} holds a {type(start).__name__}, not this method's {cls.__name__}")
        previous = {k: v for k, v in read_log(resolve_checkpoint(init)).items() if k != "meta"}
        mc, meta = start.config, dict(previous=previous, init=str(init))
    methods = {"exact": f"ET, T = {mc.T}, exact gradient", "T=2": f"ET, T = 2, alpha {mc.alpha:g}",
               **{m: f"ET, T = {mc.T}, heads 0-{w - 1} softmax over the last 64 characters, the others taylor"
                     + (f" with half-lives >= {f}" if f else "") for m, (w, f) in WINDOW_HEADS.items()},
               "matched transformer": "1 transformer block, the same parameter count"}
    train = lambda tc, **k: fit_language_model(cls, mc, tc, progress=False, valid_chars=chars, test_chars=chars,
                                               init=start, meta=meta, **k)
    rate, final = _resumable(train, tc, run_dir, seconds, steps)
    model, log, rate = train_for_seconds(train, tc, seconds, rate, evals=evals, steps=steps, **final)
    return dict(metric="bpc", lower_is_better=True, description=methods[method] + (f", D = {width}" if width else ""),
                steps_per_cpu_s=[round(rate, 3)], log=log, valid=log["evals"][-1]["bpc"],
                test=lm_evaluator(splits["test"], mc, chars)(model)["bpc"],
                curve=[dict(step=e["step"], cpu_s=e["cpu_s"], value=e["bpc"], test=e["test_bpc"]) for e in log["evals"]],
                model=model, **(long_context(model, splits["test"]) if preset == "kjv_taylor" else {}))


def long_context(model, test: str) -> dict:
    """What a long-context run's model makes of its context (page 09 compares them with the shipped `kjv_window`): its bits
    per character on all of `test`, its bits by context depth there (`context_profile`) and its Taylor heads' half-lives
    (None for a transformer)"""
    t = model.et.half_lives if model_kind(model) == "ET" else None  # a transformer has no decay
    return dict(all_test_bpc=round(lm_evaluator(test, model.config)(model)["bpc"], 4), context=context_profile(model, test),
                half_lives=None if t is None else [round(float(x), 1) for x in t])


# ---------------------------------------------------------------------------------------- classification
def classification_config(method: str, width: int | None = None, stem: int | None = None,
                          patch: int | None = None) -> tuple[str, ClassifierConfig]:
    """(description, model configuration) of a classification method: the shipped classifier's recipe, at width
    D = `width` (M = 4 D memories; the transformer's MLP matched to the ET's parameter count), with a stem of
    `stem` feature maps (0: none) and patches of `patch` x `patch` pixels when given"""
    cfg = ClassifierConfig(patch_size=7, stem=8, et=ETConfig(D=96, H=4, Y=16, M=384), alpha=0.8, T=4)  # shipped recipe
    if width: cfg = replace(cfg, et=replace(cfg.et, D=width, M=4 * width))
    if stem is not None: cfg = replace(cfg, stem=stem)
    if patch is not None: cfg = replace(cfg, patch_size=patch)
    methods = {"exact": lambda: (f"ET, T = {cfg.T}, exact gradient", cfg),
               "T=2": lambda: ("ET, T = 2, alpha x 2", replace(cfg, T=2, alpha=1.6)),
               "matched transformer": lambda: ("1 transformer block (ViT), the same parameter count", matched_transformer(cfg)),
               "cnn": lambda: ("convolutional network (16, 32 feature maps), the same parameter count", cfg),
               "mlp": lambda: ("MLP on the pixels (one hidden layer), the same parameter count", cfg)}
    desc, c = methods[method]()
    return desc + (f", D = {width}" if width else ""), c


def run_classification(method: str, seconds: float, width: int | None = None, run_dir: Path | None = None,
                       evals: int = 8, steps: int | None = None, smoothing: float | None = None,
                       shift: int | None = None, stem: int | None = None, patch: int | None = None,
                       seed: int | None = None) -> dict:
    """One classification run of `classification_config(method, width)`: 24,000 steps of 128 images at peak learning
    rate 2e-3 (or as many as fit in `seconds`, or exactly `steps`), with random flips, and `fit_classifier`'s label
    `smoothing` and random `shift` when given; resumable in `run_dir`. `seed` (default 0) seeds the initialisation and
    the data order. "cnn" and "mlp": a `ConvNet` and a one-hidden-layer `PixelMLP` with as many parameters as the ET of
    the recipe."""
    desc, c = classification_config(method, width, stem, patch)
    tc = TrainConfig(steps=24_000, batch_size=128, lr=2e-3, eval_every=2000, log_every=50, seed=seed or 0)
    n_et = count_params(ImageClassifier(c, key=jax.random.key(0)))
    P = math.prod(c.image_shape)
    build = {"cnn": lambda key: matched_convnet(c, n_et, key=key),
             "mlp": lambda key: PixelMLP(c, hidden=round((n_et - c.K) / (P + 1 + c.K)), key=key)}.get(
                 method, lambda key: ImageClassifier(c, key=key))
    sp = classification_splits("fashion_mnist")
    sub = dict(sp, valid=type(sp["valid"])(sp["valid"].images[:2000], sp["valid"].labels[:2000]))
    aug = {k: v for k, v in dict(smoothing=smoothing, shift=shift).items() if v is not None}
    train = lambda tc, **k: fit_classifier(build(jax.random.key(tc.seed)), sub, tc, progress=False, **aug, **k)
    rate, final = _resumable(train, tc, run_dir, seconds, steps)
    model, log, rate = train_for_seconds(train, tc, seconds, rate, evals=evals, steps=steps, **final)
    return dict(metric="accuracy", lower_is_better=False, description=desc, steps_per_cpu_s=[round(rate, 3)], log=log,
                valid=log["evals"][-1]["valid_accuracy"], valid_all=accuracy(model, sp["valid"]),
                test=log["final"]["test_accuracy"],
                curve=[dict(step=e["step"], cpu_s=e["cpu_s"], value=e["valid_accuracy"]) for e in log["evals"]], model=model,
                **(energy_and_error(model, Split(sp["test"].images[:2000], sp["test"].labels[:2000]))
                   if model_kind(model) == "ET" else {}))


def energy_and_error(model: ImageClassifier, split: Split) -> dict:
    """How an ET classifier's final energy goes with its errors on `split` (page 06 shows the shipped model's):
    the error rate in each fifth of the images by final energy, lowest first, and the mean final energy per class"""
    logits, energies = model.descents(split.images)
    energy, right = energies[:, -1], logits.argmax(-1) == split.labels
    by_class = {name: round(float(energy[split.labels == c].mean()), 1) for c, name in enumerate(model.config.classes)}
    return dict(error_by_energy_fifth=[round(float(e), 4) for e in error_by_energy(energy, right)], class_energy=by_class)


TASKS = {"image": (run_image, lambda: list(_image_methods(preset("fashion_mnist")[0]))),
         "language": (run_language, lambda: ["exact", "T=2", "matched transformer"]),
         "masked_language": (functools.partial(run_language, preset="kjv_mlm"), lambda: ["T=2", "matched transformer"]),
         "long_language": (functools.partial(run_language, preset="kjv_taylor"),
                           lambda: ["exact", *WINDOW_HEADS, "matched transformer"]),
         "natural_image": (run_natural, lambda: list(_natural_methods(preset("natural")[0]))),
         "classification": (run_classification, lambda: ["exact", "T=2", "matched transformer", "cnn", "mlp"])}


def run_label(method: str, **options) -> str:
    """A run's name in its file and the tables: the method, and the options given that change its training
    (`run_label("warm T=1", lr=0.003, seed=None)` -> `warm T=1 (lr 0.003)`), so that such a run is not filed as the
    method's own. A starting model given as a path is named by its file name."""
    name = lambda v: f"{v:g}" if isinstance(v, float) else Path(str(v)).name
    given = ", ".join(f"{k} {name(v)}" for k, v in options.items() if v is not None)
    return f"{method} ({given})" if given else method


def model_kind(model) -> str:
    "`ET` if the model holds an Energy Transformer block (its descent is the token mixer), else `transformer`"
    is_et = lambda m: isinstance(m, EnergyTransformer)
    return "ET" if any(map(is_et, jax.tree_util.tree_leaves(model, is_leaf=is_et))) else "transformer"


def result_path(task: str, method: str, seconds: float | None, out: Path = RESULTS, width: int | None = None,
                steps: int | None = None) -> Path:
    """results/<task>__<method>[__D<width>]__<seconds>.json, or __<steps>steps.json for a run of given steps; the method
    with spaces as underscores and without the characters a file name cannot hold on every system (`=`, `>`, ...)"""
    budget = f"{steps}steps" if steps else f"{int(seconds)}"
    name = re.sub(r'[=<>:"/\\|?*]', "", method.replace(" ", "_"))
    return out / f"{task}__{name}{f'__D{width}' if width else ''}__{budget}.json"


TASK_OPTIONS = {"language": {"width", "run_dir", "evals", "init", "lr", "seed", "steps"},
                "natural_image": {"run_dir", "evals", "lr", "seed", "steps", "weight_decay"},
                "classification": {"width", "run_dir", "evals", "steps", "smoothing", "shift", "stem", "patch", "seed"}}


def parser() -> argparse.ArgumentParser:
    "The command line: a task, a method and its options"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=sorted(TASKS))
    ap.add_argument("--method", help="see --list")
    ap.add_argument("--seconds", type=float, default=240, help="CPU seconds of training")
    ap.add_argument("--out", help="folder of the result file (default results/ttq/, results/equal_steps/ with --steps)")
    ap.add_argument("--list", action="store_true", help="print the methods of each task")
    ap.add_argument("--width", type=int, help="language: the ET's width D (H = D / 32, M = 4 D); classification: D (M = 4 D)")
    ap.add_argument("--run-dir", type=Path, help="language, natural_image, classification: save the run there, resume it "
                                                 "when started again")
    ap.add_argument("--evals", type=int, default=8, help="language, natural_image, classification: evaluations during training")
    ap.add_argument("--init", help="language only: continue this shipped model or checkpoint under a new schedule")
    ap.add_argument("--lr", type=float, help="language, natural_image: peak learning rate (default: the recipe's)")
    ap.add_argument("--seed", type=int, help="language, natural_image, classification: seed of the data order "
                                                "(natural_image, classification: and of the initialisation)")
    ap.add_argument("--weight-decay", type=float, help="natural_image only: AdamW's weight decay (default: the recipe's)")
    ap.add_argument("--smoothing", type=float, help="classification only: label smoothing of the loss (fit_classifier)")
    ap.add_argument("--shift", type=int, help="classification only: random translations of up to this many pixels")
    ap.add_argument("--stem", type=int, help="classification only: feature maps of the stem (0: none; default the recipe's 8)")
    ap.add_argument("--patch", type=int, help="classification only: patch side in pixels (default the recipe's 7)")
    ap.add_argument("--steps", type=int, help="natural_image, classification, language tasks: train exactly this many steps, "
                                              "not as many as fit in --seconds (an equal-steps comparison; written to "
                                              "results/equal_steps/)")
    return ap


def main(argv=None):
    ap = parser()
    a = ap.parse_args(argv)
    if a.list:
        for t, (_, names) in TASKS.items(): print(t, ":", ", ".join(names()))
        return
    run, names = TASKS[a.task]
    if a.steps is not None and a.steps < 1: ap.error(f"--steps must be at least 1, got {a.steps}")
    if a.method not in names(): ap.error(f"unknown method {a.method!r} for {a.task}; choose from {names()}")
    stamp, t0 = machine(), time.time()
    opts = TASK_OPTIONS.get("language" if a.task.endswith("language") else a.task, set())
    if wrong := sorted(k for k in set().union(*TASK_OPTIONS.values()) - opts if getattr(a, k) != ap.get_default(k)):
        ap.error(f"--task {a.task} has no option {', '.join('--' + k.replace('_', '-') for k in wrong)}")
    r = run(a.method, a.seconds, **{k: getattr(a, k) for k in opts})
    model, log = r.pop("model"), r.pop("log")
    named = ("lr", "seed", "weight_decay", "init", "smoothing", "shift", "stem", "patch")  # the options that name a run
    label = run_label(a.method, **{k: getattr(a, k) for k in named if k in opts})
    seconds = None if a.steps else a.seconds   # a run of given steps has no CPU budget
    row = dict(task=a.task, method=label, kind=model_kind(model), start=getattr(model.config, "start", None),
               seconds=seconds, model=type(model).__name__, n_params=count_params(model),
               steps=log["train_config"]["steps"], train_cpu_s=round(log["train_cpu_s"], 1),
               train_sys_s=round(log["train_sys_s"], 1), page_faults=log["page_faults"],  # of train_cpu_s: the kernel's
               train_wall_s=round(log["train_time_s"], 1), **r,
               machine=dict(stamp, load_end=load(), run_wall_s=round(time.time() - t0, 1)))
    out = Path(a.out) if a.out else EQUAL_STEPS if a.steps else RESULTS
    path = result_path(a.task, label, seconds, out, a.width, a.steps)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(row, indent=1) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k not in ("curve", "machine")}), flush=True)


if __name__ == "__main__":
    main()
