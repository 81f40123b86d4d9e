"""The `et-inpaint` command on real photos, folders and bad inputs (run as a subprocess, as a user would)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from skimage import data as skdata

from energy_transformer import cli, inpaint_files
from energy_transformer.core import ETConfig
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.inpaint import inpaint_photo


def _cmd() -> list[str]:
    exe = shutil.which("et-inpaint") or str(Path(sys.executable).parent / "et-inpaint")
    if Path(exe).exists(): return [exe]
    raise RuntimeError("the et-inpaint console script is not installed (pip install -e .)")


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run(_cmd() + [str(a) for a in args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    d = tmp_path_factory.mktemp("photos")
    Image.fromarray(skdata.chelsea()).save(d / "chelsea.png")            # RGB 300 x 451
    Image.fromarray(skdata.chelsea()[::2, ::2]).save(d / "chelsea_half.png")  # RGB 150 x 226: every fill in seconds
    Image.fromarray(skdata.camera()[::4, ::4]).save(d / "camera.png")     # grey 128 x 128
    rgba = np.dstack([skdata.coffee()[::4, ::4], np.full((100, 150), 200, np.uint8)])
    Image.fromarray(rgba, "RGBA").save(d / "coffee_rgba.png")
    Image.fromarray(skdata.chelsea()[:20, :40]).save(d / "tiny.png")      # smaller than one 32 x 32 window
    (d / "junk.png").write_bytes(b"this is not an image")
    return d


def _changed_patches(src: np.ndarray, out: np.ndarray, p: int = 4) -> np.ndarray:
    "Which p x p patches of the whole-patch area differ, after checking that nothing past them changed"
    H, W = src.shape[0] // p * p, src.shape[1] // p * p
    assert (src[H:] == out[H:]).all() and (src[:, W:] == out[:, W:]).all()  # the strips past the whole patches untouched
    diff = (src[:H, :W] != out[:H, :W]).reshape(H, W, -1).any(-1)
    return diff.reshape(H // p, p, W // p, p).any((1, 3))


def _check_filled(p, src: Path, out: Path, mode: str):
    "A random-mask run: the filled photo alone, in the photo's size and mode; about half of its patches changed"
    assert p.returncode == 0, p.stderr
    assert "masked MSE" in p.stdout
    mse = float(p.stdout.split("masked MSE ")[1].split()[0])
    assert 0 < mse < 0.05  # far better than random pixels (MSE ~0.17)
    a, b = Image.open(src), Image.open(out)
    assert (b.format, b.mode, b.size) == ("PNG", mode, a.size)
    changed = _changed_patches(np.asarray(a), np.asarray(b))
    assert 0.3 < changed.mean() < 0.51  # half of the patches hidden (a few filled with their own values), the rest as they were
    return np.asarray(a), np.asarray(b)


def _check_strip(p, out: Path, h: int, w: int):
    assert p.returncode == 0, p.stderr
    im = np.asarray(Image.open(out))
    assert im.shape == (h, 3 * w + 8, 3)  # masked | inpainted | original, 4-pixel gaps
    left, right = im[:, :w].astype(int), im[:, 2 * w + 8:].astype(int)
    grey = (left == 128).all(-1)
    assert 0.3 < grey.mean() < 0.7  # about half of the patches hidden in grey
    assert (left[~grey] == right[~grey]).all()  # visible pixels shown as they are


@pytest.fixture(scope="module")
def camera_runs(photos, tmp_path_factory):
    "The grey photo inpainted twice: seed 0 with the output's default name (beside the photo), and seed 1 with a progress bar"
    d = tmp_path_factory.mktemp("camera")
    src = d / "cam.png"; src.write_bytes((photos / "camera.png").read_bytes())
    return d, run(src), run(src, "--out", d / "seed1.png", "--seed", 1, "--progress")


def test_rgb_photo_filled_alone(photos, tmp_path):
    out = tmp_path / "o.png"
    _check_filled(run(photos / "chelsea_half.png", "--out", out, "--seed", 1), photos / "chelsea_half.png", out, "RGB")


def test_strip(photos, tmp_path):
    out = tmp_path / "o.png"
    p = run(photos / "camera.png", "--out", out, "--seed", 1, "--strip")
    _check_strip(p, out, 128, 128)  # grey shown in RGB
    assert "masked MSE" in p.stdout


def test_grey_and_rgba_keep_their_mode(photos, camera_runs, tmp_path):
    d, seed0, _ = camera_runs
    _check_filled(seed0, d / "cam.png", d / "cam_inpainted.png", "L")
    out = tmp_path / "coffee.out.png"
    src = photos / "coffee_rgba.png"
    a, b = _check_filled(run(src, "--out", out, "--mask-ratio", "0.5"), src, out, "RGBA")
    assert (a[..., 3] == b[..., 3]).all()  # the alpha channel as it was


def test_seed_changes_mask(camera_runs):
    d, a, b = camera_runs
    assert a.returncode == b.returncode == 0
    assert not np.array_equal(np.asarray(Image.open(d / "cam_inpainted.png")), np.asarray(Image.open(d / "seed1.png")))


def test_progress_bar_on_stderr_only(camera_runs):
    "--progress draws tqdm's bar of the windows on stderr; stdout keeps its one line; a small photo has no bar by default"
    _, plain, forced = camera_runs
    assert plain.stderr == ""  # 128 x 128 pixels: below PROGRESS_PIXELS
    assert forced.returncode == 0 and "cam.png: 100%" in forced.stderr and "window" in forced.stderr, forced.stderr
    assert len(forced.stdout.splitlines()) == 1 and forced.stdout.startswith("wrote ") and "%|" not in forced.stdout


def test_progress_bar_by_default_on_a_large_photo(photos, tmp_path, monkeypatch, capsys):
    """A photo over PROGRESS_PIXELS gets the bar without --progress (the threshold lowered here below the 128 x 128
    photo's 16,384 pixels, so that the test needs no megapixel photo); a photo under it gets none"""
    src = tmp_path / "cam.png"; src.write_bytes((photos / "camera.png").read_bytes())
    monkeypatch.setattr(inpaint_files, "PROGRESS_PIXELS", 16_384 - 1)
    cli.et_inpaint(str(src), out=str(tmp_path / "large.png"))
    out, err = capsys.readouterr()
    assert "cam.png: 100%" in err and out.startswith("wrote ") and "%|" not in out
    monkeypatch.setattr(inpaint_files, "PROGRESS_PIXELS", 16_384)
    cli.et_inpaint(str(src), out=str(tmp_path / "small.png"))
    assert capsys.readouterr().err == ""


def test_folder_with_mask_folder(photos, tmp_path):
    "A folder of two photos and a folder of masks by name: each photo filled under its mask and nowhere else, no score"
    pics, masks, out = tmp_path / "pics", tmp_path / "masks", tmp_path / "filled"
    pics.mkdir(); masks.mkdir()
    Image.fromarray(skdata.chelsea()[100:166, 150:233]).save(pics / "cat.jpg", quality=95)  # 66 x 83: not whole patches
    Image.fromarray(skdata.camera()[200:264, 300:364]).save(pics / "man.png")               # grey 64 x 64
    (pics / "readme.txt").write_text("not a photo")
    m_cat = np.zeros((66, 83), bool); m_cat[20:30, 30:45] = True; m_cat[60:, 75:] = True  # a hole; a corner past the patches
    m_man = np.zeros((64, 64), bool); m_man[5:15, 40:60] = True
    for name, m in (("cat", m_cat), ("man", m_man)):
        Image.fromarray(np.where(m, 255, 0).astype(np.uint8)).save(masks / f"{name}.png")
    p = run(pics, "--mask", masks, "--out", out)
    assert p.returncode == 0, p.stderr
    assert p.stderr == f"et-inpaint: warning: skipped 1 file that is not an image: {pics / 'readme.txt'}\n"
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and "MSE" not in p.stdout and "classical" not in p.stdout  # a user's mask: nothing to score against
    for line, (name, ext, m) in zip(lines, (("cat", "jpg", m_cat), ("man", "png", m_man)), strict=True):
        assert line.startswith(f"wrote {out / name}_inpainted.png: filled the {m.sum()} pixels under {masks / name}.png (")
        a, b = np.asarray(Image.open(pics / f"{name}.{ext}")), np.asarray(Image.open(out / f"{name}_inpainted.png"))
        assert a.shape == b.shape
        assert (a[~m] == b[~m]).all()  # every pixel outside the mask exactly as it was
        assert (a[m] != b[m]).reshape(m.sum(), -1).any(-1).mean() > 0.9  # those under it filled, the corner past the patches too
        assert (a[60:, 75:] != b[60:, 75:]).any() if name == "cat" else True


def test_one_mask_file_for_one_photo(photos, tmp_path):
    "A mask of the photo's size: the default output beside the photo, what it filled printed, no MSE"
    src = tmp_path / "cat.png"; src.write_bytes((photos / "chelsea.png").read_bytes())
    m = np.zeros((300, 451), np.uint8); m[100:140, 200:260] = 255
    Image.fromarray(m).save(tmp_path / "mask.png")
    p = run(src, "--mask", tmp_path / "mask.png")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"wrote {tmp_path / 'cat_inpainted.png'}: filled the 2400 pixels under {tmp_path / 'mask.png'} "
                               "(150 of 8400 patches hidden;") and "MSE" not in p.stdout, p.stdout
    a, b = np.asarray(Image.open(src)), np.asarray(Image.open(tmp_path / "cat_inpainted.png"))
    assert (a[m == 0] == b[m == 0]).all() and (a[m > 0] != b[m > 0]).any(-1).mean() > 0.9


