"""Every way of computing the image ET's training gradient, against the exact one: the parameter gradient of the
package's masked-patch loss (`masked_image_loss`) with each `predict_tokens` option the training methods use."""
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.image_training import masked_image_loss
from energy_transformer.patches import keep_count, mask_count
from energy_transformer.train import trainable

T = 6


@pytest.fixture(scope="module")
def setup():
    mc = ImageETConfig.tiny(T=T, alpha=0.3)
    model = ImageEnergyTransformer(mc, key=jax.random.PRNGKey(0))
    images = jnp.asarray(np.random.default_rng(0).random((4, *mc.image_shape), dtype=np.float32))
    n = mask_count(mc.N, 0.5)
    params, static = eqx.partition(model, trainable(model))

    def grad(kw=()):
        loss = masked_image_loss(n, keep_count(n, 0.1), tuple(kw))
        g = jax.grad(lambda p: loss(eqx.combine(p, static), images, jax.random.PRNGKey(3)))(params)
        return jnp.concatenate([jnp.ravel(x) for x in jax.tree.leaves(g)])
    return grad


def cos(a, b): return float(a @ b / (jnp.linalg.norm(a) * jnp.linalg.norm(b)))


def test_exact_paths_agree(setup):
    "Closed form and autograd of the energy, with and without checkpointing: one gradient (the exact path)"
    exact = setup((("remat", False),))
    for kw in ((), (("autograd", True),), (("autograd", True), ("remat", False)), (("backprop_steps", T),)):
        g = setup(kw)
        assert float(jnp.linalg.norm(g - exact) / jnp.linalg.norm(exact)) < 2e-5, kw


@pytest.mark.parametrize("ks", [pytest.param((0, 1, T // 2, T), id="k=0,1,T/2,T"),
                                pytest.param(tuple(range(T + 1)), id="every k", marks=pytest.mark.slow)])
def test_truncated_gradient_cosine(setup, ks):
    "Backprop through the last k steps: an approximation whose cosine to the exact gradient reaches 1 at k = T"
    exact = setup()
    c = {k: cos(setup((("backprop_steps", k),)), exact) for k in ks}
    assert c[T] > 1 - 1e-6
    assert all(-1 <= v < 1 - 1e-4 for k, v in c.items() if k < T)  # an approximation, not the exact gradient
    assert c[0] < c[T // 2] < c[T]  # more of the descent differentiated: closer to the exact gradient
    assert c[1] > 0.3  # and even one step points the same way here


def test_fewer_steps_gradient(setup):
    "A phase of a T curriculum trains the same parameters through fewer steps: a different gradient, same direction"
    c = cos(setup((("T", 2),)), setup())
    assert 0 < c < 1 - 1e-4
