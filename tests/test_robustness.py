"""Bad or extreme inputs that were once accepted silently or answered with a deep library error, and faults injected
into training: kill -9 while saving, Ctrl-C and SIGTERM, a full disk, two runs writing the same files.

Each is answered by a finite, correct result, a one-line `ValueError` / `TypeError` naming the problem, or (for a
fault) a whole checkpoint to resume from and one line saying so. The table of single calls is
`tests/adversarial_cases.py`.
"""
import contextlib
import errno
import io
import itertools
import json
import shutil
import signal
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from adversarial_cases import Line, Padded, line_batches, line_loss
from PIL import Image

from energy_transformer import checkpoint
from energy_transformer.checkpoint import read_checkpoint, read_log
from energy_transformer.cli import et_inpaint
from energy_transformer.core import EnergyLayerNorm, EnergyTransformer, ETConfig, descend
from energy_transformer.dense import ContinuousHopfield, ExponentialMemory
from energy_transformer.evaluate import masked_mse, predict_images
from energy_transformer.inpaint import read_photo
from energy_transformer.paper import load_paper_npz, paper_layout
from energy_transformer.pretrained import load_pretrained
from energy_transformer.train import TrainConfig, fit


def one_line_error(f, *match):
    with pytest.raises((ValueError, TypeError)) as e: f()
    msg = str(e.value)
    assert "\n" not in msg and all(m in msg for m in match), msg
    return msg


@pytest.fixture(scope="module")
def et_small():
    cfg = ETConfig.small()
    return EnergyTransformer(cfg, key=jax.random.key(0)), EnergyLayerNorm(cfg.D)


def test_01_sixteen_bit_png_inpaints_its_own_pixels(tmp_path):
    grey = np.linspace(0.1, 0.9, 48 * 64).reshape(48, 64)
    Image.fromarray((grey * 65535).round().astype(np.uint16)).save(tmp_path / "g16.png")
    Image.fromarray((grey * 255).round().astype(np.uint8)).save(tmp_path / "g8.png")
    np.testing.assert_allclose(read_photo(tmp_path / "g16.png", 1)[0], grey, atol=1e-5)  # not all white
    lines = {}
    for b in (8, 16):
        out = io.StringIO()
        with redirect_stdout(out): et_inpaint(str(tmp_path / f"g{b}.png"), out=str(tmp_path / f"o{b}.png"))
        lines[b] = out.getvalue()
    mse = {b: float(s.split("masked MSE ")[1].split()[0]) for b, s in lines.items()}
    assert mse[16] == pytest.approx(mse[8], rel=0.02, abs=1e-5), lines  # the same photo, so the same score (printed to 1e-5)


@pytest.mark.parametrize("form", ["logsumexp", "exp"])
@pytest.mark.parametrize("beta", [10.0, 45.0, 1e4])
def test_02_flip_energies_at_large_beta(form, beta):
    Xi = np.where(np.random.default_rng(0).random((5, 20)) < 0.5, 1.0, -1.0)
    s = Xi[0].copy(); s[:3] *= -1
    f = np.asarray(ExponentialMemory(Xi, beta=beta, form=form).flip_energies(s))
    assert not np.isnan(f).any()
    lse = np.asarray(ExponentialMemory(Xi, beta=beta).flip_energies(s))
    assert np.isfinite(lse).all()
    np.testing.assert_array_equal(f < 0, lse < 0)
    np.testing.assert_array_equal(lse[:3] < 0, True)  # flipping a corrupted bit back lowers the energy


def test_03_empty_hopfield_mask_is_refused():
    hop = ContinuousHopfield(np.eye(4, 3))
    one_line_error(lambda: hop.update(jnp.ones(4), jnp.zeros(3, bool)), "mask allows no pattern")
    with pytest.raises(Exception, match="mask allows no pattern"):  # under jit: a runtime error with the same message
        jax.jit(lambda x, m: hop.update(x, m))(jnp.ones(4), jnp.zeros(3, bool))
    one_line_error(lambda: hop.energy(jnp.ones(4), jnp.zeros(3, bool)), "mask allows no pattern")


def test_04_masked_mse_without_chosen_patch():
    one_line_error(lambda: masked_mse(np.ones((2, 3, 4)), np.zeros((2, 3, 4)), np.array([[1, 0, 0], [0, 0, 0]], bool)),
                   "no chosen patch", "1 of 2 images")


def test_05_integer_tokens_are_converted(et_small):
    et, ln = et_small
    np.testing.assert_allclose(descend(et, ln, np.ones((4, 32), np.int32), T=2), descend(et, ln, jnp.ones((4, 32)), T=2))


def test_06_lists_where_arrays_are_expected(et_small):
    et, ln = et_small
    x = np.random.default_rng(0).normal(size=(4, 32))
    np.testing.assert_allclose(et.energy(x.tolist()), et.energy(jnp.asarray(x, jnp.float32)), rtol=1e-6)
    np.testing.assert_allclose(descend(et, ln, x.tolist(), T=2), descend(et, ln, jnp.asarray(x, jnp.float32), T=2))
    one_line_error(lambda: et.energy([["a"] * 32]), "array of real numbers")