def _bad_inputs(photos: Path, tmp: Path) -> dict[str, tuple[list, str]]:
    "Each mistake: (the command's arguments, what its one-line error says)"
    (tmp / "empty").mkdir(); (tmp / "texts").mkdir(); (tmp / "texts/a.txt").write_text("words")
    (tmp / "two").mkdir(); (tmp / "masks").mkdir()
    for n in ("a", "b"): Image.fromarray(skdata.camera()[:48, :48]).save(tmp / "two" / f"{n}.png")
    Image.fromarray(np.zeros((48, 48), np.uint8)).save(tmp / "masks/a.png")  # none for b
    Image.fromarray(np.zeros((64, 128), np.uint8)).save(tmp / "wrong.png")
    (tmp / "a-file").write_text("")
    cam = photos / "camera.png"
    return {
        "junk": ([photos / "junk.png"], "not a readable image"),
        "missing": ([photos / "missing.png"], "no such file or folder"),
        "a folder with a junk image": ([photos], "junk.png: not a readable image"),
        "empty folder": ([tmp / "empty"], "holds no image to inpaint: it is empty"),
        "folder of non-images": ([tmp / "texts"], "holds no image to inpaint (only 1 other file, such as a.txt)"),
        "tiny": ([photos / "tiny.png"], "smaller than the model's 32 x 32 window"),
        "ratio 0": ([cam, "--mask-ratio", "0"], "(0, 1)"),
        "ratio 1": ([cam, "--mask-ratio", "1"], "(0, 1)"),
        "ratio 1.5": ([cam, "--mask-ratio", "1.5"], "(0, 1)"),
        "checkpoint": ([cam, "--checkpoint", photos / "junk.png"], "not a readable checkpoint"),
        "mask of the wrong size": ([cam, "--mask", tmp / "wrong.png"], "is 64 x 128 pixels but the photo is 128 x 128"),
        "mask missing from the mask folder": ([tmp / "two", "--mask", tmp / "masks"], f"no mask for {tmp / 'two/b.png'} in"),
        "output below a file": ([cam, "--out", tmp / "a-file/o.png"], "--out: "),
        "output folder below a file": ([tmp / "two", "--out", tmp / "a-file/out"], "--out: cannot write in"),
        "an image name for several outputs": ([tmp / "two", "--out", tmp / "o.png"], "2 photos need a folder"),
        "output over the photo": ([cam, "--out", cam], "is the input photo"),
    }


