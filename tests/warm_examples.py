"""The small warm-started image model of the warm-start and energy-block tests, and smooth example images for it."""
from dataclasses import replace

import jax
import jax.numpy as jnp
import numpy as np

from energy_transformer.image import ImageETConfig
from energy_transformer.patches import make_masks

WARM = replace(ImageETConfig.tiny(image_shape=(3, 28, 28)), start="harmonic", residual=True)  # 16 patches of 7 x 7
PT = WARM.patcher


def smooth_example(seed: int = 0, hidden: int = 7):
    "A smooth-ish random RGB image and a mask hiding `hidden` of its 16 patches"
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:28, :28] / 28
    wave = 0.3 * np.sin(3 * xx + rng.random((3, 1, 1)) * 6) * np.cos(2 * yy)
    image = np.clip(0.5 + wave + 0.05 * rng.random((3, 28, 28)), 0, 1)
    _, mask = make_masks(jax.random.key(seed), PT.N, hidden)
    return jnp.asarray(image, jnp.float32), mask
