"""The outputs of every shipped checkpoint on fixed inputs, and the file that stores them (tests/data/shipped_outputs.npz).

A refactoring of the library must leave each shipped model's outputs as they were: test_shipped_outputs compares them
with this file. After a deliberate change of a shipped model, write the file again:

    python tests/shipped_reference.py
"""
from __future__ import annotations

from pathlib import Path

import jax.numpy as jnp
import numpy as np

from energy_transformer.classify import ImageClassifier
from energy_transformer.image import ImageEnergyTransformer, TransformerMAE
from energy_transformer.pretrained import available_models, load_pretrained

REFERENCE = Path(__file__).resolve().parent / "data" / "shipped_outputs.npz"
N_IDS = 32  # characters given to a language model


def reference_output(model) -> np.ndarray:
    "One model's output on inputs fixed by its shape alone: an image model's fill, a classifier's logits, a text model's"
    rng = np.random.default_rng(0)
    if isinstance(model, (ImageEnergyTransformer, TransformerMAE)):
        image = rng.random(model.config.image_shape, dtype=np.float32)
        mask = jnp.arange(model.config.N) % 2 == 0  # every other patch hidden
        return np.asarray(model(jnp.asarray(image), mask)[0])
    if isinstance(model, ImageClassifier):
        return np.asarray(model.logits(jnp.asarray(rng.random(model.config.image_shape, dtype=np.float32))))
    V = len(model.config.chars)  # characters only (a masked model's MASK id is V)
    return np.asarray(model.logits(jnp.asarray(rng.integers(0, V, min(N_IDS, model.config.N)))))


def write(path: Path = REFERENCE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    outs = {name: reference_output(load_pretrained(name)) for name in available_models()}
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **outs)
    tmp.replace(path)  # atomic: a half-written file never replaces the reference
    print(f"{path}: {len(outs)} models")


if __name__ == "__main__":
    write()
