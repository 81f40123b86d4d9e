"""Training: resume exactness, checkpoint errors, patch round trips, the et-train command end to end; the adaptive stop."""
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jax
import numpy as np
import pytest

from energy_transformer.checkpoint import load_checkpoint, named_leaves, read_checkpoint, save_checkpoint
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.image_training import ImageTaskConfig, preset, train_inpainting
from energy_transformer.patches import Patcher
from energy_transformer.train import TrainConfig, load_train_state


def smooth_images(n, shape=(1, 28, 28), seed=0):
    "Random smooth images in [0, 1] (sums of a few low-frequency waves)."
    rng = np.random.default_rng(seed)
    C, H, W = shape
    y, x = np.mgrid[0:H, 0:W] / max(H, W)
    f = rng.uniform(0.5, 3, (n, C, 2, 1, 1)); ph = rng.uniform(0, 2 * np.pi, (n, C, 2, 1, 1))
    base = rng.uniform(0.2, 0.8, (n, 1, 1, 1))  # a brightness per image: learnable from the visible patches
    img = base + 0.1 * (np.sin(2 * np.pi * f[:, :, 0] * x + ph[:, :, 0]) + np.cos(2 * np.pi * f[:, :, 1] * y + ph[:, :, 1]))
    return img.astype(np.float32)


# ---------------------------------------------------------------- patches
@pytest.mark.parametrize("shape,p", [((1, 28, 28), 4), ((3, 32, 32), 4), ((3, 8, 12), 2), ((2, 6, 6), 6)])
def test_patcher_round_trips(shape, p):
    pt = Patcher(shape, p)
    x = np.random.default_rng(0).random((3, 2, *shape), dtype=np.float32)
    np.testing.assert_array_equal(pt.untokenify(pt.tokenify(x)), x)
    np.testing.assert_array_equal(pt.unpatchify(pt.patchify(x)), x)
    np.testing.assert_array_equal(pt.untokenify(pt.tokenify(x[0, 0])), x[0, 0])   # unbatched
    t = np.random.default_rng(1).random((5, pt.N, pt.Z), dtype=np.float32)
    np.testing.assert_array_equal(pt.tokenify(pt.untokenify(t)), t)                # the other way round
    assert pt.N == (shape[1] // p) * (shape[2] // p) and pt.Z == shape[0] * p * p


def test_patcher_token_layout():
    pt = Patcher((3, 8, 8), 4)
    x = np.arange(3 * 8 * 8, dtype=np.float32).reshape(3, 8, 8)
    np.testing.assert_array_equal(pt.tokenify(x)[1], x[:, 0:4, 4:8].reshape(-1))  # row-major grid, (c h w) inside


def test_patcher_errors():
    with pytest.raises(ValueError, match=r"28 x 30 \(height x width\) is not divisible by the patch size 4"):
        Patcher((1, 28, 30), 4)
    with pytest.raises(ValueError, match="patch size"): Patcher((1, 28, 28), 0)
    pt = Patcher((1, 28, 28), 4)
    with pytest.raises(ValueError, match=r"\(1, 28, 28\)"): pt.tokenify(np.zeros((1, 32, 32)))
    with pytest.raises(ValueError, match=r"\(49, 16\)"): pt.untokenify(np.zeros((48, 16)))


# ---------------------------------------------------------------- checkpoints
@pytest.fixture(scope="module")
def tiny_model():
    return ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.PRNGKey(3))


def test_checkpoint_round_trip(tmp_path, tiny_model):
    f = save_checkpoint(tmp_path / "a.npz", tiny_model, step=5)
    back = load_checkpoint(f, ImageEnergyTransformer)
    assert back.config == tiny_model.config
    for k, v in named_leaves(tiny_model).items(): np.testing.assert_array_equal(named_leaves(back)[k], v)
    assert [p.name for p in tmp_path.iterdir()] == ["a.npz"]          # atomic write leaves no temp file
    with np.load(f, allow_pickle=False) as z: assert all(z[k].dtype != object for k in z.files)


def test_checkpoint_truncated(tmp_path, tiny_model):
    f = save_checkpoint(tmp_path / "a.npz", tiny_model)
    raw = f.read_bytes()
    for n in (10, len(raw) // 2, len(raw) - 30):
        (tmp_path / "cut.npz").write_bytes(raw[:n])
        with pytest.raises(ValueError, match="cut.npz: not a readable checkpoint"):
            load_checkpoint(tmp_path / "cut.npz", ImageEnergyTransformer)
    (tmp_path / "junk.npz").write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="junk.npz"): load_checkpoint(tmp_path / "junk.npz", ImageEnergyTransformer)
    with pytest.raises(FileNotFoundError, match="nothere.npz"): load_checkpoint(tmp_path / "nothere.npz", ImageEnergyTransformer)


