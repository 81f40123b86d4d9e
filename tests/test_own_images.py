"""`et-train --images` end to end on a small folder of photos: progress lines with the model's held-out masked MSE beside
the biharmonic fill's, the photos held out by file, Ctrl-C and `--resume` without losing a step, `et-inpaint --checkpoint`
on the result, and a one-line error for each bad folder."""
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from energy_transformer.checkpoint import read_checkpoint
from energy_transformer.cli import et_train_images
from energy_transformer.crops import load_photo
from energy_transformer.evaluate import eval_set
from energy_transformer.own_images import crop_photos, photo_files, split_photos

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}
EVAL = re.compile(r"^step (\d+): mse ([\d.e-]+), psnr ([\d.]+), biharmonic_mse ([\d.e-]+)$")
SMALL = ["--crops", "64", "--valid-crops", "16"]  # a tiny run: 64 training crops, 16 held out (8 at each evaluation)


def command(name: str) -> list[str]:
    "The installed console script"
    return [shutil.which(name) or str(Path(sys.executable).parent / name)]


def run(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([*command(args[0]), *args[1:]], capture_output=True, text=True, timeout=timeout, env=ENV)


def rgb8(name: str, scale: int) -> np.ndarray:
    "An offline photo as 8-bit H x W x 3"
    return (load_photo(name, scale).transpose(1, 2, 0) * 255).round().astype(np.uint8)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Five photos of five sizes and four modes and a text file: the four first by name in grey (equal channels), the
    last, the one held out, in colour"""
    d = tmp_path_factory.mktemp("photos") / "photos"; d.mkdir()
    Image.fromarray(rgb8("camera", 4)[..., 0]).save(d / "a_camera.png")  # L, 128 x 128
    Image.fromarray(rgb8("coffee", 4)).convert("L").save(d / "b_coffee.jpg", quality=95)  # L, 100 x 150
    grey = np.asarray(Image.fromarray(rgb8("chelsea", 2)).convert("L"))
    Image.fromarray(np.dstack([grey] * 3 + [np.full_like(grey, 255)]), "RGBA").save(d / "c_chelsea.png")  # 150 x 225
    Image.fromarray(rgb8("astronaut", 8)).convert("L").convert("P").save(d / "d_astronaut.png")  # grey palette, 64 x 64
    Image.fromarray(rgb8("rocket", 4)).save(d / "e_rocket.png")  # RGB, 106 x 160: the last by name
    (d / "notes.txt").write_text("where these photos come from")
    return d


@pytest.fixture(scope="module")
def trained(folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return run("et-train", "--images", str(folder), "--out", str(out), "--name", "mine", "--steps", "6", *SMALL), out


def test_progress_lines_show_the_biharmonic_line_and_the_final_score(trained, folder):
    r, out = trained
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"et-train: warning: skipped 1 file that is not an image: {folder / 'notes.txt'}" in r.stderr.splitlines()
    lines = r.stdout.splitlines()
    assert lines[0] == ("photos: 4 to train on, 1 held out (the last 20% by name); 5 sizes from 64 x 64 to 150 x 225 "
                        "pixels (height x width); 2 L, 1 P, 1 RGBA converted to RGB")
    assert lines[1] == ("crops: 64 of 32 x 32 pixels to train on, 16 held out (each photo at full and half size, reduced "
                        "to a long side of at most 640 pixels)")
    assert lines[2] == ("model: natural_two_weight (fine-tuned), 6 steps of 32 crops at learning rate 0.0003, evaluated "
                        "every step on 8 held-out crops")
    assert re.fullmatch(r"natural_two_weight before training, on the 16 held-out crops: masked MSE [\d.]+", lines[3])
    evals = [EVAL.match(line) for line in lines if line.startswith("step ")]
    assert all(evals) and [int(m[1]) for m in evals] == [1, 2, 3, 4, 5]  # every step but the last (the final score)
    assert len({m[4] for m in evals}) == 1  # the biharmonic line: computed once
    # ... and it is the biharmonic fill's masked MSE on the evaluation crops, recomputed here with scikit-image
    from skimage.restoration import inpaint_biharmonic
    crops = crop_photos(split_photos(photo_files([folder])[0]), 64, 16)["valid"]
    x, mask = eval_set(crops, 64, 8, 0.5)
    hidden = np.repeat(np.repeat(mask.reshape(-1, 8, 8), 4, 1), 4, 2)  # 4 x 4 patches
    errs = [((inpaint_biharmonic(im.transpose(1, 2, 0), h, channel_axis=-1).transpose(2, 0, 1) - im)[:, h] ** 2).mean()
            for im, h in zip(x, hidden, strict=True)]
    assert abs(np.mean(errs) - float(evals[0][4])) < 1e-6
    m = re.fullmatch(rf"wrote {re.escape(str(out / 'mine.npz'))} and mine\.json: 6 steps, [\d.]+ CPU min; held-out masked "
                     r"MSE ([\d.]+) on 16 crops \(biharmonic fill ([\d.]+), natural_two_weight before training ([\d.]+)\)",
                     lines[-1])
    assert m, lines[-1]
    log = json.loads((out / "mine.json").read_text())
    assert float(m[1]) == round(log["final"]["model"]["mse"], 5) and float(m[2]) == round(log["final"]["biharmonic"]["mse"], 5)
    assert read_checkpoint(out / "mine.npz")[0]["step"] == 6 and "Traceback" not in r.stderr


def test_held_out_photos_are_not_trained_on(trained, folder):
    _, out = trained
    log = json.loads((out / "mine.json").read_text())
    assert log["photos"]["valid"] == [str(folder / "e_rocket.png")]  # by file: the last 20% by name
    assert log["photos"]["train"] == [str(folder / n) for n in ("a_camera.png", "b_coffee.jpg", "c_chelsea.png",
                                                                "d_astronaut.png")]
    # the crops say the same: the photos to train on are grey, the held-out one in colour
    x = crop_photos(split_photos(photo_files([folder])[0]), 200, 50)
    assert (x["train"][:, 0] == x["train"][:, 1]).all() and (x["train"][:, 1] == x["train"][:, 2]).all()
    assert (x["valid"][:, 0] != x["valid"][:, 2]).any(axis=(1, 2)).all()


def test_et_inpaint_uses_the_checkpoint(trained, folder, tmp_path):
    _, out = trained
    photo = folder / "e_rocket.png"
    own = run("et-inpaint", str(photo), "--checkpoint", str(out / "mine.npz"), "--out", str(tmp_path / "own.png"))
    shipped = run("et-inpaint", str(photo), "--out", str(tmp_path / "shipped.png"))
    assert own.returncode == 0 and shipped.returncode == 0, own.stderr + shipped.stderr
    assert "the Energy Transformer mine, started from the harmonic fill" in own.stdout
    assert "the Energy Transformer natural_two_weight" in shipped.stdout
    a, b, o = (np.asarray(Image.open(p), np.int16) for p in (tmp_path / "own.png", tmp_path / "shipped.png", photo))
    assert a.shape == b.shape == o.shape and (a != o).any() and (a != b).any()  # both filled, and not the same fill


def test_ctrl_c_ends_with_one_line_and_resume_loses_no_step(folder, tmp_path):
    args = ["--images", str(folder), "--out", str(tmp_path), "--name", "r", "--steps", "30", *SMALL]
    p = subprocess.Popen([*command("et-train"), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    for line in p.stdout:  # the first evaluation (every 3 steps)
        if line.startswith("step 3:"): break
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=300)
    step = read_checkpoint(tmp_path / "r.npz")[0]["step"]
    assert p.returncode == 130 and "Traceback" not in err and 3 <= step < 30, (p.returncode, step, err[-2000:])
    assert err.strip().splitlines()[-1] == (f"et-train: interrupted at step {step} of 30; the state is saved in "
                                            f"{tmp_path / 'r.npz'}; to continue, run the same command with --resume")
    r = run("et-train", *args, "--resume", "--quiet")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("\n") == 1 and r.stdout.startswith(f"wrote {tmp_path / 'r.npz'} and r.json: 30 steps")
    log = json.loads((tmp_path / "r.json").read_text())
    assert read_checkpoint(tmp_path / "r.npz")[0]["step"] == 30
    assert [e["step"] for e in log["evals"]] == list(range(3, 31, 3))  # each evaluation once, none lost or repeated
    steps = [h["step"] for h in log["history"]]
    assert steps == sorted(set(steps)) and steps[-1] == 30


def one_error(argv: list[str]) -> str:
    "The one stderr line of `et-train --images ...` run in this process, which must exit with status 2"
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    err = io.StringIO()
    try:
        with redirect_stderr(err), redirect_stdout(io.StringIO()), pytest.raises(SystemExit) as e: et_train_images(argv)
    finally:
        for s, h in handlers.items(): signal.signal(s, h)
    lines = err.getvalue().strip().splitlines()
    assert e.value.code == 2 and len(lines) == 1 and "Traceback" not in err.getvalue(), (e.value.code, err.getvalue())
    return lines[0]


def test_bad_folders_are_one_line_errors(folder, tmp_path):
    def folder_of(name, *images, files=()):
        d = tmp_path / name; d.mkdir()
        for n, (h, w) in images: Image.fromarray(rgb8("coffee", 1)[:h, :w]).save(d / n)
        for n in files: (d / n).write_text("not a photo")
        return d
    cmd = lambda d, *more: one_error(["--images", str(d), "--out", str(tmp_path / "out"), *more])
    assert cmd(tmp_path / "nope") == f"et-train: error: no such folder: {tmp_path / 'nope'}"
    assert cmd(folder / "notes.txt") == f"et-train: error: {folder / 'notes.txt'} is a file, not a folder of photos"
    assert cmd(folder_of("empty")) == f"et-train: error: {tmp_path / 'empty'} holds no image to train on: it is empty"
    assert cmd(folder_of("texts", files=["a.txt"])) == (f"et-train: error: {tmp_path / 'texts'} holds no image to train on "
                                                        "(only 1 other file, such as a.txt)")
    assert cmd(folder_of("one", ("a.png", (64, 64)))) == (
        "et-train: error: 1 photo: too few to hold one out; give at least 2 (the last 20% by name are held out), or a "
        "folder of held-out photos with --valid")
    assert cmd(folder_of("small", ("a.png", (30, 200)), ("b.png", (31, 31)), ("c.png", (40, 40)))) == (
        "et-train: error: no photo to train on holds one 32 x 32 crop: it needs a photo of at least 32 x 32 pixels "
        "(height x width); the largest of the 2 is 31 x 31")
    assert cmd(folder, "--valid", str(folder)).startswith("et-train: error: 5 photos both to train on and held out, such as")
    assert cmd(folder, "--init", "fashion_mnist") == ("et-train: error: fashion_mnist is a model of 1 x 28 x 28 images; "
                                                      "photos need square RGB windows (3 x H x H), as natural_two_weight's")
    big = tmp_path / "big"; big.mkdir()  # 12 photos of 24.5 megapixels: 1,051 MiB of pixels, a few kB of files
    Image.new("L", (5000, 4900)).save(big / "p00.png")
    for i in range(1, 12): shutil.copy(big / "p00.png", big / f"p{i:02d}.png")
    assert cmd(big, "--long-side", "0") == (
        "et-train: error: the 12 photos take 1,051 MiB as 8-bit RGB pixels at full and half size (long side as they "
        "are), more than the 1,024 MiB read at once: give fewer photos or a smaller --long-side")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())  # nothing written


def test_help_lists_the_image_options():
    r = run("et-train", "--images", "--help")
    assert r.returncode == 0 and all(o in r.stdout for o in ("--init", "--valid", "--crops", "--long-side", "--resume"))
    r = run("et-train", "--help")
    assert r.returncode == 0 and "--images DIR" in " ".join(r.stdout.split())  # however the help text is wrapped
