#!/usr/bin/env python
"""Circulant query and key projections: parameters, speed and inpainting quality against dense ones.

    python -m benchmarks.circulant [--steps 1000] [--quick]

A circulant projection gives head h the D x Y matrix W_h[i, a] = c_h[(i - a) mod D]: the first Y columns of the
circulant matrix of one vector c_h of length D, so Q_h = g W_h is a circular cross-correlation of the token with
c_h (computable by FFT) and each head has D parameters instead of D x Y. The candidate keeps everything else of
the Fashion-MNIST image ET (`image_training.preset("fashion_mnist")`): it holds c_q and c_k and hands the
package's model the matrices they define, so both models run the same library code. Both are trained with
`train_inpainting` for the same number of steps and scored on the same held-out test images (masked MSE at 50%
masking). The projection itself is timed both ways: as a dense contraction and by FFT.

Writes results/circulant.json (circulant_quick.json with --quick).
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from benchmarks.equal_time import load
from benchmarks.timing import timeit
from energy_transformer.core import count_params
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.image_training import preset, train_inpainting

ROOT = Path(__file__).resolve().parents[1]


def circulant_columns(c: Float[Array, "H D"], Y: int) -> Float[Array, "H D Y"]:
    "W[h, i, a] = c[h, (i - a) mod D]: the first Y columns of each head's circulant matrix."
    D = c.shape[-1]
    return c[:, (jnp.arange(D)[:, None] - jnp.arange(Y)[None, :]) % D]


def circulant_project(g: Float[Array, "n D"], c: Float[Array, "H D"], Y: int) -> Float[Array, "H n Y"]:
    "g W_h for every head by FFT: Q[h, n, a] = sum_i g[n, i] c[h, (i - a) mod D], a circular cross-correlation."
    G, C = jnp.fft.rfft(g, axis=-1), jnp.fft.rfft(c, axis=-1)
    return jnp.fft.irfft(G[None] * jnp.conj(C)[:, None], n=g.shape[-1], axis=-1)[..., :Y]


class CirculantImageET(eqx.Module):
    "The package's image ET with its Wq and Wk given by circulant vectors c_q and c_k (H x D each)."
    inner: ImageEnergyTransformer  # Wq and Wk replaced by None: they are built from cq and ck
    cq: Float[Array, "H D"]
    ck: Float[Array, "H D"]

    def __init__(self, config: ImageETConfig, *, key):
        k1, k2, k3 = jax.random.split(key, 3)
        model = ImageEnergyTransformer(config, key=k1)
        D, H = config.et.D, config.et.H
        self.inner = eqx.tree_at(lambda m: (m.et.Wq, m.et.Wk), model, (None, None))
        # the dense init's entries have std 1/sqrt(D); the circulant ones are entries of c
        self.cq, self.ck = (jax.random.normal(k, (H, D)) / jnp.sqrt(D) for k in (k2, k3))

    @property
    def config(self) -> ImageETConfig: return self.inner.config

    @property
    def patcher(self): return self.inner.patcher

    def dense(self) -> ImageEnergyTransformer:
        "The package's model with the projections the circulant vectors define."
        Y = self.config.et.Y
        return eqx.tree_at(lambda m: (m.et.Wq, m.et.Wk), self.inner,
                           (circulant_columns(self.cq, Y), circulant_columns(self.ck, Y)), is_leaf=lambda x: x is None)

    def predict_tokens(self, tokens, mask, **kw): return self.dense().predict_tokens(tokens, mask, **kw)


def projection_speed(mc: ImageETConfig, n_tokens: int, repeats: int) -> dict:
    "Seconds for the query projection of n_tokens tokens: dense contraction vs FFT."
    e = mc.et
    g = jax.random.normal(jax.random.PRNGKey(0), (n_tokens, e.D))
    c = jax.random.normal(jax.random.PRNGKey(1), (e.H, e.D))
    W = circulant_columns(c, e.Y)
    dense = jax.jit(lambda g, W: jnp.einsum("nd,hdy->hny", g, W))
    fft = jax.jit(lambda g, c: circulant_project(g, c, e.Y))
    assert jnp.allclose(dense(g, W), fft(g, c), atol=1e-3), "FFT and dense circulant projections differ"
    td, tf = timeit(dense, g, W, repeats=repeats)["median_s"], timeit(fft, g, c, repeats=repeats)["median_s"]
    return dict(n_tokens=n_tokens, dense_s=td, fft_s=tf, fft_over_dense=tf / td)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    mc, task, tc = preset("tiny" if a.quick else "fashion_mnist")
    if not a.quick: mc, tc = ImageETConfig.fashion_mnist(), replace(tc, lr=2e-3)  # the paper-sized block (D 128, T 12) measured
    steps = 20 if a.quick else a.steps
    task = replace(task, eval_size=64 if a.quick else 500, final_eval_size=128 if a.quick else 2000)
    tc = replace(tc, steps=steps, eval_every=steps, log_every=max(1, steps // 20))
    rows = {}
    for name, make in (("dense", lambda: ImageEnergyTransformer(mc, key=jax.random.PRNGKey(tc.seed))),
                       ("circulant", lambda: CirculantImageET(mc, key=jax.random.PRNGKey(tc.seed)))):
        model, log = train_inpainting(make(), task, tc, progress=False)
        qk = count_params((model.et.Wq, model.et.Wk)) if name == "dense" else count_params((model.cq, model.ck))
        rows[name] = dict(n_params=count_params(model), qk_params=qk, steps=steps, train_s=round(log["train_time_s"], 1),
                          steps_per_s=steps / log["train_time_s"], test_masked_mse=log["final"]["model"]["mse"],
                          load=load())
        print(name, rows[name], flush=True)
    speed = projection_speed(mc, 64 * (mc.N + 1), 3 if a.quick else 7)
    print("projection", speed, flush=True)
    r = dict(preset="tiny" if a.quick else "fashion_mnist", batch=tc.batch_size, mask_ratio=task.mask_ratio,
             test_images=task.final_eval_size, models=rows, projection=speed)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    (out / ("circulant_quick.json" if a.quick else "circulant.json")).write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
