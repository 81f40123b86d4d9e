"""Every attention kernel and every memory is a module that owns its parameters, position terms included, and needs to
give only its energy: a closed form of its gradient is an override, checked here against autograd's gradient of the
energy (the default that `AbstractAttention.grads` / `AbstractMemory.grad` give), with trained-looking position terms;
a causal kernel's own-term gradient and its generation rows agree with autograd too. Checkpoints of the earlier format,
which kept these arrays on the block, still load."""
from __future__ import annotations

import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import energy_transformer.softplus_attention  # noqa: F401 (defines the kernel "softplus")
from energy_transformer.attention import MixedAttention, TaylorAttention, WindowAttention
from energy_transformer.checkpoint import (
    CHECKPOINT_FORMAT,
    load_checkpoint,
    named_leaves,
    read_checkpoint,
    resolve_checkpoint,
    save_checkpoint,
)
from energy_transformer.core import EnergyTransformer, ETConfig
from energy_transformer.kernel import AbstractAttention, AutogradAttention, _named, kernel_class
from energy_transformer.memory import AbstractMemory, HopfieldMemory, TwoWeightMemory, memory_class
from energy_transformer.pretrained import load_pretrained

H, N, Y, BETA = 2, 20, 4, jnp.float32(0.6)
RNG = np.random.default_rng(0)
Q, K = (jnp.asarray(RNG.normal(size=(H, N, Y)), jnp.float32) for _ in range(2))
BIAS = jnp.asarray(0.3 * RNG.normal(size=(H, 7)), jnp.float32)  # b_h(d), d = -3..3
DECAY = jnp.asarray([0.5, 2.5], jnp.float32)  # logits of gamma


def kernels(causal: bool) -> dict[str, AbstractAttention]:
    "Every named kernel with a bias by offset where it takes one, taylor with a decay, window heads and mixed heads"
    ks = {}
    for name, cls in _named(AbstractAttention).items():
        ks[name] = cls(exclude_self=True, causal=causal) if name == "taylor" else \
            cls(exclude_self=True, causal=causal, pos_bias=BIAS)
    ks["taylor+decay"] = TaylorAttention(False, causal, decay=DECAY, floor=0.5)
    ks["window"] = WindowAttention(True, causal, 3, pos_bias=BIAS)
    ks["mixed"] = MixedAttention(False, causal, WindowAttention(False, causal, 3, pos_bias=BIAS[:1]),
                                 TaylorAttention(False, causal, decay=DECAY[1:]), 1)
    return ks


def test_every_named_kernel_is_here():
    assert set(_named(AbstractAttention)) == {"softmax", "taylor", "cosine", "softplus"}
    assert len(kernels(False)) == 7 and CLOSED == ["softmax", "taylor", "taylor+decay", "window", "mixed"]


CLOSED = [n for n, k in kernels(False).items() if not isinstance(k, AutogradAttention)]  # the kernels with closed forms


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", CLOSED)
def test_closed_form_gradient_is_autograds(name, causal):
    k = kernels(causal)[name]
    closed = eqx.filter_jit(lambda k, Q, K, b: k.grads(Q, K, b))(k, Q, K, BETA)
    auto = eqx.filter_jit(lambda k, Q, K, b: AbstractAttention.grads(k, Q, K, b))(k, Q, K, BETA)  # jax.grad of the energy
    for a, b in zip(closed, auto, strict=True):
        np.testing.assert_allclose(a, b, atol=2e-5 * float(jnp.abs(b).max()))
    np.testing.assert_allclose(k.energy(Q, K, BETA), k.energy_direct(Q, K, BETA), rtol=2e-5)


@pytest.mark.parametrize("name", list(kernels(False)))
def test_own_terms_and_generation_rows_are_autograds(name):
    "Causal: row C of prefix_dq is autograd's gradient of query C's own term; `extend` from `init_state` gives the rows"
    k = kernels(True)[name]
    dq = k.prefix_dq(Q, K, BETA)
    own = jax.grad(lambda q: k.prefix_energies(q, K, BETA).sum())(Q)
    np.testing.assert_allclose(dq, own, atol=2e-5 * float(jnp.abs(own).max()))
    np.testing.assert_allclose(k.prefix_energies(Q, K, BETA).sum(), k.energy(Q, K, BETA), rtol=2e-5)

    def step(state, p):
        row, state = k.extend(state, Q[:, p], K[:, p], p, BETA)
        return state, row
    rows = jax.lax.scan(step, k.init_state(H, N, Y), jnp.arange(N))[1].transpose(1, 0, 2)
    np.testing.assert_allclose(rows, dq, atol=2e-5 * float(jnp.abs(dq).max()))


