"""Image ETs of several distinct energy blocks (`ImageETConfig.blocks`): each block descends its own energy T steps,
the next starts where it ended, and one block is the paper's model unchanged."""
from dataclasses import replace

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from warm_examples import PT, WARM, smooth_example

from energy_transformer.checkpoint import load_checkpoint, save_checkpoint
from energy_transformer.core import count_params
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig, decode_memories, descent_quality
from energy_transformer.image_training import preset
from energy_transformer.inpaint import inpaint_photo


def test_one_block_is_the_single_energy_model():
    "blocks = 1 keeps the paper's arrays (no block axis), so the shipped checkpoints load; old configs read as one block"
    one = ImageEnergyTransformer(WARM, key=jax.random.key(0))
    assert one.et.Wq.shape == (WARM.et.H, WARM.et.D, WARM.et.Y) and one.lnorm.gamma.shape == ()
    d = WARM.to_dict(); del d["blocks"]
    assert ImageETConfig.from_dict(d) == WARM
    four = ImageEnergyTransformer(replace(WARM, blocks=4), key=jax.random.key(0))
    assert four.et.Wq.shape == (4, WARM.et.H, WARM.et.D, WARM.et.Y) and four.lnorm.gamma.shape == (4,)
    # four blocks: four energies and layer norms, one embedding and decoder
    per_block = count_params((one.et, one.lnorm))
    assert count_params(four) - count_params(one) == 3 * per_block


def test_identical_blocks_equal_more_steps_of_one_block():
    "K copies of one block, T steps each, are K T steps down that block's energy"
    one = ImageEnergyTransformer(replace(WARM, T=3), key=jax.random.key(1))
    tile = lambda a: jnp.broadcast_to(a, (3, *a.shape))
    three = ImageEnergyTransformer(replace(WARM, T=1, blocks=3), key=jax.random.key(2))
    three = eqx.tree_at(lambda m: (m.embed, m.decoder, m.alpha, m.et, m.lnorm), three,
                        (one.embed, one.decoder, one.alpha, jax.tree.map(tile, one.et), jax.tree.map(tile, one.lnorm)))
    image, mask = smooth_example()
    tokens = PT.tokenify(image)
    np.testing.assert_allclose(three.predict_tokens(tokens, mask), one.predict_tokens(tokens, mask), atol=2e-6)


def with_memory(memory: str, **kw) -> ImageETConfig:
    "The warm test model with the given memory energy (`ETConfig.memory`) and fields"
    return replace(WARM, et=replace(WARM.et, memory=memory), **kw)


MEMORIES = pytest.mark.parametrize("memory", ["hopfield", "two_weight"])


@MEMORIES
def test_each_block_lowers_its_own_energy(memory):
    model = ImageEnergyTransformer(with_memory(memory, T=4, blocks=3), key=jax.random.key(3))
    record = eqx.filter_jit(lambda m, image, mask: m(image, mask, record=True)[1])
    for seed in range(3):
        tr = record(model, *smooth_example(seed, hidden=4 + 3 * seed))
        e, block = np.asarray(tr.e_total), np.asarray(tr.block)
        np.testing.assert_array_equal(block, np.repeat([0, 1, 2], 5))  # T + 1 records per block
        np.testing.assert_array_equal(np.asarray(tr.step), np.concatenate([np.arange(5) + 4 * k for k in range(3)]))
        for k in range(3):
            ek = e[block == k]
            assert (np.diff(ek) <= 1e-6 * np.abs(ek[:-1])).all(), (k, ek)
    images, masks = zip(*(smooth_example(s) for s in range(2)), strict=True)
    q = descent_quality(model, np.stack(images), np.stack(masks), T=4)
    assert q["monotone"] and q["mse"].shape == (15,)


