"""Classification: shipped checkpoints reach their reported accuracy, `et-classify` on PNG files, bad input."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from PIL import Image

from energy_transformer.checkpoint import checkpoint_path, save_checkpoint
from energy_transformer.classify import (
    ClassifierConfig,
    ImageClassifier,
    classification_splits,
    classifier_features,
    load_classifier,
    novelty_path,
)
from energy_transformer.cli import et_classify, read_image
from energy_transformer.core import ETConfig
from energy_transformer.novelty import load_novelty, photo_probes

QUALITY = checkpoint_path("fashion_mnist_classifier").parent / "classification_quality.json"


@pytest.fixture(scope="module")
def test_split():
    return classification_splits("fashion_mnist")["test"]


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    cfg = ClassifierConfig(patch_size=7, et=ETConfig.small(), T=2)
    path = tmp_path_factory.mktemp("ckpt") / "tiny.npz"
    save_checkpoint(path, ImageClassifier(cfg, key=jax.random.key(0)))
    return path


@pytest.mark.parametrize("name", ["fashion_mnist_classifier", "vit_fashion_mnist_classifier"])
def test_shipped_reaches_reported_accuracy(name, test_split):
    q = json.loads(QUALITY.read_text())
    model = load_classifier(name)
    n = q["subset_size"]
    acc = float(np.mean(model.predict(test_split.images[:n]) == test_split.labels[:n]))
    assert acc == pytest.approx(q["models"][name]["test_accuracy_subset"], abs=1e-3)
    assert checkpoint_path(name).stat().st_size <= 5 * 2**20


def test_shipped_et_against_the_matched_transformer():
    q = json.loads(QUALITY.read_text())["models"]
    et, vit = q["fashion_mnist_classifier"], q["vit_fashion_mnist_classifier"]
    assert et["n_params"] == pytest.approx(vit["n_params"], rel=0.05)  # parameter-matched
    assert et["steps"] * et["batch_size"] == vit["steps"] * vit["batch_size"]  # same training budget
    assert et["test_accuracy"] >= vit["test_accuracy"] - 0.01  # no more than 1 point below the transformer
    assert et["test_accuracy"] > q["logistic_regression"]["test_accuracy"] + 0.03


def _png(path: Path, pixels: np.ndarray):
    Image.fromarray(pixels).save(path)
    return str(path)


def test_et_classify_on_png_files(tmp_path, test_split, capsys):
    grey = (test_split.images[0, 0] * 255).round().astype(np.uint8)
    g = _png(tmp_path / "grey.png", grey)
    rgb = _png(tmp_path / "rgb.png", np.repeat(grey[..., None], 3, -1))  # colour file of the same picture
    big = _png(tmp_path / "big.png", np.asarray(Image.fromarray(grey).resize((56, 56), Image.Resampling.NEAREST)))
    et_classify([g, rgb, big])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3
    model = load_classifier("fashion_mnist_classifier")
    p = model.predict_proba(test_split.images[:1])[0]
    top3 = np.argsort(-p)[:3]  # the three most probable classes, most probable first
    expect = ", ".join(f"{model.config.classes[k]} ({p[k]:.3f})" for k in top3)
    assert lines[0] == f"{g}: {expect}" and lines[1] == f"{rgb}: {expect}"  # colour -> the same grey image; not flagged
    assert lines[2].startswith(f"{big}: ")  # resized to 28x28
    assert np.abs(read_image(big) - read_image(g)).mean() < 0.02  # a 2x larger copy reads back as the same 28x28 image


def test_et_classify_model_path_and_unreadable_file(tmp_path, tiny_checkpoint, capsys):
    good = _png(tmp_path / "ok.png", np.zeros((28, 28), np.uint8))
    bad = tmp_path / "broken.png"
    bad.write_text("not an image")
    with pytest.raises(SystemExit) as e:
        et_classify([good, str(bad), "--model", str(tiny_checkpoint)])
    assert e.value.code != 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{good}: ")  # the readable file is still classified
    assert len(err.strip().splitlines()) == 1 and "broken.png" in err and "not a readable image" in err
    with pytest.raises(SystemExit) as e:
        et_classify([good, "--model", str(tmp_path / "missing.npz")])
    assert e.value.code != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"no checkpoint file at {tmp_path / 'missing.npz'}" in err


def test_et_classify_mirror(tmp_path, tiny_checkpoint, capsys):
    shirt = np.zeros((28, 28), np.uint8); shirt[4:20, 2:10] = 255  # asymmetric, so the two views differ
    f = _png(tmp_path / "left.png", shirt)
    et_classify([f, "--model", str(tiny_checkpoint), "--mirror"])
    m = load_classifier(tiny_checkpoint)
    x = read_image(f)[None]
    p = (m.predict_proba(x) + m.predict_proba(x[..., ::-1]))[0] / 2  # the two views, averaged by hand
    expect = ", ".join(f"{m.config.classes[k]} ({p[k]:.3f})" for k in np.argsort(-p)[:3])
    assert capsys.readouterr().out.strip() == f"{f}: {expect}"  # no novelty file beside this model: no flag


def test_console_script_help():
    exe = shutil.which("et-classify") or str(Path(sys.executable).parent / "et-classify")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    assert "grey" in out.stdout and "28x28" in out.stdout


def test_bad_images_are_refused(tiny_checkpoint):
    m = load_classifier(tiny_checkpoint)
    x = np.random.default_rng(0).random((2, 1, 28, 28)).astype(np.float32)
    with pytest.raises(ValueError, match=r"\(B, 1, 28, 28\)"): m.predict(x[0])
    with pytest.raises(ValueError, match=r"\(B, 1, 28, 28\)"): m.predict(x[:, :, :, :20])
    with pytest.raises(TypeError, match="divide 8-bit pixels by 255"): m.predict((x * 255).astype(np.uint8))
    with pytest.raises(ValueError, match=r"in \[0, 1\]"): m.predict(x * 255)
    with pytest.raises(ValueError, match="NaN or infinite"): m.predict(np.full_like(x, np.nan))


def test_et_classify_top_k(tmp_path, tiny_checkpoint, capsys):
    f = _png(tmp_path / "x.png", np.random.default_rng(1).integers(0, 256, (28, 28), dtype=np.uint8))
    m = load_classifier(tiny_checkpoint)
    p = m.predict_proba(read_image(f)[None])[0]
    for k in (1, 10):
        et_classify([f, "--model", str(tiny_checkpoint), "--top-k", str(k)])
        out = capsys.readouterr().out.strip()
        names = [part.rsplit(" (", 1)[0] for part in out.split(": ", 1)[1].split(", ")]
        assert names == [m.config.classes[i] for i in np.argsort(-p)[:k]]  # k classes, most probable first
    with pytest.raises(SystemExit) as e:
        et_classify([f, "--model", str(tiny_checkpoint), "--top-k", "11"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "et-classify: error: --top-k must be an int in [1, 10], got 11"


def test_et_classify_flags_photos_not_clothes(tmp_path, test_split, capsys):
    """The shipped ET's novelty file flags photos (a whole photo, a crop) and not Fashion-MNIST test images; the flag is
    the detector's own verdict on the features of the image the model read"""
    probes = photo_probes(photos=("astronaut", "coffee"), crops=1)
    files = [_png(tmp_path / f"photo{i}.png", (im[0] * 255).round().astype(np.uint8)) for i, im in enumerate(probes)]
    clothes = [_png(tmp_path / f"fm{i}.png", (test_split.images[i, 0] * 255).round().astype(np.uint8)) for i in range(3)]
    et_classify(files + clothes)
    lines = capsys.readouterr().out.strip().splitlines()
    flagged = ["unlike the training images" in line for line in lines]
    model, nov = load_classifier("fashion_mnist_classifier"), load_novelty(novelty_path("fashion_mnist_classifier"))
    expect = nov.flags(classifier_features(model, np.stack([read_image(f) for f in files + clothes])))
    assert flagged == expect.tolist()
    assert sum(flagged[:4]) >= 3 and not any(flagged[4:])  # photos flagged, clothes not