def test_07_uint8_images_are_refused():
    m = load_pretrained("fashion_mnist")
    img = np.full((1, 1, 28, 28), 200, np.uint8)
    mask = np.zeros((1, m.patcher.N), bool); mask[0, :8] = True
    one_line_error(lambda: predict_images(m, img, mask), "uint8", "255")
    one_line_error(lambda: m(jnp.asarray(img[0]), jnp.asarray(mask[0])), "uint8", "255")


def test_08_wrong_rank_names_the_rank(et_small):
    et, _ = et_small
    msg = one_line_error(lambda: et.energy(jnp.ones((2, 4, 32))), "rank 3", "jax.vmap")
    assert "32 != D = 32" not in msg


def test_09_paper_weights_messages(tmp_path):
    lay = paper_layout(D=8, H=2, Y=4, M=16, p=4, image_size=8)
    arrays = {k: np.zeros(s, np.float32) for k, s in lay.items()}
    np.savez(tmp_path / "w.npz", **{**arrays, "Wq": arrays["Wq"].reshape(2, -1)})
    one_line_error(lambda: load_paper_npz(tmp_path / "w.npz"), "Wq has shape (2, 32), expected 3 axes")
    np.savez(tmp_path / "e.npz", **{k: np.zeros((0,) * len(s), np.float32) for k, s in lay.items()})  # every array empty
    one_line_error(lambda: load_paper_npz(tmp_path / "e.npz"), "is empty (shape (0,")
    (tmp_path / "t.npz").write_text("hello")
    msg = one_line_error(lambda: load_paper_npz(tmp_path / "t.npz"), "not a .npz archive")
    assert "pickle" not in msg


def test_10_empty_inputs(et_small):
    et, ln = et_small
    one_line_error(lambda: descend(et, ln, jnp.ones((0, 32))), "no tokens")
    one_line_error(lambda: et.energy(jnp.ones((0, 32))), "no tokens")
    m = load_pretrained("fashion_mnist")
    one_line_error(lambda: predict_images(m, np.zeros((0, 1, 28, 28), np.float32), np.zeros((0, m.patcher.N), bool)),
                   "n >= 1")


def test_11_resumed_log_has_no_gap(tmp_path):
    def crashing(start):
        for s, b in zip(itertools.count(start), line_batches(start)):
            if s == 12: raise KeyboardInterrupt
            yield b

    tc = TrainConfig(steps=30, batch_size=8, lr=0.05, warmup=0.0, eval_every=7, log_every=5)
    model = Line(tc, key=jax.random.key(0))
    whole_m, whole = fit(model, line_loss, line_batches, tc, progress=False)
    with pytest.raises(KeyboardInterrupt, match="interrupted at step 12 of 30; the state is saved in"):
        fit(model, line_loss, crashing, tc, out=tmp_path, name="l", progress=False)
    assert json.loads((tmp_path / "l.json").read_text())["history"][-1]["step"] == 10  # 11 and 12 are pending
    again_m, again = fit(model, line_loss, line_batches, tc, out=tmp_path, name="l", resume=True, progress=False)
    assert [h["step"] for h in again["history"]] == [h["step"] for h in whole["history"]]
    np.testing.assert_allclose([h["loss"] for h in again["history"]], [h["loss"] for h in whole["history"]], rtol=1e-6)
    np.testing.assert_allclose(again_m.w, whole_m.w, rtol=1e-6)


# ---- fault injection: kill -9, Ctrl-C and SIGTERM, a full disk, two writers ------------------------------------

