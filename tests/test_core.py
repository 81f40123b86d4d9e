"Regression tests for energy_transformer.core (the notebook holds the full story)"
import itertools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from energy_transformer.core import EnergyLayerNorm, EnergyTransformer, ETConfig, TransformerBlock, descend

VARIANTS = list(itertools.product(("softmax", "taylor"), (True, False), (False, True)))


@pytest.mark.parametrize("attention,exclude_self,causal", VARIANTS)
def test_closed_form_matches_autograd(attention, exclude_self, causal):
    cfg = ETConfig.small(attention=attention, exclude_self=exclude_self, causal=causal)
    et = EnergyTransformer(cfg, key=jax.random.key(0))
    g = jax.random.normal(jax.random.key(1), (70, cfg.D))  # > one causal chunk
    a, b = eqx.filter_jit(lambda et, g: (et.grad(g), jax.grad(et.energy)(g)))(et, g)
    assert float(jnp.abs(a - b).max()) < 2e-6 * float(jnp.abs(b).max())


@pytest.mark.parametrize("exclude_self,causal", list(itertools.product((True, False), (False, True))))
def test_taylor_factorisation_matches_direct_sum(exclude_self, causal):
    cfg = ETConfig.small(attention="taylor", exclude_self=exclude_self, causal=causal)
    et = EnergyTransformer(cfg, key=jax.random.key(2))
    g = jax.random.normal(jax.random.key(3), (130, cfg.D))
    e1, e2 = eqx.filter_jit(lambda et, g: (et.attn_energy(g), et.attn_energy_direct(g)))(et, g)
    np.testing.assert_allclose(float(e1), float(e2), rtol=1e-5)


@pytest.mark.parametrize("leak", (False, True))
def test_descent_lowers_lyapunov_energy(leak):
    cfg = ETConfig.small()
    et, ln = EnergyTransformer(cfg, key=jax.random.key(0)), EnergyLayerNorm(cfg.D)
    x = jax.random.normal(jax.random.key(1), (16, cfg.D))
    _, tr = eqx.filter_jit(descend)(et, ln, x, alpha=0.05, T=20, leak=leak, every=1)
    e = np.asarray(tr.e_total, np.float64)
    assert (np.diff(e) <= 1e-5 * np.abs(e[:-1])).all() and e[-1] < e[0]


def test_bad_input():
    with pytest.raises(ValueError, match="beta"): ETConfig(beta=0.0)
    with pytest.raises(ValueError, match="attention"): ETConfig(attention="linear")
    cfg = ETConfig.small()
    et, ln = EnergyTransformer(cfg, key=jax.random.key(0)), EnergyLayerNorm(cfg.D)
    with pytest.raises(ValueError, match="31"): et.energy(jnp.ones((4, 31)))
    with pytest.raises(ValueError, match="31"): descend(et, ln, jnp.ones((4, 31)))
    with pytest.raises(ValueError, match="D=32"): TransformerBlock(32, 2, 16, 64, key=jax.random.key(0))(jnp.ones((4, 8)))
