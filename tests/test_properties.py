"""Property tests over the public entry points: drawn shapes, dtypes, ranges, empty and extreme values.

Every call either raises `ValueError` / `TypeError` with a one-line message, or returns a finite, correct result.
Examples are bounded (`max_examples`) so that the suite stays fast; shapes are small so that recompilation is cheap.
"""
import io
import math
from contextlib import redirect_stderr, redirect_stdout

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from PIL import Image

from energy_transformer.checkpoint import load_checkpoint, save_checkpoint
from energy_transformer.classify import (
    ClassifierConfig,
    ImageClassifier,
    classifier_features,
    load_classifier,
    novelty_path,
)
from energy_transformer.cli import et_classify, et_inpaint, read_image
from energy_transformer.core import EnergyLayerNorm, EnergyTransformer, ETConfig, descend
from energy_transformer.dense import ContinuousHopfield, ExponentialMemory, PolynomialMemory
from energy_transformer.evaluate import masked_mse, predict_images
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.inpaint import read_photo, region_patches
from energy_transformer.novelty import load_novelty
from energy_transformer.patches import Patcher, mask_count, random_masks

# derandomize: the same examples on every run, so that a red CI names a real regression, not a new draw. Sizes are
# drawn from a few values, edges included: every new shape compiles JAX's operations anew, values do not
FAST = settings(max_examples=10, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def finite_or_clear_error(f):
    "Call f: a ValueError/TypeError must have a one-line message; otherwise every output leaf must be finite."
    try: out = f()
    except (ValueError, TypeError) as e:
        msg = str(e)
        assert msg and "\n" not in msg, f"not a one-line message: {msg!r}"
        assert "Traceback" not in msg and "jax._src" not in msg
        return None
    for leaf in jax.tree.leaves(out):
        a = np.asarray(leaf)
        if a.dtype.kind in "fc": assert np.isfinite(a).all(), "non-finite output"
    return out


pm_one = lambda D: st.lists(st.sampled_from([-1.0, 1.0]), min_size=D, max_size=D)
betas = st.floats(1e-3, 1e5, allow_nan=False)


# ---- dense associative memories -------------------------------------------------------------------------------

@FAST
@given(K=st.sampled_from([1, 2, 6]), D=st.sampled_from([1, 11, 24]), beta=betas, seed=st.integers(0, 2**16))
@example(K=6, D=11, beta=3.0, seed=1)  # a flip energy of 8e3 out of terms of 1e14: float32 cancellation
def test_exponential_flip_energies_at_any_beta(K, D, beta, seed):
    rng = np.random.default_rng(seed)
    Xi, s = np.where(rng.random((K, D)) < 0.5, 1.0, -1.0), np.where(rng.random(D) < 0.5, 1.0, -1.0)
    lse = np.asarray(ExponentialMemory(Xi, beta=beta).flip_energies(s), np.float64)
    m, dm = Xi @ s, -2.0 * s[:, None] * Xi.T  # exact reference in float64: -(1/beta)(LSE(beta(m + dm)) - LSE(beta m))
    ref = -(np.logaddexp.reduce(beta * (m + dm), -1) - np.logaddexp.reduce(beta * m)) / beta
    assert np.isfinite(lse).all()
    np.testing.assert_allclose(lse, ref, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(ref).max()))
    direct = np.asarray(ExponentialMemory(Xi, beta=beta, form="exp").flip_energies(s), np.float64)
    assert not np.isnan(direct).any()
    with np.errstate(over="ignore", invalid="ignore"):  # float64 reference of -sum e^{beta m} (e^{beta dm} - 1)
        ref_direct = -(np.exp(beta * m) * np.expm1(beta * dm)).sum(-1)
        S = np.exp(beta * m).sum()
    ok = np.isfinite(ref_direct) & (np.abs(ref_direct) < 1e30)  # where float32 can hold it
    # forward-error bound of float32: the energy is S = sum e^{beta m}, formed from exponents of size beta |m|, so a
    # difference of two such energies is known to S * eps * beta |m| at best (the direct form is ill-conditioned)
    atol = 8 * np.finfo(np.float32).eps * S * max(1.0, beta * np.abs(m).max())
    np.testing.assert_allclose(direct[ok], ref_direct[ok], rtol=1e-3, atol=atol)