TESTS = Path(__file__).resolve().parent
RUN = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import jax
from adversarial_cases import Line, Padded, line_batches, line_loss
from energy_transformer.train import TrainConfig, TrainingInterrupted, fit
out, steps, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tc = TrainConfig(steps=steps, batch_size=8, lr=0.01, warmup=0.0, eval_every=every, log_every=every)
try: fit(Padded(tc, key=jax.random.key(0)), line_loss, line_batches, tc, out=out, name="run", progress=False)
except TrainingInterrupted as e: print(e, flush=True); sys.exit(130)
"""


def _tc(steps, every):
    return TrainConfig(steps=steps, batch_size=8, lr=0.01, warmup=0.0, eval_every=every, log_every=every)


@contextlib.contextmanager
def _started(tmp_path, steps, every, saved: bool):
    "A training run in another process, once it holds its lock (and with `saved`, has saved a checkpoint); killed after"
    p = subprocess.Popen([sys.executable, "-c", RUN, str(tmp_path), str(steps), str(every)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.time()
        while not ((tmp_path / "run.lock").exists() and (tmp_path / "run.npz").exists() >= saved):
            assert p.poll() is None, p.stderr.read()
            assert time.time() - t0 < 120, "the run did not start"
            time.sleep(0.05)
        yield p
    finally:
        if p.poll() is None: p.kill()
        p.wait()


def _resume(tmp_path, steps, every, **kw):
    return fit(Padded(_tc(steps, every), key=jax.random.key(0)), line_loss, line_batches, _tc(steps, every),
               out=tmp_path, name="run", resume=True, progress=False, **kw)


def test_12_kill_9_during_saves_leaves_a_whole_checkpoint(tmp_path):
    with _started(tmp_path, 10**6, 1, saved=True):  # a 24 MB checkpoint saved after every step: mostly saving
        time.sleep(0.3 + np.random.default_rng().random() * 0.5)  # then kill -9
    header, _ = read_checkpoint(tmp_path / "run.npz")  # complete: the old or the new file, never a half-written one
    try: assert read_log(tmp_path / "run.json")["history"][-1]["step"] == header["step"]
    except ValueError as e: assert "come from different saves" in str(e)  # killed between the two renames
    step = header["step"]
    model, log = _resume(tmp_path, 10**6, 1, stop_at=step + 2)  # the dead process's lock is taken over
    assert log["history"][-1]["step"] == step + 2 and not (tmp_path / "run.lock").exists()
    whole, _ = fit(Padded(_tc(10**6, 1), key=jax.random.key(0)), line_loss, line_batches, _tc(10**6, 1), progress=False,
                   stop_at=step + 2)
    np.testing.assert_allclose(model.w, whole.w, rtol=1e-6)  # resumed = never interrupted


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_13_signal_during_fit_saves_and_says_so(tmp_path, sig):
    with _started(tmp_path, 10**6, 10**5, saved=False) as p:  # no periodic save: the only one is at the signal
        p.send_signal(sig)
        out, err = p.communicate(timeout=120)
    step = read_checkpoint(tmp_path / "run.npz")[0]["step"]
    assert p.returncode == 130
    assert out.strip() == f"interrupted at step {step} of 1000000; the state is saved in {tmp_path / 'run.npz'}"
    assert "Traceback" not in err and not (tmp_path / "run.lock").exists()
    _, log = _resume(tmp_path, 10**6, 10**5, stop_at=step + 3)
    assert log["history"][-1]["step"] == step + 3


def test_14_disk_full_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    fit(Padded(_tc(10, 5), key=jax.random.key(0)), line_loss, line_batches, _tc(10, 5), out=tmp_path, name="run",
        progress=False, stop_at=5)

    def full(*args, **kw):
        def write(f):
            f.write(b"x" * 1000)
            raise OSError(errno.ENOSPC, "No space left on device")
        return write
    monkeypatch.setattr(checkpoint, "_checkpoint_writer", full)
    with pytest.raises(OSError, match=r"cannot save .*run.npz \(No space left on device\); its previous version is kept"):
        _resume(tmp_path, 10, 5)
    assert read_checkpoint(tmp_path / "run.npz")[0]["step"] == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "run.npz"]  # no temporary file, no lock


def test_15_two_writers(tmp_path):
    with _started(tmp_path, 10**6, 10**5, saved=False) as p:
        with pytest.raises(ValueError, match=rf"run.npz: another run \(process {p.pid} on .*\) is writing it"):
            _resume(tmp_path, 10**6, 10**5)
    assert (tmp_path / "run.lock").exists() and not (tmp_path / "run.npz").exists()  # killed: its lock stays behind
    _, log = _resume(tmp_path, 10**6, 10**5, stop_at=2)
    assert log["history"][-1]["step"] == 2 and not (tmp_path / "run.lock").exists()


def _command(*args) -> subprocess.Popen:
    exe = shutil.which(args[0]) or str(Path(sys.executable).parent / args[0])
    return subprocess.Popen([exe, *args[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(not Path("/usr/share/datasets/fashion-mnist").exists(), reason="needs the Fashion-MNIST files")
def test_16_ctrl_c_during_et_train(tmp_path):
    p = _command("et-train", "tiny", "--out", str(tmp_path), "--steps", "100000", "--quiet", "--eval-size", "16",
                 "--final-eval-size", "16", "--gradient", "closed form, nested remat")  # starts in seconds: small
    # baselines, and one gradient path named (a long run would first time the four, compiling each)
    t0 = time.time()
    while not (tmp_path / "tiny.lock").exists():
        assert p.poll() is None and time.time() - t0 < 120, p.stderr.read()
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    step = read_checkpoint(tmp_path / "tiny.npz")[0]["step"]
    assert p.returncode == 130 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == (f"et-train: interrupted at step {step} of 100000; the state is saved in "
                                            f"{tmp_path / 'tiny.npz'}; to continue, run the same command with --resume")


def test_17_ctrl_c_during_et_generate():
    p = _command("et-generate", "--prompt", "And God said", "--length", "20000", "--temperature", "0")
    assert p.stdout.read(20)  # it has started streaming
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err.strip() == "et-generate: interrupted"
