"""A batch gives each example the answer it gets alone: every attention kernel's energy, gradient and causal prefix
gradient under `jax.jit(jax.vmap(...))` against the same compiled function on one example at a time, at a context
(N = 1,024, 32 chunks of the causal sums) and batch (6) where XLA's CPU compiler once fused the decayed Taylor sums
wrongly for the 6th and later examples (a model's evaluation in batches of 32 then scored worse than its training)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from energy_transformer.attention import attention_kernel

H, N, Y, B = 6, 1024, 8, 6
GAMMA = jnp.asarray([0.48, 0.64, 0.77, 0.91, 0.987, 0.996], jnp.float32)  # a trained model's decays
BIAS = jnp.asarray(-0.01 * np.abs(np.arange(N)[:, None] - np.arange(N)[None]), jnp.float32)[None].repeat(H, 0)

CASES = [("taylor", True, GAMMA), ("taylor", False, GAMMA), ("taylor", True, None), ("taylor", False, None),
         ("softmax", True, BIAS)]


@pytest.mark.parametrize("kind,causal,pos", CASES,
                         ids=[f"{k}-{'causal' if c else 'bidirectional'}-{'none' if p is None else p.ndim}" for k, c, p in CASES])
def test_batched_equals_one_by_one(kind, causal, pos):
    rng = np.random.default_rng(0)
    Q, K = (jnp.asarray(0.3 * rng.normal(size=(B, H, N, Y)), jnp.float32) for _ in range(2))
    kernel = attention_kernel(kind, exclude_self=False, causal=causal)
    beta = 0.18
    functions = dict(energy=kernel.energy, grads=kernel.grads, **(dict(prefix_dq=kernel.prefix_dq) if causal else {}))
    for name, f in functions.items():  # each compiled on its own, as a model's forward pass compiles it
        one = functools.partial(lambda f, q, k: f(q, k, beta, pos), f)
        batched, alone = jax.jit(jax.vmap(one))(Q, K), jax.jit(one)
        for i in range(B):
            for a, b in zip(jax.tree.leaves(alone(Q[i], K[i])), jax.tree.leaves(batched), strict=True):
                err = float(jnp.abs(b[i] - a).max()) / (float(jnp.abs(a).max()) + 1e-6)
                assert err < 1e-5, f"{name}, example {i}: batched differs by {err:.2e} of its scale"