@FAST
@given(D=st.integers(1, 10), bad=st.sampled_from(["length", "values", "beta", "empty", "strings"]))
def test_binary_memory_bad_input(D, bad):
    Xi = np.ones((3, D))
    calls = {"length": lambda: PolynomialMemory(Xi, n=3).energy(jnp.ones(D + 1)),
             "values": lambda: PolynomialMemory(Xi, n=3).energy(jnp.full(D, 0.5)),
             "beta": lambda: ExponentialMemory(Xi, beta=-1.0),
             "empty": lambda: ExponentialMemory(np.ones((0, D))),
             "strings": lambda: ExponentialMemory([["a"] * D])}
    with pytest.raises((ValueError, TypeError)) as e: calls[bad]()
    assert "\n" not in str(e.value)


@FAST
@given(D=st.integers(1, 12), K=st.integers(1, 8), beta=st.one_of(betas, st.floats(1e5, 1e30)), scale=st.floats(0, 1e3),
       seed=st.integers(0, 2**16), n_allowed=st.integers(0, 8))
@example(D=16, K=8, beta=1e12, scale=1.0, seed=0, n_allowed=8)  # scores of ~1e13: a softmax of the scaled scores gave NaN
def test_continuous_hopfield_finite_or_refused(D, K, beta, scale, seed, n_allowed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(D, K)).astype(np.float32)
    hop, xi = ContinuousHopfield(X, beta=beta), (scale * rng.normal(size=D)).astype(np.float32)
    mask = np.zeros(K, bool); mask[rng.permutation(K)[:min(n_allowed, K)]] = True
    out = finite_or_clear_error(lambda: (hop.energy(xi, mask), hop.update(xi, mask)))
    assert (out is None) == (not mask.any())  # refused exactly when no pattern is allowed
    if out is None: return
    given = None if mask.all() else mask  # all allowed: no mask, the path without a `where` between product and softmax
    for E, new in (out, eqx.filter_jit(lambda h, x, m: (h.energy(x, m), h.update(x, m)))(hop, xi, given)):  # eager, compiled
        # log-sum-exp lies between the largest score and it plus log(allowed): E in [c - log(n)/beta, c] (float64)
        v = X[:, mask].T.astype(np.float64) @ xi; c = 0.5 * xi.astype(np.float64) @ xi - v.max()
        tol = 1e-5 * (0.5 * float(xi.astype(np.float64) @ xi) + np.abs(v).max() + 1)
        assert c - np.log(mask.sum()) / beta - tol <= float(E) <= c + tol, (float(E), c)
        lo, hi = X[:, mask].min(1), X[:, mask].max(1)  # the update is a convex combination of the allowed patterns
        assert np.all(np.asarray(new) >= lo - 1e-5 * (1 + np.abs(lo))) and np.all(np.asarray(new) <= hi + 1e-5 * (1 + np.abs(hi)))


# ---- the Energy Transformer -----------------------------------------------------------------------------------

et_configs = st.builds(lambda beta, attention, exclude_self, causal: ETConfig.small(beta=beta, attention=attention,
                                                                                   exclude_self=exclude_self, causal=causal),
                       st.floats(1e-3, 1e4), st.sampled_from(["softmax", "taylor"]), st.booleans(), st.booleans())


@FAST
@given(cfg=et_configs, N=st.sampled_from([1, 2, 9]), scale=st.floats(1e-3, 1e3), seed=st.integers(0, 2**16))
@example(cfg=ETConfig.small(beta=1.0), N=9, scale=1.0, seed=0)  # inside the comparison's range, for each kernel
@example(cfg=ETConfig.small(beta=1.0, attention="taylor", causal=True), N=9, scale=1.0, seed=1)
def test_energy_and_closed_form_gradient(cfg, N, scale, seed):
    et = EnergyTransformer(cfg, key=jax.random.key(seed))
    g = scale * jax.random.normal(jax.random.key(seed + 1), (N, cfg.D))
    e, grad = finite_or_clear_error(lambda: (et.energy(g), et.grad(g)))
    if cfg.beta_value * scale ** 2 <= 100:  # closed form == autograd where float32 keeps the digits
        auto = jax.grad(et.energy)(g)
        np.testing.assert_allclose(grad, auto, rtol=2e-3, atol=2e-3 * float(jnp.abs(auto).max() + 1))