def test_a_kernels_position_terms_are_its_own():
    "The position signal a kernel uses by default is its own: a different bias gives a different energy"
    k = kernels(False)["softmax"]
    other = type(k)(exclude_self=True, causal=False, pos_bias=BIAS + 1.0 * jnp.arange(7))
    assert abs(float(k.energy(Q, K, BETA) - other.energy(Q, K, BETA))) > 1e-3
    np.testing.assert_allclose(k.energy(Q, K, BETA), k.energy(Q, K, BETA, k.signal(N)), rtol=1e-6)


@pytest.mark.parametrize("cls", [HopfieldMemory, TwoWeightMemory])
def test_memory_closed_form_is_autograds(cls):
    m = cls.create(16, 8, key=jax.random.key(0))
    g = 2.0 * jax.random.normal(jax.random.key(1), (11, 8))
    np.testing.assert_allclose(m.grad(g), AbstractMemory.grad(m, g), atol=1e-5 * float(jnp.abs(m.grad(g)).max()))
    assert memory_class(cls.name) is cls


def test_a_new_kernel_is_found_by_name_and_composes():
    et = EnergyTransformer(ETConfig.small(attention="softplus", rel_pos=2), key=jax.random.key(0))
    assert type(et.attention) is kernel_class("softplus") and et.attention.pos_bias.shape == (2, 5)
    g = jax.random.normal(jax.random.key(2), (9, 32))
    np.testing.assert_allclose(et.grad(g), jax.grad(et.energy)(g), atol=1e-5)
    with pytest.raises(ValueError, match="ETConfig.attention must be one of .*got 'relu'"):
        ETConfig.small(attention="relu")


def test_checkpoints_keep_the_arrays_in_their_modules(tmp_path):
    "A new checkpoint names the arrays by their modules; a checkpoint of format 2 (on the block) still loads"
    et = EnergyTransformer(ETConfig.small(attention="taylor", decay=True, window_heads=1, rel_pos=4, memory="two_weight",
                                          H=3), key=jax.random.key(0))
    names = set(named_leaves(et))
    assert {"attention.local.pos_bias", "attention.far.decay", "memory.Xi", "memory.Xo", "memory.xb"} <= names
    header, arrays = read_checkpoint(save_checkpoint(tmp_path / "et.npz", et))
    assert header["format"] == CHECKPOINT_FORMAT and "model/memory.Xo" in arrays
    # the same model written as format 2 wrote it
    on_block = lambda k: k.split(".")[-1] if k.startswith(("attention.", "memory.")) else k  # `attention.far.decay` -> `decay`
    old = {"model/" + on_block(k.removeprefix("model/")): v for k, v in arrays.items()}
    old_header = dict(header, format="energy_transformer.checkpoint/2", arrays={k: list(v.shape) for k, v in old.items()})
    np.savez(tmp_path / "old.npz", header=np.array(json.dumps(old_header)), **old)
    back = load_checkpoint(tmp_path / "old.npz", EnergyTransformer)
    for a, b in zip(jax.tree.leaves(et), jax.tree.leaves(back), strict=True):
        np.testing.assert_array_equal(a, b)


def test_shipped_checkpoints_are_format_2_and_load():
    "The shipped files were written before the arrays moved: the shipped-output test loads every one of them"
    header, arrays = read_checkpoint(resolve_checkpoint("kjv_window"))
    assert header["format"] == "energy_transformer.checkpoint/2" and "model/et.pos_bias" in arrays
    m = load_pretrained("kjv_window")
    np.testing.assert_array_equal(m.et.attention.local.pos_bias, arrays["model/et.pos_bias"])
    np.testing.assert_array_equal(m.et.attention.far.decay, arrays["model/et.decay"])
