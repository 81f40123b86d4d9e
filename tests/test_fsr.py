"""Frequency-selective reconstruction (`fsr_fill`, OpenCV contrib's xphoto) as one of the classical fills."""
import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
if not hasattr(cv2, "xphoto"): pytest.skip("OpenCV without its contrib modules (xphoto)", allow_module_level=True)

from energy_transformer.evaluate import CLASSICAL_FILLS, FSR_METHODS, available_fills, fsr_fill  # noqa: E402
from energy_transformer.inpaint import FILL_LABELS, classical_fills, inpaint_photo  # noqa: E402
from energy_transformer.pretrained import load_pretrained  # noqa: E402


def smooth_picture(C=3, side=32):
    "Slow waves and a ramp: a picture that a good fill restores almost exactly"
    y, x = np.mgrid[:side, :side] / side
    waves = [0.5 + 0.3 * np.sin(2 * np.pi * x), 0.5 + 0.3 * np.cos(2 * np.pi * y), 0.2 + 0.6 * x]
    return np.stack(waves[:C]).astype(np.float32)


def block_holes(side=32, blocks=((8, 8), (16, 20), (24, 4))):
    "4 x 4 holes at the given corners"
    m = np.zeros((side, side), bool)
    for i, j in blocks: m[i:i + 4, j:j + 4] = True
    return m


@pytest.mark.parametrize("method", FSR_METHODS)
def test_known_pixels_kept_exactly(method):
    rng = np.random.default_rng(0)
    pic = rng.random((3, 24, 40), dtype=np.float32)  # values that are not multiples of 1/255
    holes = rng.random((24, 40)) < 0.5
    out = fsr_fill(pic, holes, method)
    assert out.dtype == np.float32 and out.shape == pic.shape
    assert np.array_equal(out[:, ~holes], pic[:, ~holes])
    assert np.isfinite(out).all() and out.min() >= 0 and out.max() <= 1


@pytest.mark.parametrize("C", [1, 3])
@pytest.mark.parametrize("method", FSR_METHODS)
def test_below_the_mean_fill_on_a_smooth_picture(C, method):
    pic, holes = smooth_picture(C), block_holes()
    # the mean fill's error, by hand: each hidden pixel set to its channel's mean over the visible pixels
    means = pic[:, ~holes].mean(1)
    mean_err = float(((pic[:, holes] - means[:, None]) ** 2).mean())
    assert mean_err > 0.02  # the waves swing far from their mean
    fsr_err = float(((fsr_fill(pic, holes, method) - pic)[:, holes] ** 2).mean())
    assert fsr_err < mean_err / 20


def test_its_mask_is_the_hidden_pixels():
    "xphoto's own mask marks the known pixels; fsr_fill's pixel_mask, like every fill's, marks the hidden ones"
    pic, holes = smooth_picture(), block_holes()
    hidden_zeroed = np.where(holes, 0.0, pic).astype(np.float32)  # what is hidden is never read
    out = fsr_fill(hidden_zeroed, holes)
    assert float(np.abs(out - pic)[:, holes].max()) < 0.05  # filled from the visible waves, not from the zeros


def test_listed_everywhere_the_fills_are():
    assert {"fsr_fast", "fsr_best"} <= set(available_fills()) <= set(CLASSICAL_FILLS)
    assert FILL_LABELS["fsr_fast"] == "FSR fast" and FILL_LABELS["fsr_best"] == "FSR best"
    rng = np.random.default_rng(1)
    photo = np.clip(smooth_picture(side=64) + 0.02 * rng.standard_normal((3, 64, 64)), 0, 1).astype(np.float32)
    r = inpaint_photo(load_pretrained("natural_two_weight"), photo, 0.5, seed=0)
    fast = classical_fills(r)
    assert "FSR fast" in fast and "FSR best" not in fast  # the best mode only when asked: minutes on a photo
    both = classical_fills(r, fsr_best=True)
    assert list(both) == [FILL_LABELS[k] for k in FILL_LABELS]
    assert both["FSR fast"] < both["mean fill"] and both["FSR best"] < both["mean fill"]


def test_bad_input_is_one_line():
    pic, holes = smooth_picture(), block_holes()
    with pytest.raises(ValueError, match=r"^method must be one of \('fast', 'best'\), got 'slow'$"): fsr_fill(pic, holes, "slow")
    with pytest.raises(ValueError, match="pixel_mask must be boolean"): fsr_fill(pic, holes[:8])
    bad = pic.copy(); bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="image has 1 NaN or infinite visible pixels"): fsr_fill(bad, holes)
