"Fast checks of energy_transformer.dense outside the notebook (the notebook holds the full tests)."
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from energy_transformer.dense import (
    ClassicalHopfield,
    ContinuousHopfield,
    ExponentialMemory,
    PolynomialMemory,
    recall_batch,
    stable_prefixes,
)
from energy_transformer.patterns import flip_bits, glyph_patterns, random_patterns


@pytest.fixture(scope="module")
def patterns():
    return random_patterns(jax.random.key(0), 10, 48)


def test_glyphs_are_binary_and_distinct():
    G = glyph_patterns("AB3", fonts=("DejaVuSans.ttf", "cmr10.ttf"), size=16)
    assert G.shape == (6, 256) and set(np.unique(G)) == {-1.0, 1.0}
    assert len(np.unique(G, axis=0)) == 6


@pytest.mark.parametrize("make", [ClassicalHopfield, lambda X: PolynomialMemory(X, n=3),
                                  lambda X: PolynomialMemory(X, n=4, rectified=True),
                                  lambda X: ExponentialMemory(X, beta=0.5)])
def test_async_recall_never_raises_energy(make, patterns):
    mem = make(patterns)
    cues = flip_bits(jax.random.key(1), patterns, 0.3)
    _, trace = recall_batch(mem, cues, sweeps=3)
    E = np.asarray(trace.energy)
    assert np.all(np.diff(E, axis=1) <= 1e-6 * np.abs(E[:, :-1]))
    assert np.all(E[:, -1] < E[:, 0])


def test_flip_energies_match_direct_differences(patterns):
    mem = PolynomialMemory(patterns, n=3)
    sigma = patterns[0] * jnp.where(jnp.arange(48) < 10, -1.0, 1.0)
    flipped = sigma[None] * (1 - 2 * jnp.eye(48))
    direct = jax.vmap(mem.energy)(flipped) - mem.energy(sigma)
    np.testing.assert_allclose(mem.flip_energies(sigma), direct, rtol=1e-4, atol=1e-6)


def test_stable_prefixes_agree_with_the_classical_network(patterns):
    st = np.asarray(stable_prefixes(patterns, 2))
    assert st[-1] == bool(jnp.all(ClassicalHopfield(patterns).flip_energies(patterns[0]) >= 0))


def test_continuous_update_is_softmax_attention():
    X = jax.random.normal(jax.random.key(3), (8, 5))
    Q = jax.random.normal(jax.random.key(4), (5, 8))
    hop = ContinuousHopfield(X, 0.9)
    ref = jax.nn.dot_product_attention(Q[:, None], X.T[:, None], X.T[:, None], scale=0.9, is_causal=True)[:, 0]
    causal = jnp.arange(5)[None, :] <= jnp.arange(5)[:, None]
    np.testing.assert_allclose(jax.vmap(hop.update)(Q, causal), ref, rtol=1e-5, atol=1e-6)


def test_bad_input_is_refused(patterns):
    with pytest.raises(ValueError, match="only -1 and \\+1"): ClassicalHopfield(patterns * 0.5)
    with pytest.raises(ValueError, match="degree n"): PolynomialMemory(patterns, n=1)
    with pytest.raises(ValueError, match="beta"): ExponentialMemory(patterns, beta=0.0)
    with pytest.raises(ValueError, match="length D=48"): ClassicalHopfield(patterns).energy(jnp.ones(47))
    with pytest.raises(ValueError, match="beta"): ContinuousHopfield(jnp.ones((3, 2)), beta=-1.0)