BAD_INPUTS = ["junk", "missing", "a folder with a junk image", "empty folder", "folder of non-images", "tiny", "ratio 0",
              "ratio 1", "ratio 1.5", "checkpoint", "mask of the wrong size", "mask missing from the mask folder",
              "output below a file", "output folder below a file", "an image name for several outputs", "output over the photo"]


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_one_line_error(photos, tmp_path, case):
    cases = _bad_inputs(photos, tmp_path)
    assert sorted(cases) == sorted(BAD_INPUTS)
    args, message = cases[case]
    before = sorted(tmp_path.rglob("*"))
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stderr)  # a usage mistake: argparse's status
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("et-inpaint: error:") and message in lines[0], p.stderr
    assert sorted(tmp_path.rglob("*")) == before  # nothing written
    assert not p.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any folder")
def test_output_folder_not_writable(photos, tmp_path):
    locked = tmp_path / "locked"; locked.mkdir(); locked.chmod(0o500)
    try:
        p = run(photos / "camera.png", "--out", locked)
        assert p.returncode == 2 and p.stderr.count("\n") == 1
        assert p.stderr.startswith("et-inpaint: error: --out: cannot write in"), p.stderr
    finally: locked.chmod(0o700)


# --- overlapping windows against a slow reference -------------------------------------------------------------------

