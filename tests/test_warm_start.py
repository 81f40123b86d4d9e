"""The warm start of the image models: hidden patches start from the harmonic fill of their pixels, and a residual
output adds what the token mixing changes to that fill."""
from dataclasses import replace

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from warm_examples import PT, WARM, smooth_example

from energy_transformer.checkpoint import load_checkpoint, save_checkpoint
from energy_transformer.crops import load_natural
from energy_transformer.evaluate import harmonic_fill, harmonic_solve
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig, MAEConfig, TransformerMAE
from energy_transformer.inpaint import inpaint_photo

predict = eqx.filter_jit(lambda model, tokens, mask, T=None: model.predict_tokens(tokens, mask, T=T))  # T: static


@pytest.mark.parametrize("normalize", [False, True])
def test_zero_steps_return_the_harmonic_fill_exactly(normalize):
    model = ImageEnergyTransformer(replace(WARM, normalize=normalize), key=jax.random.key(1))
    image, mask = smooth_example()
    tokens = PT.tokenify(image)
    zero = eqx.filter_jit(lambda m, t, k: (m.predict_tokens(t, k, T=0), m.start_fill(t, k)))  # one program: the same fill
    out, fill = map(np.asarray, zero(model, tokens, mask))
    np.testing.assert_array_equal(out, np.where(np.asarray(mask)[:, None], fill, np.asarray(tokens)))
    # the model's fill is the classical harmonic fill (solved to a looser tolerance inside the model)
    classical = PT.tokenify(harmonic_fill(np.asarray(image), np.asarray(PT.pixel_mask(mask))))
    np.testing.assert_allclose(fill[np.asarray(mask)], classical[np.asarray(mask)], atol=2e-4)
    # and the descent moves the hidden pixels away from it
    assert np.abs(np.asarray(predict(model, tokens, mask)) - out)[np.asarray(mask)].max() > 1e-3


def test_energy_falls_along_the_warm_descent():
    model = ImageEnergyTransformer(replace(WARM, T=12), key=jax.random.key(2))
    record = eqx.filter_jit(lambda m, image, mask: m(image, mask, record=True)[1])
    for seed in range(3):
        image, mask = smooth_example(seed, hidden=4 + 3 * seed)
        tr = record(model, image, mask)
        e = np.asarray(tr.e_total)
        assert (np.diff(e) <= 1e-6 * np.abs(e[:-1])).all(), e


def test_hidden_pixels_are_never_read():
    "The fill and the descent see only the visible pixels: whatever lies under the mask changes nothing"
    model = ImageEnergyTransformer(WARM, key=jax.random.key(3))
    image, mask = smooth_example(1)
    tokens = PT.tokenify(image)
    scrambled = jnp.where(mask[:, None], 1 - tokens, tokens)
    np.testing.assert_array_equal(np.asarray(predict(model, tokens, mask)), np.asarray(predict(model, scrambled, mask)))


def test_known_pixels_never_change_on_a_whole_photo():
    model = ImageEnergyTransformer(WARM, key=jax.random.key(4))
    photo = np.asarray(jax.random.uniform(jax.random.key(5), (3, 63, 77)))
    r = inpaint_photo(model, photo, 0.5, seed=2, stride=7)
    known = ~np.asarray(PT.__class__((3, 63, 77), 7).pixel_mask(r["mask"]))
    np.testing.assert_array_equal(r["inpainted"][:, known], r["original"][:, known])
    assert np.isfinite(r["inpainted"]).all() and np.isfinite(r["mse"])


def test_the_matched_transformer_starts_warm_too():
    mc = MAEConfig.like(WARM)
    assert (mc.start, mc.residual) == ("harmonic", True)
    mae = TransformerMAE(replace(mc, L=1), key=jax.random.key(6))
    image, mask = smooth_example(2)
    tokens = PT.tokenify(image)
    def unmixed(m, t, k):  # the read-out of the initial state (no block applied), and the fill, in one program
        x0, base = m.initial_state(t, k)
        return m.readout(x0, x0, base), jnp.where(k[:, None], m.start_fill(t, k), t)
    np.testing.assert_array_equal(*map(np.asarray, eqx.filter_jit(unmixed)(mae, tokens, mask)))