@MEMORIES
def test_zero_steps_return_the_fill_and_known_pixels_never_change(memory):
    model = ImageEnergyTransformer(with_memory(memory, T=2, blocks=3), key=jax.random.key(4))
    image, mask = smooth_example()
    tokens, hidden = PT.tokenify(image), np.asarray(mask)
    zero = np.asarray(model.predict_tokens(tokens, mask, T=0))
    fill = np.asarray(model.start_fill(tokens, mask))
    np.testing.assert_array_equal(zero, np.where(hidden[:, None], fill, np.asarray(tokens)))
    assert np.abs(np.asarray(model.predict_tokens(tokens, mask)) - zero)[hidden].max() > 1e-3  # the blocks move them
    photo = np.asarray(jax.random.uniform(jax.random.key(5), (3, 63, 77)))
    r = inpaint_photo(model, photo, 0.5, seed=2, stride=7)
    known = ~np.asarray(PT.__class__((3, 63, 77), 7).pixel_mask(r["mask"]))
    np.testing.assert_array_equal(r["inpainted"][:, known], r["original"][:, known])
    assert np.isfinite(r["inpainted"]).all() and np.isfinite(r["mse"])


@MEMORIES
def test_a_stacked_model_round_trips_through_a_checkpoint(tmp_path, memory):
    model = ImageEnergyTransformer(with_memory(memory, blocks=2), key=jax.random.key(5))
    back = load_checkpoint(save_checkpoint(tmp_path / "m.npz", model), ImageEnergyTransformer)
    assert back.config == model.config
    for a, b in zip(jax.tree.leaves(model), jax.tree.leaves(back), strict=True): np.testing.assert_array_equal(a, b)
    assert decode_memories(back).shape == (2 * WARM.et.M, 3, 7, 7)


def test_stack_settings_are_checked_in_one_line():
    with pytest.raises(ValueError, match="blocks must be an int >= 1"): replace(WARM, blocks=0)
    with pytest.raises(ValueError, match="blocks must be an int >= 1"): replace(WARM, blocks=True)
    model = ImageEnergyTransformer(replace(WARM, blocks=2), key=jax.random.key(6))
    image, mask = smooth_example()
    with pytest.raises(ValueError, match="adaptive stop needs one energy"): model.predict_tokens_until(PT.tokenify(image), mask)


def test_the_shipped_stack_recipe_matches_the_single_block_parameter_count():
    """natural_stack: four blocks of one head of 16 and 64 memories, the parameter count of natural_warm plus, for each
    extra block, a layer norm (gain and D biases) and the energy's inverse temperature (an array, not trained)"""
    stack, warm = (ImageEnergyTransformer(preset(n)[0], key=jax.random.key(0)) for n in ("natural_stack", "natural_warm"))
    assert stack.config.blocks == 4 and stack.config.T == 1
    assert count_params(stack) - count_params(warm) == 3 * (1 + stack.config.et.D + 1)


def test_the_two_weight_recipe_matches_the_stack():
    """natural_two_weight: natural_stack with the two-weight memory, 31 hidden units a block (2 M D + M parameters
    each, against the stack's M D = 64 x 64), 1.1% fewer parameters in all; its attention initialises as the stack's"""
    tw, stack = (ImageEnergyTransformer(preset(n)[0], key=jax.random.key(0)) for n in ("natural_two_weight", "natural_stack"))
    assert tw.config.et.memory == "two_weight" and replace(tw.config, et=stack.config.et) == stack.config
    D = stack.config.et.D
    assert count_params(stack) - count_params(tw) == 4 * (D * 64 - (2 * 31 * D + 31))
    assert 0.01 < 1 - count_params(tw) / count_params(stack) < 0.012
    for a in ("Wq", "Wk"): np.testing.assert_array_equal(getattr(tw.et, a), getattr(stack.et, a))  # Xo: from a folded key
    assert tw.et.memory.Xo.shape == tw.et.memory.Xi.shape == (4, 31, D) and tw.et.memory.xb.shape == (4, 31)
    assert not hasattr(stack.et.memory, "Xo")
