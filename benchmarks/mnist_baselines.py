#!/usr/bin/env python
"""The digit classifiers' baselines: a convolutional network and an MLP of the ET classifier's parameter count, trained
on MNIST with the digit ET's recipe (2,000 steps of 64 images, AdamW 2e-3, warm-up and cosine decay, no flips: a
mirrored digit is another symbol), into the section `mnist` of energy_transformer/checkpoints/classification_quality.json
beside `mnist_et` and `mnist_vit` (page 06's slow cell trains those two).

    python -m benchmarks.mnist_baselines
"""
from __future__ import annotations

import json
import math
from dataclasses import replace

import jax

from energy_transformer.checkpoint import checkpoint_dir, write_json
from energy_transformer.classify import (
    DIGIT_CLASSES,
    ClassifierConfig,
    ImageClassifier,
    PixelMLP,
    classification_splits,
)
from energy_transformer.classify_training import fit_classifier, quality_entry
from energy_transformer.convnet import matched_convnet
from energy_transformer.core import ETConfig, count_params
from energy_transformer.train import TrainConfig


def main():
    et_cfg = replace(ClassifierConfig(patch_size=7, stem=8, et=ETConfig(D=96, H=4, Y=16, M=384), alpha=0.8, T=4),
                     classes=DIGIT_CLASSES)  # the digit ET's configuration
    n_et = count_params(ImageClassifier(et_cfg, key=jax.random.key(0)))
    P = math.prod(et_cfg.image_shape)
    digits = classification_splits("mnist", n_valid=500)
    tc = TrainConfig(steps=2000, batch_size=64, lr=2e-3, eval_every=500, log_every=50)
    path = checkpoint_dir() / "classification_quality.json"
    for name, model in (("mnist_cnn", matched_convnet(et_cfg, n_et, key=jax.random.key(0))),
                        ("mnist_mlp", PixelMLP(et_cfg, hidden=round((n_et - et_cfg.K) / (P + 1 + et_cfg.K)),
                                               key=jax.random.key(0)))):
        model, log = fit_classifier(model, digits, tc, flip=False, progress=False)
        row = {**quality_entry(model, digits, log), "train_cpu_s": round(log["train_cpu_s"], 1)}
        q = json.loads(path.read_text())
        write_json({**q, "mnist": {**q["mnist"], name: row}}, path)
        print(name, json.dumps(row))


if __name__ == "__main__":
    main()