@FAST
@given(beta=st.floats(1e4, 1e30), exclude_self=st.booleans(), causal=st.booleans(), rel_pos=st.sampled_from([0, 3]),
       N=st.sampled_from([2, 9]), scale=st.floats(1e-3, 1e3), seed=st.integers(0, 2**16))
@example(beta=1e9, exclude_self=False, causal=False, rel_pos=0, N=9, scale=1.0, seed=0)  # was NaN once compiled
def test_softmax_energy_finite_at_any_beta(beta, exclude_self, causal, rel_pos, N, scale, seed):
    "Compiled (no eager check to catch it), the softmax energy and its gradients stay finite however large beta is"
    cfg = ETConfig.small(beta=beta, exclude_self=exclude_self, causal=causal, rel_pos=rel_pos)
    et = EnergyTransformer(cfg, key=jax.random.key(seed))
    g = scale * jax.random.normal(jax.random.key(seed + 1), (N, cfg.D))
    out = eqx.filter_jit(lambda et, g: (et.energy(g), et.grad(g), jax.grad(et.energy)(g)))(et, g)
    assert all(np.isfinite(np.asarray(a)).all() for a in out)


@FAST
@given(shape=st.lists(st.integers(0, 5), min_size=0, max_size=4), D=st.sampled_from([31, 32, 33]))
def test_token_shapes_are_checked(shape, D):
    cfg = ETConfig.small()
    et, ln = EnergyTransformer(cfg, key=jax.random.key(0)), EnergyLayerNorm(cfg.D)
    x = jnp.ones((*shape, D))
    valid = len(shape) == 1 and shape[0] >= 1 and D == cfg.D
    for f in (lambda: et.energy(x), lambda: descend(et, ln, x, T=1)):
        out = finite_or_clear_error(f)
        assert (out is not None) == valid


@FAST
@given(dtype=st.sampled_from([np.int8, np.int32, np.uint8, np.float16, np.float32, np.float64, bool]),
       T=st.integers(0, 4), alpha=st.floats(0, 2), N=st.sampled_from([1, 6]), as_list=st.booleans())
def test_descend_any_numeric_input(dtype, T, alpha, N, as_list):
    cfg = ETConfig.small()
    et, ln = EnergyTransformer(cfg, key=jax.random.key(0)), EnergyLayerNorm(cfg.D)
    x = (np.random.default_rng(N).normal(size=(N, cfg.D)) * 3).astype(dtype)
    out = finite_or_clear_error(lambda: descend(et, ln, x.tolist() if as_list else x, alpha=alpha, T=T))
    assert out is not None and out.shape == (N, cfg.D)
    x_end, tr = descend(et, ln, x, alpha=alpha, T=T, every=1)
    np.testing.assert_allclose(x_end, out, rtol=1e-5, atol=1e-5)
    assert tr.step.tolist() == list(range(T + 1))


# ---- patches, masks and the metric -------------------------------------------------------------------------

@FAST
@given(C=st.sampled_from([1, 3]), p=st.integers(1, 4), h=st.integers(1, 4), w=st.integers(1, 4), seed=st.integers(0, 99))
def test_patcher_round_trip(C, p, h, w, seed):
    pt = Patcher((C, h * p, w * p), p)
    x = np.random.default_rng(seed).random((2, C, h * p, w * p)).astype(np.float32)
    tok = pt.tokenify(x)
    assert tok.shape == (2, h * w, C * p * p)
    np.testing.assert_array_equal(pt.untokenify(tok), x)
    mask = np.arange(h * w) % 2 == 0
    np.testing.assert_array_equal(pt.pixel_mask(mask).sum(), mask.sum() * p * p)


@FAST
@given(p=st.integers(1, 5), H=st.integers(1, 17), W=st.integers(1, 17), density=st.sampled_from([0.0, 0.05, 0.5, 1.0]),
       seed=st.integers(0, 99))
def test_region_patches_against_a_loop(p, H, W, density, seed):
    "A patch is hidden exactly when one of its pixels is in the region; pixels past the whole patches are ignored"
    region = np.random.default_rng(seed).random((H, W)) < density
    rows, cols = H // p, W // p
    expected = [region[i * p:(i + 1) * p, j * p:(j + 1) * p].any() for i in range(rows) for j in range(cols)]
    np.testing.assert_array_equal(region_patches(region, p), np.array(expected, bool).reshape(-1))
    if rows and cols:  # every region pixel inside the whole patches lies in a hidden patch
        covered = Patcher((1, rows * p, cols * p), p).pixel_mask(region_patches(region, p))
        assert not (region[:rows * p, :cols * p] & ~covered).any()


