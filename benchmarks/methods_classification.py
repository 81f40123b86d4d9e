"""The classification task of `benchmarks.training_methods`: Fashion-MNIST under the shipped classifier's recipe, one
run of a way of training its ET or of a baseline of its parameter count (a ViT block, a convolutional network, an
MLP); an ET's run also reports how its final energy goes with its errors."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import jax

from benchmarks.equal_time import train_for_seconds
from benchmarks.methods_runs import model_kind, resumable
from energy_transformer.classify import (
    ClassifierConfig,
    ImageClassifier,
    PixelMLP,
    Split,
    classification_splits,
    matched_transformer,
)
from energy_transformer.classify_training import accuracy, error_by_energy, fit_classifier
from energy_transformer.convnet import matched_convnet
from energy_transformer.core import ETConfig, count_params, matching_width, params_of
from energy_transformer.train import TrainConfig


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
               "T=1": lambda: ("ET, T = 1, alpha 1", replace(cfg, T=1, alpha=1.0)),
               "T=1 two-weight": lambda: ("ET, T = 1, alpha 1, two-weight memory (M for the same parameter count)", two_weight(
                   replace(cfg, T=1, alpha=1.0))),
               "matched transformer": lambda: ("1 transformer block (ViT), the same parameter count", matched_transformer(cfg)),
               "cnn": lambda: ("convolutional network (16, 32 feature maps), the same parameter count", cfg),
               "mlp": lambda: ("MLP on the pixels (one hidden layer), the same parameter count", cfg)}
    desc, c = methods[method]()
    return desc + (f", D = {width}" if width else ""), c


def two_weight(cfg: ClassifierConfig) -> ClassifierConfig:
    "`cfg` with the two-weight memory, its M chosen (`matching_width`) for `cfg`'s parameter count"
    with_M = lambda M: replace(cfg, et=replace(cfg.et, memory="two_weight", M=M))
    return with_M(matching_width(lambda M: params_of(ImageClassifier, with_M(M)), params_of(ImageClassifier, cfg)))


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
    rate, final = resumable(train, tc, run_dir, seconds, steps)
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