SMALL = ImageEnergyTransformer(ImageETConfig(image_shape=(3, 16, 16), patch_size=4, et=ETConfig.small(), T=2),
                               key=jax.random.PRNGKey(0))
_one_window = eqx.filter_jit(lambda model, image, mask: model(image, mask)[0])  # `model.__call__`, compiled once


def reference_fill(model, photo: np.ndarray, mask: np.ndarray, stride: int, power: float) -> np.ndarray:
    """One window and one hidden patch at a time: each hidden patch is the mean of the predictions of every window
    that holds it, weighted by (distance-to-border tent in rows x tent in columns) ** power; the rest is `photo`."""
    _, h, w = model.patcher.image_shape
    p, (_, H, W) = model.patcher.p, photo.shape
    starts = lambda L, n: sorted(set(range(0, L - n + 1, stride)) | {L - n})
    hidden = mask.reshape(H // p, W // p)
    num, den = np.zeros(photo.shape), np.zeros((H // p, W // p))
    for i in starts(H, h):
        for j in starts(W, w):
            win = hidden[i // p:(i + h) // p, j // p:(j + w) // p]
            pred = np.asarray(_one_window(model, jnp.asarray(photo[:, i:i + h, j:j + w]), jnp.asarray(win.reshape(-1))))
            for a, b in zip(*np.nonzero(win), strict=True):
                wt = (min(a + 1, h // p - a) * min(b + 1, w // p - b)) ** power
                num[:, i + a * p:i + (a + 1) * p, j + b * p:j + (b + 1) * p] += wt * pred[:, a * p:(a + 1) * p, b * p:(b + 1) * p]
                den[i // p + a, j // p + b] += wt
    out = photo.astype(np.float64).copy()
    for y, x in zip(*np.nonzero(hidden), strict=True):
        out[:, y * p:(y + 1) * p, x * p:(x + 1) * p] = np.clip(num[:, y * p:(y + 1) * p, x * p:(x + 1) * p] / den[y, x], 0, 1)
    return out


@settings(max_examples=10, deadline=None)
@given(H=st.integers(16, 35), W=st.integers(16, 35), stride=st.sampled_from([4, 8, 12, 16]),
       power=st.sampled_from([0, 1, 4]), seed=st.integers(0, 2**16), ratio=st.sampled_from([0.25, 0.5, 0.9]))
def test_overlapping_fill_matches_reference(H, W, stride, power, seed, ratio):
    photo = np.random.default_rng(seed).random((3, H, W), dtype=np.float32)
    r = inpaint_photo(SMALL, photo, ratio, seed, stride=stride, power=power)
    Hp, Wp = H // 4 * 4, W // 4 * 4
    want = reference_fill(SMALL, photo[:, :Hp, :Wp], r["mask"], stride, power)
    np.testing.assert_allclose(r["inpainted"], want, atol=2e-5)
    known = ~np.kron(r["mask"].reshape(Hp // 4, Wp // 4), np.ones((4, 4), bool))
    assert np.array_equal(r["inpainted"][:, known], photo[:, :Hp, :Wp][:, known])  # known pixels never change, bit for bit


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), stride=st.sampled_from([4, 8, 16]))
def test_hidden_pixels_are_not_read(seed, stride):
    rng = np.random.default_rng(seed)
    photo = rng.random((3, 28, 40), dtype=np.float32)
    r = inpaint_photo(SMALL, photo, 0.5, seed, stride=stride)
    pm = np.kron(r["mask"].reshape(7, 10), np.ones((4, 4), bool))
    other = np.where(pm, rng.random(photo.shape, dtype=np.float32), photo)  # new values under the hidden patches only
    np.testing.assert_array_equal(inpaint_photo(SMALL, other, 0.5, seed, stride=stride)["inpainted"], r["inpainted"])