@FAST
@given(C=st.integers(0, 4), H=st.integers(0, 9), W=st.integers(0, 9), p=st.integers(-1, 5))
def test_patcher_bad_geometry(C, H, W, p):
    out = finite_or_clear_error(lambda: Patcher((C, H, W), p).N)
    assert (out is not None) == (C >= 1 and p >= 1 and H >= p and W >= p and H % p == 0 and W % p == 0)


@FAST
@given(N=st.integers(1, 200), ratio=st.floats(-0.5, 1.5), B=st.integers(1, 4))
def test_masks(N, ratio, B):
    out = finite_or_clear_error(lambda: random_masks(jax.random.key(0), B, N, ratio))
    if not 0 < ratio <= 1: assert out is None; return
    _, mask = out
    assert np.asarray(mask).sum(1).tolist() == [mask_count(N, ratio)] * B


@FAST
@given(B=st.integers(1, 4), N=st.integers(1, 6), Z=st.integers(1, 5), seed=st.integers(0, 999))
def test_masked_mse_against_numpy(B, N, Z, seed):
    rng = np.random.default_rng(seed)
    pred, target, chosen = rng.random((B, N, Z)), rng.random((B, N, Z)), rng.random((B, N)) < 0.5
    out = finite_or_clear_error(lambda: masked_mse(pred, target, chosen))
    if not chosen.any(1).all(): assert out is None; return
    ref = [((pred[b][chosen[b]] - target[b][chosen[b]]) ** 2).mean() for b in range(B)]
    np.testing.assert_allclose(out, ref, rtol=1e-6)


# ---- models, checkpoints and image files ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_image_model():
    return ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.key(0))


@FAST
@given(dtype=st.sampled_from([np.uint8, np.uint16, np.int32, np.float16, np.float32, np.float64]),
       hi=st.sampled_from([0.0, 1.0, 1.5, 255.0]), n=st.integers(0, 3), hide=st.floats(0, 1))
def test_image_model_inputs(tiny_image_model, dtype, hi, n, hide):
    m = tiny_image_model
    images = (np.random.default_rng(n).random((n, *m.patcher.image_shape)) * hi).astype(dtype)
    mask = np.random.default_rng(n + 1).random((n, m.patcher.N)) < hide
    out = finite_or_clear_error(lambda: predict_images(m, images, mask))
    ok = n >= 1 and np.dtype(dtype).kind == "f" and hi <= 1.0
    assert (out is not None) == ok, (dtype, hi, n)


@SLOW
@given(seed=st.integers(0, 2**16))
def test_checkpoint_round_trip(tmp_path_factory, seed):
    m = ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.key(seed))
    f = save_checkpoint(tmp_path_factory.mktemp("ck") / "m.npz", m)
    back = load_checkpoint(f, ImageEnergyTransformer)
    for a, b in zip(jax.tree.leaves(m), jax.tree.leaves(back), strict=True): np.testing.assert_array_equal(a, b)
    f.write_bytes(f.read_bytes()[: seed % 200])  # truncated
    assert finite_or_clear_error(lambda: load_checkpoint(f, ImageEnergyTransformer)) is None


def _image_file(path, mode, size, seed):
    "Write a test image of a PIL mode; return the grey values in [0, 1] it holds (None where lossy)"
    rng = np.random.default_rng(seed)
    H, W = size
    if mode == "I;16":
        a = rng.integers(0, 65536, (H, W)).astype(np.uint16)
        Image.fromarray(a).save(path); return a / 65535
    a = rng.integers(0, 256, (H, W, 3)).astype(np.uint8)
    im = Image.fromarray(a)
    if mode == "L": im = im.convert("L"); im.save(path); return np.asarray(im) / 255
    if mode == "RGBA": im.putalpha(255); im.save(path); return None
    if mode == "P": im.quantize(64).save(path); return None
    if mode == "CMYK": im.convert("CMYK").save(path.with_suffix(".tif")); return None
    im.save(path); return None