def test_bad_settings_are_refused_in_one_line():
    with pytest.raises(ValueError, match="residual=True needs start='harmonic'"):
        replace(ImageETConfig.tiny(), residual=True)
    with pytest.raises(ValueError, match=r"start must be one of \('mask', 'harmonic'\)"):
        replace(ImageETConfig.tiny(), start="biharmonic")
    image, mask = smooth_example()
    tokens = PT.tokenify(image)
    cold = ImageEnergyTransformer(replace(WARM, start="mask", residual=False), key=jax.random.key(0))
    with pytest.raises(ValueError, match="takes no fill"):
        cold.predict_tokens(tokens, mask, fill=tokens)
    warm = ImageEnergyTransformer(WARM, key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"fill must have shape \(16, 147\)"):
        warm.predict_tokens(tokens, mask, fill=tokens[:3])


def test_a_warm_model_round_trips_through_a_checkpoint(tmp_path):
    model = ImageEnergyTransformer(replace(WARM, normalize=True), key=jax.random.key(7))
    path = save_checkpoint(tmp_path / "warm.npz", model)
    back = load_checkpoint(path, ImageEnergyTransformer)
    assert back.config == model.config
    image, mask = smooth_example(3)
    fill_in = eqx.filter_jit(lambda m, image, mask: m(image, mask)[0])
    np.testing.assert_array_equal(np.asarray(fill_in(back, image, mask)), np.asarray(fill_in(model, image, mask)))


def test_a_tied_transformer_round_trips_through_a_checkpoint(tmp_path):
    "A transformer without value and output projections saves and loads as one (its config says so)"
    model = TransformerMAE(MAEConfig(image_shape=(3, 28, 28), patch_size=PT.p, D=32, H=2, Y=8, M=48, L=1, tied_values=True),
                           key=jax.random.key(3))
    assert model.blocks[0].Wv is None and model.blocks[0].Wo is None
    back = load_checkpoint(save_checkpoint(tmp_path / "tied.npz", model), TransformerMAE)
    assert back.config.tied_values and back.blocks[0].Wv is None
    image, mask = smooth_example(4)
    np.testing.assert_array_equal(np.asarray(eqx.filter_jit(lambda m: m(image, mask))(back)),
                                  np.asarray(eqx.filter_jit(lambda m: m(image, mask))(model)))


def test_harmonic_start_of_a_hole_ringed_by_black_is_finite():
    """A training crop that is black around its hidden patches, with a faint glow in one corner: b of the harmonic
    system is almost zero, and conjugate gradients asked for a residual relative to it divided 0 by 0 when the crop was
    one of a jitted batch (training stopped on a non-finite loss). The fill is finite and obeys the maximum principle."""
    crop = load_natural("train", n=20000)[9905]  # the crop that stopped a run (seeded: the same crop on any machine)
    grid = ["01000100", "01111001", "00101011", "00100101", "10010000", "01111111", "01010100", "00010101"]
    hidden = np.kron(np.array([[c == "1" for c in row] for row in grid]), np.ones((4, 4), bool))  # its mask, 4 x 4 patches
    assert np.median(crop) == 0 and crop.max() > 0.5  # still that crop: mostly black, one bright corner
    both = np.asarray(jax.jit(jax.vmap(harmonic_solve, (0, None, None)))(jnp.stack([np.zeros_like(crop), crop]), hidden, 1e-5))
    assert np.isfinite(both).all()
    visible = crop[:, ~hidden]
    fill = both[1][:, hidden]
    assert (fill >= visible.min(1)[:, None] - 1e-6).all() and (fill <= visible.max(1)[:, None] + 1e-6).all()
    np.testing.assert_allclose(both[1], harmonic_fill(crop, hidden), atol=1e-5)  # the same fill as one picture alone