def test_checkpoint_shape_mismatch(tmp_path, tiny_model):
    f = save_checkpoint(tmp_path / "a.npz", tiny_model)
    header, arrays = read_checkpoint(f)
    # the config says a different D than the stored arrays have
    bad = json.loads(json.dumps(header)); bad["config"]["et"]["D"] = 2 * bad["config"]["et"]["D"]
    np.savez(tmp_path / "d.npz", header=np.array(json.dumps(bad)), **arrays)
    with pytest.raises(ValueError, match=r"d.npz: array 'model/.*' has shape .* but the configuration expects"):
        load_checkpoint(tmp_path / "d.npz", ImageEnergyTransformer)
    # an array whose shape disagrees with the header
    arrays2 = dict(arrays); arrays2["model/embed.pos"] = arrays["model/embed.pos"][:-1]
    np.savez(tmp_path / "p.npz", header=np.array(json.dumps(header)), **arrays2)
    with pytest.raises(ValueError, match="p.npz: array 'model/embed.pos' has shape"):
        load_checkpoint(tmp_path / "p.npz", ImageEnergyTransformer)
    # a missing array
    arrays3 = {k: v for k, v in arrays.items() if k != "model/et.memory.Xi"}
    h3 = json.loads(json.dumps(header)); del h3["arrays"]["model/et.memory.Xi"]
    np.savez(tmp_path / "m.npz", header=np.array(json.dumps(h3)), **arrays3)
    with pytest.raises(ValueError, match=r"m.npz: .*missing \['et.memory.Xi'\]"):
        load_checkpoint(tmp_path / "m.npz", ImageEnergyTransformer)


# ---------------------------------------------------------------- resuming
def test_resume_is_exact(tmp_path):
    mc = ImageETConfig.tiny()
    task = ImageTaskConfig(eval_size=8, final_eval_size=8)
    tc = TrainConfig(steps=8, batch_size=8, lr=3e-3, warmup=0.25, eval_every=3, log_every=2, seed=4)
    data = (smooth_images(64, seed=1), smooth_images(16, seed=2))
    full, log_full = train_inpainting(mc, task, tc, out=tmp_path / "a", name="m", data=data, progress=False)
    train_inpainting(mc, task, tc, out=tmp_path / "b", name="m", data=data, progress=False, stop_at=4)
    assert read_checkpoint(tmp_path / "b" / "m.npz")[0]["step"] == 4
    resumed, log_res = train_inpainting(mc, task, tc, out=tmp_path / "b", name="m", data=data, progress=False, resume=True)
    assert log_res["final"]["step"] == 8
    for k, v in named_leaves(full).items():
        np.testing.assert_allclose(named_leaves(resumed)[k], v, rtol=1e-5, atol=1e-6, err_msg=k)
    # the optimizer state was restored too (by hand, from the checkpoint)
    _, opt_a, step_a = load_train_state(tmp_path / "a" / "m.npz", ImageEnergyTransformer, tc)
    _, opt_b, step_b = load_train_state(tmp_path / "b" / "m.npz", ImageEnergyTransformer, tc)
    assert step_a == step_b == 8
    for a, b in zip(jax.tree.leaves(opt_a), jax.tree.leaves(opt_b), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    # resuming with a different recipe is refused
    with pytest.raises(ValueError, match="training config differs"):
        train_inpainting(mc, task, replace(tc, lr=1e-3), out=tmp_path / "b", name="m", data=data, progress=False, resume=True)


def test_loss_drops_on_smooth_images():
    mc = ImageETConfig.tiny()
    task = ImageTaskConfig(eval_size=8, final_eval_size=8)
    tc = TrainConfig(steps=40, batch_size=16, lr=3e-3, eval_every=1000, log_every=10)
    _, log = train_inpainting(mc, task, tc, data=(smooth_images(256), smooth_images(16, seed=5)), progress=False)
    first, last = log["history"][0]["loss"], log["history"][-1]["loss"]
    assert last < 0.8 * first, (first, last)


# ---------------------------------------------------------------- the command line
def et_train_command(tmp_path):
    "The installed console script (next to the interpreter), else the same entry point from a script file."
    script = Path(sys.executable).parent / "et-train"
    if script.exists(): return [str(script)]
    f = tmp_path / "et_train_main.py"
    f.write_text("from energy_transformer.image_training import et_train\nif __name__ == '__main__': et_train()\n")
    return [sys.executable, str(f)]


def test_et_train_cli(tmp_path, one_device_flags):
    env = {**os.environ, "XLA_FLAGS": one_device_flags}
    r = subprocess.run([*et_train_command(tmp_path), "tiny", "--out", str(tmp_path), "--name", "cli", "--steps", "6",
                        "--eval-every", "3", "--eval-size", "16", "--final-eval-size", "16", "--quiet"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    model = load_checkpoint(tmp_path / "cli.npz", ImageEnergyTransformer)
    assert model.config == preset("tiny")[0]
    log = json.loads((tmp_path / "cli.json").read_text())
    assert log["final"]["step"] == 6 and log["train_config"]["steps"] == 6
    for k in ("model", "mean_fill", "biharmonic"): assert np.isfinite(log["final"][k]["mse"])
    assert log["wall_time_s"] > 0 and len(log["history"]) >= 1
    # a bad preset is a one-line error and a non-zero exit
    r = subprocess.run([*et_train_command(tmp_path), "huge",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode != 0 and "unknown preset 'huge'" in r.stderr and "Traceback" not in r.stderr


def test_adaptive_stop_bounds():
    "predict_tokens_until: rtol = 0 never stops early (T_max steps, the fixed descent's fill); a huge rtol stops after one step"
    m = ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.PRNGKey(0))
    rng = np.random.default_rng(0)
    tokens = rng.random((m.config.N, m.config.Z)).astype(np.float32)
    mask = np.arange(m.config.N) % 2 == 0
    out, steps = m.predict_tokens_until(tokens, mask, rtol=0.0, T_max=7)
    assert int(steps) == 7
    np.testing.assert_allclose(out, m.predict_tokens(tokens, mask, T=7), atol=1e-5)
    out1, steps1 = m.predict_tokens_until(tokens, mask, rtol=1e9, T_max=7)
    assert int(steps1) == 1
    np.testing.assert_allclose(out1, m.predict_tokens(tokens, mask, T=1), atol=1e-5)