@SLOW
@given(mode=st.sampled_from(["L", "I;16", "RGB", "RGBA", "P", "CMYK"]), H=st.integers(1, 64), W=st.integers(1, 64),
       channels=st.sampled_from([1, 3]), seed=st.integers(0, 99))
def test_read_photo_any_mode(tmp_path_factory, mode, H, W, channels, seed):
    path = tmp_path_factory.mktemp("img") / "x.png"
    grey = _image_file(path, mode, (H, W), seed)
    if mode == "CMYK": path = path.with_suffix(".tif")
    a = read_photo(path, channels)
    assert a.shape == (channels, H, W) and a.dtype == np.float32 and a.min() >= 0 and a.max() <= 1
    if grey is not None: np.testing.assert_allclose(a[0], grey, atol=1e-6)


@SLOW
@given(mode=st.sampled_from(["L", "I;16", "RGBA", "P", "CMYK"]), size=st.sampled_from([(28, 28), (14, 17), (200, 90)]))
def test_et_classify_files(tmp_path_factory, mode, size):  # sizes from half the model's input (smaller are refused) up
    path = tmp_path_factory.mktemp("cls") / "x.png"
    _image_file(path, mode, size, 0)
    if mode == "CMYK": path = path.with_suffix(".tif")
    out = io.StringIO()
    with redirect_stdout(out): et_classify([str(path)])
    model = load_classifier("fashion_mnist_classifier")  # the command's default
    image = read_image(path, model.config.image_shape)[None]
    probs = model.predict_proba(image)[0]
    top3 = ", ".join(f"{model.config.classes[k]} ({probs[k]:.3f})" for k in np.argsort(-probs, kind="stable")[:3])
    line = out.getvalue().strip()
    assert line.split("; ")[0] == f"{path}: {top3}"  # the three most probable classes, most probable first
    flagged = bool(load_novelty(novelty_path("fashion_mnist_classifier")).flags(classifier_features(model, image))[0])
    assert ("; unlike the training images" in line) == flagged  # the shipped detector's verdict on the image read


@SLOW
@given(mode=st.sampled_from(["I;16", "RGBA", "P"]), ratio=st.floats(0.05, 0.95))
def test_et_inpaint_files(tmp_path_factory, mode, ratio):
    d = tmp_path_factory.mktemp("inp")
    _image_file(d / "x.png", mode, (40, 52), 1)
    out = io.StringIO()
    with redirect_stdout(out): et_inpaint(str(d / "x.png"), out=str(d / "o.png"), mask_ratio=ratio)
    nums = [float(w) for w in out.getvalue().replace("(", " ").split() if w.replace(".", "", 1).isdigit() and "." in w]
    assert len(nums) >= 4 and all(math.isfinite(v) and v >= 0 for v in nums), out.getvalue()
    assert Image.open(d / "o.png").size == Image.open(d / "x.png").size == (52, 40)  # the filled photo alone, at its own size


@pytest.mark.parametrize("bad", ["missing", "junk", "directory"])
def test_cli_bad_files(tmp_path, bad):
    path = {"missing": tmp_path / "no.png", "junk": tmp_path / "j.png", "directory": tmp_path}[bad]
    if bad == "junk": path.write_bytes(b"\x89PNG not really")
    for cli in (lambda: et_classify([str(path)]), lambda: et_inpaint(str(path), out=str(tmp_path / "o.png"))):
        err = io.StringIO()
        with redirect_stderr(err), pytest.raises(SystemExit) as e: cli()
        assert e.value.code != 0 and err.getvalue().count("\n") == 1 and str(path.name) in err.getvalue()


@FAST
@given(T=st.integers(0, 3), shape=st.sampled_from([(1, 28, 28), (28, 28), (2, 1, 28, 28), (1, 27, 28)]),
       dtype=st.sampled_from([np.uint8, np.float32]))
def test_classifier_inputs(T, shape, dtype):
    clf = ImageClassifier(ClassifierConfig(patch_size=7, et=ETConfig.small(), T=T), key=jax.random.key(0))
    x = (np.random.default_rng(0).random(shape) * (255 if dtype == np.uint8 else 1)).astype(dtype)
    out = finite_or_clear_error(lambda: clf.predict_proba(x))
    assert (out is not None) == (shape == (2, 1, 28, 28) and dtype == np.float32)
