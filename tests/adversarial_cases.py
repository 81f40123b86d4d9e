"""The adversarial table: bad, extreme and hostile inputs to the public functions and the four commands.

One row per case, each with what must happen: a one-line error whose message contains a given fragment
(`Raises`), a correct result (`Gives`), or, for a command, an exit status and one line on standard error without a
traceback (`Exits`). `tests/test_adversarial.py` runs every row; the "Input checks" page lists them as a table.
A row's `call` receives a `World`: small models and hostile files, made once per test session in a temporary folder.
"""
from __future__ import annotations

import gzip
import itertools
import json
import shutil
import socket
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from PIL import Image

from energy_transformer.capacity import capacity_formula, measure_capacity
from energy_transformer.checkpoint import (
    atomic_write,
    checkpoint_path,
    load_checkpoint,
    read_checkpoint,
    read_log,
    run_lock,
    save_checkpoint,
    save_run,
)
from energy_transformer.checks import MAX_GENERATE, MAX_STEPS, check_output_dir
from energy_transformer.classify import ClassifierConfig, ImageClassifier, Split
from energy_transformer.classify_training import labelled_batches
from energy_transformer.cli import et_classify, et_generate, et_inpaint, et_train_images, et_train_text
from energy_transformer.core import (
    EnergyLayerNorm,
    EnergyTransformer,
    ETConfig,
    TransformerBlock,
    descend,
    energy_recall,
    record_every,
)
from energy_transformer.crops import load_natural, load_photo
from energy_transformer.data import (
    FASHION_MNIST_SHA256,
    FASHION_MNIST_URL,
    BatchIterator,
    download_fashion_mnist,
    idx_sha256,
    load_fashion_mnist,
    read_idx,
)
from energy_transformer.dense import (
    ClassicalHopfield,
    ContinuousHopfield,
    bit_error_curve,
    recall_batch,
)
from energy_transformer.evaluate import eval_set, paired_ratio, predict_images, psnr
from energy_transformer.generation import fill, generate
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.image_training import et_train
from energy_transformer.inpaint import centre_weights, inpaint_photo, read_photo, side_by_side
from energy_transformer.language import CausalET, CausalTransformer, LMConfig, MaskedET
from energy_transformer.language_training import load_language_model
from energy_transformer.own_images import crop_photos
from energy_transformer.own_text import MAX_TEXT_BYTES
from energy_transformer.paper import load_paper_npz, paper_layout
from energy_transformer.patches import random_masks
from energy_transformer.patterns import flip_bits, pattern_mosaic, random_patterns, recall_animation, render_glyph
from energy_transformer.pretrained import load_pretrained
from energy_transformer.text import window_stream
from energy_transformer.train import TrainConfig, fit

# ---- what must happen --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raises:
    "A one-line `ValueError` or `TypeError` whose message contains `text`"
    text: str

    def describe(self) -> str: return f"error: `{self.text}`"


@dataclass(frozen=True)
class RaisesAtRun:
    "Inside `jit` the value is not known before the run: a runtime error (several lines, JAX's) containing `text`"
    text: str

    def describe(self) -> str: return f"error when the compiled code runs (JAX's message, several lines): `{self.text}`"


@dataclass(frozen=True)
class Gives:
    "A result `r` with `check(r)` true"
    what: str
    check: Callable

    def describe(self) -> str: return self.what


@dataclass(frozen=True)
class Exits:
    "A command: exit status `status` and one line on standard error containing `text`, no traceback"
    status: int
    text: str

    def describe(self) -> str: return f"exit status {self.status}, one line: `{self.text}`"


@dataclass(frozen=True)
class Case:
    fault: str  # the class of fault
    case: str  # what is tried
    call: Callable  # call(world) -> result (or raises, or exits)
    expect: Raises | RaisesAtRun | Gives | Exits
    needs: str | None = None  # a path that must exist (else the row is skipped): data installed from a package


FASHION = "/usr/share/datasets/fashion-mnist"

# ---- the world the rows act on -----------------------------------------------------------------------------


class Line(eqx.Module):
    "The smallest trainable model: y = w0 x + w1"
    w: jax.Array
    config: TrainConfig = eqx.field(static=True)

    def __init__(self, config, *, key): self.w, self.config = jax.random.normal(key, (2,)), config


def line_loss(model, batch, key):
    x, y = batch
    return ((model.w[0] * x + model.w[1] - y) ** 2).mean()


def line_batches(start):
    for s in itertools.count(start):
        x = np.random.default_rng(s).normal(size=8).astype(np.float32)
        yield x, 2 * x + 1


LINE_TC = TrainConfig(steps=4, batch_size=8, lr=0.05, warmup=0.0, eval_every=2, log_every=2)


def npz_declaring(path: Path, shapes: dict, descr: str = "<f8", header: bool = True) -> Path:
    "A small `.npz` whose members declare `shapes` (2 MB of zeros each: a few kB compressed)"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if header:
            with z.open("header.npy", "w") as f: np.lib.format.write_array(f, np.array("{}"))
        for name, shape in shapes.items():
            with z.open(f"{name}.npy", "w") as f:
                np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False, "shape": shape})
                f.write(bytes(2_000_000))
    return path


class World:
    "Models and files the rows act on, each made when first used"
    def __init__(self, tmp: Path): self.tmp = Path(tmp)

    def path(self, name: str) -> Path: return self.tmp / name

    @cached_property
    def et(self): return EnergyTransformer(ETConfig.small(), key=jax.random.key(0))

    @cached_property
    def ln(self): return EnergyLayerNorm(32)

    @cached_property
    def x(self): return np.random.default_rng(0).normal(size=(4, 32)).astype(np.float32)

    def x_with(self, v):
        x = self.x.copy(); x[1, 2] = v
        return x

    @cached_property
    def hop(self): return ContinuousHopfield(np.eye(4, 3))

    @cached_property
    def no_pattern(self): return np.zeros(3, bool)  # a constant (made outside any trace)

    @cached_property
    def binary(self):
        "A classical Hopfield network of three random +-1 patterns of 16 bits"
        return ClassicalHopfield(np.where(np.random.default_rng(0).random((3, 16)) < 0.5, -1.0, 1.0))

    @cached_property
    def lm_config(self): return LMConfig("abcdefgh", N=8, et=ETConfig.small(exclude_self=False), T=2)

    @cached_property
    def ar(self): return CausalET(self.lm_config, key=jax.random.key(0))

    @cached_property
    def mlm(self): return MaskedET(replace(self.lm_config, objective="mlm"), key=jax.random.key(0))

    @cached_property
    def image_model(self): return ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.key(0))

    @cached_property
    def ckpt(self): return save_checkpoint(self.path("model.npz"), self.image_model)

    def ckpt_with(self, name: str, change=lambda arrays: arrays, header=None) -> Path:
        "The tiny checkpoint rewritten with its arrays changed (or another header)"
        h, arrays = read_checkpoint(self.ckpt)
        p = self.path(name)
        np.savez(p, header=np.array(json.dumps(h) if header is None else header), **change(dict(arrays)))
        return p

    def first_set(self, arrays, v):
        "`arrays` with the first entry of the memories set to `v` (a complex `v` makes the array complex)"
        a = arrays["model/et.memory.Xi"].astype(np.result_type(arrays["model/et.memory.Xi"].dtype, np.asarray(v).dtype))
        a.flat[0] = v
        return {**arrays, "model/et.memory.Xi": a}

    @cached_property
    def paper_nan(self):
        "Weights in the released layout with one NaN"
        arrays = {k: np.zeros(s, np.float32) for k, s in paper_layout(D=8, H=2, Y=4, M=16, p=4, image_size=8).items()}
        arrays["Xi"].flat[0] = np.nan
        p = self.path("paper-nan.npz"); np.savez(p, **arrays)
        return p

    @cached_property
    def huge_idx(self):
        p = self.path("huge-idx"); p.write_bytes(struct.pack(">HBB3I", 0, 8, 3, *[2**32 - 1] * 3))
        return p

    @cached_property
    def npy(self):
        p = self.path("weights.npy"); np.save(p, np.zeros(3))
        return p

    @cached_property
    def text_file(self):
        p = self.path("notes.npz"); p.write_text("hello")
        return p

    @cached_property
    def truncated(self):
        p = self.path("cut.npz"); p.write_bytes(self.ckpt.read_bytes()[:2000])
        return p

    @cached_property
    def npz_bomb(self): return npz_declaring(self.path("bomb.npz"), {"model/x": (2**28,)})  # 2 GiB declared

    @cached_property
    def npz_two_halves(self): return npz_declaring(self.path("halves.npz"), {"a": (80_000_000,), "b": (80_000_000,)})

    @cached_property
    def npz_objects(self): return npz_declaring(self.path("objects.npz"), {"a": (3,)}, descr="|O")

    def idx_bomb(self, gz: bool) -> Path:
        data = struct.pack(">HBB3I", 0, 8, 3, 2**31 // 784, 28, 28) + bytes(2_000_000)
        p = self.path("bomb-idx.gz" if gz else "bomb-idx")
        p.write_bytes(gzip.compress(data) if gz else data)
        return p

    @cached_property
    def idx_bomb_folder(self):
        d = self.path("bombs"); d.mkdir(exist_ok=True)
        shutil.copy(self.idx_bomb(True), d / "t10k-images-idx3-ubyte.gz")
        shutil.copy(self.idx_bomb(True), d / "t10k-labels-idx1-ubyte.gz")
        return d

    def big_image(self, suffix: str) -> Path:
        p = self.path(f"big{suffix}")
        if not p.exists(): Image.new("L", (6000, 5000)).save(p)  # 30 megapixels in a few kB (PNG) or 100 kB (JPEG)
        return p

    @cached_property
    def photo(self):
        p = self.path("photo.png")
        Image.fromarray((np.random.default_rng(0).random((64, 64, 3)) * 255).astype(np.uint8)).save(p)
        return p

    def mask_png(self, H: int, W: int, value: int) -> Path:
        p = self.path("mask.png")
        Image.fromarray(np.full((H, W), value, np.uint8)).save(p)
        return p

    def folder(self, name: str, files: dict[str, bytes | Path]) -> Path:
        "A folder holding `files`: name -> its bytes, or a file to copy"
        d = self.path(name); d.mkdir(exist_ok=True)
        for f, v in files.items(): (d / f).write_bytes(v if isinstance(v, bytes) else Path(v).read_bytes())
        return d

    @cached_property
    def coffee(self) -> Path:
        "A natural photo (scikit-image's coffee at a quarter size, 100 x 150 pixels) as a PNG"
        p = self.path("coffee.png")
        Image.fromarray((load_photo("coffee", 4).transpose(1, 2, 0) * 255).round().astype(np.uint8)).save(p)
        return p

    def small_photo(self, H: int, W: int) -> Path:
        p = self.path(f"small-{H}x{W}.png")
        Image.fromarray(np.full((H, W), 128, np.uint8)).save(p)
        return p

    def text(self, name: str, data: bytes) -> Path:
        p = self.path(name); p.write_bytes(data)
        return p

    @cached_property
    def huge_text(self) -> Path:
        "A sparse file one byte larger than `MAX_TEXT_BYTES` (nothing written to disk)"
        p = self.path("huge.txt")
        with open(p, "wb") as f: f.truncate(MAX_TEXT_BYTES + 1)
        return p

    def train_text(self, *args: str):
        "`et-train --text ...` into a folder of its own, quiet"
        return et_train_text(["--text", *map(str, args), "--out", str(self.path("text-out")), "--quiet"])

    @cached_property
    def one_bit(self):
        "A 1-bit (mode '1') PNG: a smooth shading dithered to black and white dots"
        p = self.path("one-bit.png")
        shade = np.add.outer(np.linspace(0, 150, 64), np.linspace(0, 100, 64)).astype(np.uint8)
        Image.fromarray(shade).convert("1").save(p)
        return p

    @cached_property
    def a_file(self):
        p = self.path("a-file"); p.write_text("")
        return p

    @cached_property
    def mirror(self):
        "A local copy of the Fashion-MNIST files (the Debian package's), served as file:// addresses"
        d = self.path("mirror"); d.mkdir(exist_ok=True)
        for f in Path(FASHION).glob("*.gz"): shutil.copy(f, d / f.name)
        return d

    def corrupt_mirror(self, how: str) -> Path:
        d = self.path(f"mirror-{how}"); shutil.copytree(self.mirror, d, dirs_exist_ok=True)
        f = d / "t10k-labels-idx1-ubyte.gz"
        raw = gzip.decompress(f.read_bytes())
        if how == "bit": f.write_bytes(gzip.compress(raw[:100] + bytes([raw[100] ^ 1]) + raw[101:]))
        else: f.write_bytes(f.read_bytes()[:-100])
        return d

    def download(self, mirror: Path, dest: str) -> list[str]:
        d = download_fashion_mnist(self.path(dest), url=f"file://{mirror}/")
        return sorted(p.name for p in d.iterdir())

    def train(self, **kw):
        return fit(Line(LINE_TC, key=jax.random.key(0)), line_loss, line_batches, LINE_TC, progress=False, **kw)

    def photo_folder(self, name: str, sizes=(), texts=()) -> Path:
        "A folder of random 8-bit RGB photos of the given (height, width), and text files"
        d = self.path(name)
        if not d.exists():
            d.mkdir()
            rng = np.random.default_rng(0)
            for i, (h, w) in enumerate(sizes): Image.fromarray(rng.integers(0, 256, (h, w, 3), np.uint8)).save(d / f"p{i}.png")
            for t in texts: (d / t).write_text("not a photo")
        return d

    @cached_property
    def mixed_photos(self) -> dict:
        "{'train', 'valid'}: photos of four sizes and modes (grey, palette, 16-bit grey, RGBA) and an RGB one held out"
        d = self.path("mixed"); d.mkdir()
        rng = np.random.default_rng(1)
        Image.fromarray(rng.integers(0, 256, (40, 50), np.uint8)).save(d / "grey.png")
        Image.fromarray(rng.integers(0, 256, (60, 33, 3), np.uint8)).quantize(64).save(d / "palette.png")
        Image.fromarray(rng.integers(0, 65536, (35, 70), np.uint16)).save(d / "sixteen.png")
        Image.fromarray(rng.integers(0, 256, (48, 48, 4), np.uint8), "RGBA").save(d / "rgba.png")
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), np.uint8)).save(d / "valid.png")
        return dict(train=[d / n for n in ("grey.png", "palette.png", "sixteen.png", "rgba.png")], valid=[d / "valid.png"])

    @cached_property
    def big_photo_folder(self) -> Path:
        "12 photos of 5000 x 4900 pixels (24.5 megapixels, under the limit of one photo), a few kB each"
        d = self.path("big-photos"); d.mkdir()
        Image.new("L", (4900, 5000)).save(d / "p00.png")
        for i in range(1, 12): shutil.copy(d / "p00.png", d / f"p{i:02d}.png")
        return d

    def train_images(self, folder: Path, *more: str):
        "et-train --images on `folder`: a tiny quiet run (one step) into its own output folder"
        return et_train_images(["--images", str(folder), "--out", str(self.path(f"{folder.name}-out")), "--steps", "1",
                                "--crops", "32", "--valid-crops", "2", "--quiet", *more])

    def held_lock(self, name: str):
        "fit while another live process (this one) holds the run's lock"
        out = self.path(f"locked-{name}"); out.mkdir(exist_ok=True)
        with run_lock(out / f"{name}.npz"): return self.train(out=out, name=name)

    def stale_lock(self, content: str):
        "fit after a run that left its lock behind (`content`: what the lock file holds)"
        out = self.path(f"stale-{abs(hash(content))}"); out.mkdir(exist_ok=True)
        (out / "s.lock").write_text(content)
        self.train(out=out, name="s")
        return sorted(p.name for p in out.iterdir())

    def mixed_pair(self):
        p = save_run(self.path("run.npz"), self.image_model, {"history": [], "n": 1}, step=1)
        old = p.with_suffix(".json").read_bytes()
        save_run(p, self.image_model, {"history": [], "n": 2}, step=2)
        p.with_suffix(".json").write_bytes(old)  # a crash between the two renames of the second save
        return read_log(p)

    def pair(self):
        p = save_run(self.path("pair.npz"), self.image_model, {"history": [], "n": 3}, step=3)
        return read_log(p)["n"], read_checkpoint(p)[0]["step"]

    def outside(self, name: str) -> bool:
        "fit with a name that points outside `out`; True when it wrote nothing anywhere"
        out = self.path("inside"); out.mkdir(exist_ok=True)
        before = set(self.tmp.rglob("*"))
        try: self.train(out=out, name=name)
        finally: assert set(self.tmp.rglob("*")) == before, "fit wrote files"


# ---- the rows ----------------------------------------------------------------------------------------------

W, M, T, P, L, D = ("silent wrong answer", "memory bomb", "training and generation", "paths", "library message",
                    "download integrity")
FINITE = Gives("a finite result", lambda r: bool(np.isfinite(np.asarray(r)).all()))
KEY = "must be one JAX random key such as jax.random.key(0), got"
NONFINITE = "NaN or infinite entries"


def _cfg(**kw) -> Callable: return lambda w: TrainConfig(**kw)


CASES: list[Case] = [
    # 1. silent wrong answers: refused, or answered correctly
    Case(W, "`logits` of a causal model with id 68 of 8 symbols", lambda w: w.ar.logits(jnp.array([3, 68])),
         Raises("token ids must be in [0, 8) (the vocabulary), got values from 3 to 68")),
    Case(W, "`logits` with id -1 (a gather would read the last symbol)", lambda w: w.ar.logits(jnp.array([-1, 2])),
         Raises("token ids must be in [0, 8) (the vocabulary), got values from -1 to 2")),
    Case(W, "`logits` of a masked model with the MASK id (= V)", lambda w: w.mlm.logits(jnp.array([8, 1])), FINITE),
    Case(W, "`logits` of a masked model with id V + 1", lambda w: w.mlm.logits(jnp.array([9, 1])),
         Raises("token ids must be in [0, 9)")),
    Case(W, "`logits` under `jax.vmap` with valid ids (the training path)",
         lambda w: jax.vmap(w.ar.logits)(jnp.array([[1, 2, 3]])), FINITE),
    Case(W, "`descend` with `alpha=nan`", lambda w: descend(w.et, w.ln, w.x, alpha=float("nan"), T=2),
         Raises("descend.alpha must be a finite number >= 0, got nan")),
    Case(W, "`descend` with `alpha=inf`", lambda w: descend(w.et, w.ln, w.x, alpha=float("inf"), T=2),
         Raises("descend.alpha must be a finite number >= 0, got inf")),
    Case(W, "`descend` with `alpha=-0.1` (would climb the energy)", lambda w: descend(w.et, w.ln, w.x, alpha=-0.1, T=2),
         Raises("descend.alpha must be a finite number >= 0, got -0.1")),
    Case(W, "`descend` with `alpha=0` (no movement)", lambda w: np.array_equal(descend(w.et, w.ln, w.x, alpha=0.0, T=2), w.x),
         Gives("the tokens unchanged", lambda r: r is True)),
    Case(W, "`descend` with `alpha='0.1'` (a string)", lambda w: descend(w.et, w.ln, w.x, alpha="0.1", T=2),
         Raises("descend.alpha must be a finite number >= 0")),
    Case(W, "`descend` with `alpha` a vector", lambda w: descend(w.et, w.ln, w.x, alpha=np.ones(2), T=2),
         Raises("descend.alpha must be a finite number >= 0")),
    Case(W, "`descend` with `alpha` a JAX scalar equals the float", lambda w: np.abs(
        descend(w.et, w.ln, w.x, alpha=jnp.asarray(0.1), T=2) - descend(w.et, w.ln, w.x, alpha=0.1, T=2)).max(),
         Gives("the same tokens as the float", lambda r: r == 0)),
    Case(W, "`descend` inside `jit` with a traced `alpha`",
         lambda w: jax.jit(lambda a: descend(w.et, w.ln, w.x, alpha=a, T=2))(0.1), FINITE),
    Case(W, "`descend` lowers the energy at a valid `alpha`", lambda w: (
        w.et.energy(jax.vmap(w.ln)(descend(w.et, w.ln, w.x, alpha=0.1, T=5))) - w.et.energy(jax.vmap(w.ln)(w.x))),
         Gives("a lower energy", lambda r: float(r) < 0)),
    Case(W, "`descend` from tokens holding NaN", lambda w: descend(w.et, w.ln, w.x_with(np.nan), T=2),
         Raises("descend: x has 1 NaN or infinite entries")),
    Case(W, "`energy()` of tokens holding NaN", lambda w: w.et.energy(w.x_with(np.nan)),
         Raises("tokens g has 1 " + NONFINITE)),
    Case(W, "`energy()` of tokens holding inf", lambda w: w.et.energy(w.x_with(np.inf)),
         Raises("tokens g has 1 " + NONFINITE)),
    Case(W, "`grad()` of tokens holding -inf", lambda w: w.et.grad(w.x_with(-np.inf)), Raises("tokens g has 1 " + NONFINITE)),
    Case(W, "`attn_energy()` of tokens holding NaN", lambda w: w.et.attn_energy(w.x_with(np.nan)),
         Raises("tokens g has 1 " + NONFINITE)),
    Case(W, "`energy()` inside `jit` (values unknown: checked by shape only)",
         lambda w: jax.jit(lambda g: w.et.energy(g))(jnp.asarray(w.x)), FINITE),
    Case(W, "a transformer block on tokens holding NaN",
         lambda w: TransformerBlock(32, 2, 16, 64, key=jax.random.key(0))(w.x_with(np.nan)),
         Raises("TransformerBlock: x has 1 " + NONFINITE)),
    Case(W, "`energy()` of raw tokens of size 1e30 (their squares overflow)", lambda w: w.et.energy(1e30 * w.x),
         Raises("tokens g has entries up to 2.33e+30 in absolute value, more than 9.22e+18: their squares overflow float32")),
    Case(W, "`grad()` of raw tokens of size 1e30", lambda w: w.et.grad(1e30 * w.x),
         Raises("tokens g has entries up to 2.33e+30")),
    Case(W, "`energy()` of tokens of size 3e18 (the squares fit, the energy does not)", lambda w: w.et.energy(3e18 * w.x),
         Raises("EnergyTransformer.hn_energy overflows float32 for inputs up to 6.98e+18 in absolute value")),
    Case(W, "`energy()` of tokens of size 1e17 (large, representable)", lambda w: w.et.energy(1e17 * w.x), FINITE),
    Case(W, "`descend` from tokens of size 1e30 (the layer norm would zero them)", lambda w: descend(w.et, w.ln, 1e30 * w.x, T=2),
         Raises("descend: x has entries up to 2.33e+30 in absolute value, more than 9.22e+18")),
    Case(W, "`descend` from tokens of size 1e15 (the layer norm rescales them)",
         lambda w: descend(w.et, w.ln, 1e15 * w.x, T=2), FINITE),
    Case(W, "`EnergyLayerNorm` of tokens of size 1e30", lambda w: w.ln(1e30 * w.x),
         Raises("EnergyLayerNorm: x has entries up to 2.33e+30 in absolute value")),
    Case(W, "`EnergyTransformer(std=nan)` (NaN weights)", lambda w: EnergyTransformer(ETConfig.small(), key=jax.random.key(0),
                                                                                     std=float("nan")),
         Raises("EnergyTransformer.std must be a finite number > 0, got nan")),
    Case(W, "`EnergyLayerNorm(eps=inf)` (every token to zero)", lambda w: EnergyLayerNorm(32, eps=float("inf")),
         Raises("EnergyLayerNorm.eps must be a finite number >= 1.17")),
    Case(W, "`descend(rtol=nan)` (would stop after one step)", lambda w: descend(w.et, w.ln, w.x, rtol=float("nan")),
         Raises("descend.rtol must be a finite number >= 0, got nan")),
    Case(W, "`capacity_formula(2, D=1)` (ln D = 0)", lambda w: capacity_formula(2, D=1),
         Raises("capacity_formula: D must be a finite number of bits >= 2, got 1.0")),
    Case(W, "`capacity_formula(2, D=[10, nan])`", lambda w: capacity_formula(2, D=[10, np.nan]),
         Raises("capacity_formula: D must be a finite number of bits >= 2, got nan")),
    Case(W, "`capacity_formula(200, D=1e6)` (beyond float64)", lambda w: capacity_formula(200, D=1e6),
         Raises("capacity_formula overflows float64 for inputs up to 1e+06")),
    Case(W, "`capacity_formula(200, D=1000)` (D^199 and 397!! overflow alone, their ratio does not)",
         lambda w: capacity_formula(200, D=1000), Gives("5.716e164", lambda r: np.isclose(r, 5.715833266e164, rtol=1e-8))),
    Case(W, "continuous Hopfield `energy` of a state of size 1e30", lambda w: w.hop.energy(jnp.full(4, 1e30)),
         Raises("ContinuousHopfield.energy overflows float32 for inputs up to 1e+30")),
    Case(W, "`update_neurons` with neuron 16 of 16 (a gather would clamp it)",
         lambda w: w.binary.update_neurons(w.binary.Xi[0], jnp.array([3, 16])),
         Raises("order (neuron indices) must be in [0, 16) (the vocabulary), got values from 3 to 16")),
    Case(W, "`flip_bits(p=nan)`", lambda w: flip_bits(jax.random.key(0), jnp.ones(4), float("nan")),
         Raises("flip_bits.p must be a finite number in [0, 1], got nan")),
    Case(W, "`inpaint_photo(power=nan)` (NaN window weights)",
         lambda w: inpaint_photo(w.image_model, np.zeros((1, 28, 28), np.float32), power=float("nan")),
         Raises("inpaint_photo.power must be a finite number >= 0, got nan")),
    Case(W, "`et-inpaint` on a 1-bit dithered PNG (unlike any training photo)",
         lambda w: et_inpaint(str(w.one_bit), out=str(w.path("one-bit-out.png"))),
         Exits(0, "black and white pixels (a 1-bit or dithered image), unlike the natural photos the model was trained on")),
    Case(W, "`ContinuousHopfield` storing a NaN pattern", lambda w: ContinuousHopfield(np.array([[1.0, np.nan], [0.0, 1.0]])),
         Raises("X has 1 " + NONFINITE)),
    Case(W, "`ContinuousHopfield` storing an infinite pattern", lambda w: ContinuousHopfield(np.array([[np.inf], [0.0]])),
         Raises("X has 1 " + NONFINITE)),
    Case(W, "continuous Hopfield `energy` of a NaN state", lambda w: w.hop.energy(jnp.array([np.nan, 0, 0, 0])),
         Raises("xi has 1 " + NONFINITE)),
    Case(W, "continuous Hopfield `update` of an infinite state", lambda w: w.hop.update(jnp.array([np.inf, 0, 0, 0])),
         Raises("xi has 1 " + NONFINITE)),
    Case(W, "continuous Hopfield `recall` from a NaN state", lambda w: w.hop.recall(jnp.array([np.nan, 0, 0, 0])),
         Raises("xi has 1 " + NONFINITE)),
    Case(W, "continuous Hopfield `beta=nan`", lambda w: ContinuousHopfield(np.eye(3), beta=float("nan")),
         Raises("beta must be finite and > 0")),
    Case(W, "continuous Hopfield update of a stored pattern at large `beta`",
         lambda w: ContinuousHopfield(np.eye(4, 3), beta=1e4).update(jnp.array([1.0, 0, 0, 0])),
         Gives("the pattern itself", lambda r: np.allclose(r, [1, 0, 0, 0]))),
    Case(W, "`psnr` of a negative MSE", lambda w: psnr(np.array([0.01, -0.1])),
         Raises("psnr: mse must be >= 0 (a mean of squares), got -0.1")),
    Case(W, "`psnr` of a NaN MSE", lambda w: psnr(jnp.array(np.nan)), Raises("psnr: mse must be >= 0")),
    Case(W, "`psnr` of MSE 0 (a perfect fill)", lambda w: psnr(np.array(0.0)), Gives("+inf dB", lambda r: r == np.inf)),
    Case(W, "`psnr` of MSE 0.01", lambda w: psnr(np.array(0.01)), Gives("20 dB", lambda r: np.isclose(r, 20.0))),
    Case(W, "`ImageETConfig(alpha=inf)`", lambda w: ImageETConfig.tiny(alpha=float("inf")),
         Raises("ImageETConfig.alpha must be a finite number > 0, got inf")),
    Case(W, "`ImageETConfig(alpha=nan)`", lambda w: ImageETConfig.tiny(alpha=float("nan")),
         Raises("ImageETConfig.alpha must be a finite number > 0, got nan")),
    Case(W, "`ImageETConfig(alpha=-1)`", lambda w: ImageETConfig.tiny(alpha=-1.0),
         Raises("ImageETConfig.alpha must be a finite number > 0, got -1.0")),
    Case(W, "`LMConfig(alpha=inf)`", lambda w: replace(w.lm_config, alpha=float("inf")),
         Raises("LMConfig.alpha must be a finite number > 0")),
    Case(W, "`ClassifierConfig(alpha=nan)`", lambda w: ClassifierConfig(alpha=float("nan")),
         Raises("ClassifierConfig.alpha must be a finite number > 0")),
    Case(W, "`TrainConfig(b1=2.0)`", _cfg(b1=2.0), Raises("TrainConfig.b1 must be a finite number in [0, 1), got 2.0")),
    Case(W, "`TrainConfig(b1=-0.1)`", _cfg(b1=-0.1), Raises("TrainConfig.b1 must be a finite number in [0, 1)")),
    Case(W, "`TrainConfig(b2=1.0)`", _cfg(b2=1.0), Raises("TrainConfig.b2 must be a finite number in [0, 1), got 1.0")),
    Case(W, "`TrainConfig(weight_decay=-5)`", _cfg(weight_decay=-5),
         Raises("TrainConfig.weight_decay must be a finite number >= 0, got -5")),
    Case(W, "`TrainConfig(weight_decay=inf)`", _cfg(weight_decay=float("inf")),
         Raises("TrainConfig.weight_decay must be a finite number >= 0, got inf")),
    Case(W, "`TrainConfig(lr=nan)`", _cfg(lr=float("nan")), Raises("TrainConfig.lr must be a finite number > 0, got nan")),
    Case(W, "`TrainConfig(lr=0)`", _cfg(lr=0.0), Raises("TrainConfig.lr must be a finite number > 0, got 0.0")),
    Case(W, "`TrainConfig(end_lr=-0.5)`", _cfg(end_lr=-0.5), Raises("TrainConfig.end_lr must be a finite number >= 0")),
    Case(W, "`TrainConfig(warmup=1.0)`", _cfg(warmup=1.0), Raises("TrainConfig.warmup must be a finite number in [0, 1)")),
    Case(W, "`TrainConfig(warmup=nan)`", _cfg(warmup=float("nan")), Raises("TrainConfig.warmup must be a finite number")),
    Case(W, "`TrainConfig(clip=0)`", _cfg(clip=0.0), Raises("TrainConfig.clip must be a finite number > 0, got 0.0")),
    Case(W, "`TrainConfig(b1=0.0, weight_decay=0.0)` (edges that are allowed)", _cfg(b1=0.0, weight_decay=0.0),
         Gives("a configuration", lambda r: r.b1 == 0.0)),
    Case(W, "a checkpoint whose weights hold a NaN", lambda w: load_checkpoint(
        w.ckpt_with("nan.npz", lambda a: w.first_set(a, np.nan)), ImageEnergyTransformer),
         Raises("nan.npz: array 'model/et.memory.Xi' has 1 NaN or infinite values")),
    Case(W, "a checkpoint whose weights hold an inf", lambda w: load_pretrained(
        w.ckpt_with("inf.npz", lambda a: w.first_set(a, -np.inf))),
         Raises("inf.npz: array 'model/et.memory.Xi' has 1 NaN or infinite values")),
    Case(W, "a checkpoint holding a complex array", lambda w: load_checkpoint(
        w.ckpt_with("complex.npz", lambda a: w.first_set(a, 1j)), ImageEnergyTransformer),
         Raises("complex.npz: array 'model/et.memory.Xi' has dtype complex")),
    Case(W, "a checkpoint holding a string array", lambda w: load_checkpoint(
        w.ckpt_with("strings.npz", lambda a: {**a, "model/alpha": np.array("0.1")}), ImageEnergyTransformer),
         Raises("strings.npz: array 'model/alpha' has dtype <U3")),
    Case(W, "`et-inpaint --checkpoint` a checkpoint holding NaN weights", lambda w: et_inpaint(
        str(w.photo), out=str(w.path("o.png")), checkpoint=str(w.ckpt_with("nan2.npz", lambda a: w.first_set(a, np.nan)))),
         Exits(2, "nan2.npz: array 'model/et.memory.Xi' has 1 NaN or infinite values")),
    Case(W, "`load_paper_npz` of weights holding NaN", lambda w: load_paper_npz(w.paper_nan),
         Raises("paper-nan.npz: array 'Xi' has 1 NaN or infinite values")),

    Case(W, "`crop_photos` of photos of four sizes and modes (grey, palette, 16-bit grey, RGBA)",
         lambda w: crop_photos(w.mixed_photos, 20, 5),
         Gives("RGB crops of each split: 20 and 5 of 3 x 32 x 32 in [0, 1]",
               lambda r: r["train"].shape == (20, 3, 32, 32) and r["valid"].shape == (5, 3, 32, 32)
               and 0 <= r["train"].min() <= r["train"].max() <= 1)),
    # 2. memory bombs: sizes checked before allocating
    Case(M, "a 2 kB `.npz` whose member declares 2 GiB, as a checkpoint", lambda w: read_checkpoint(w.npz_bomb),
         Raises("bomb.npz: array 'model/x' declares shape (268435456,) of float64 (2048 MiB), more than the 1024 MiB allowed")),
    Case(M, "the same file through `load_pretrained`", lambda w: load_pretrained(w.npz_bomb), Raises("(2048 MiB), more than")),
    Case(M, "the same file through `load_paper_npz`", lambda w: load_paper_npz(w.npz_bomb), Raises("(2048 MiB), more than")),
    Case(M, "a `.npz` whose two members declare 610 MiB each", lambda w: read_checkpoint(w.npz_two_halves),
         Raises("its arrays declare more than the 1024 MiB allowed")),
    Case(M, "a `.npz` member of Python objects (needs pickle)", lambda w: read_checkpoint(w.npz_objects),
         Raises("holds Python objects (pickle)")),
    Case(M, "a 2 kB gzipped IDX file declaring 2 GiB", lambda w: read_idx(w.idx_bomb(True)),
         Raises("its header declares shape (2739137, 28, 28) of uint8 (2048 MiB), more than the 1024 MiB allowed")),
    Case(M, "a 2 MB plain IDX file declaring 2 GiB", lambda w: read_idx(w.idx_bomb(False)),
         Raises("(2048 MiB), more than the 1024 MiB allowed")),
    Case(M, "an IDX header of three dimensions of 2^32 - 1", lambda w: read_idx(w.huge_idx),
         Raises("more than the 1024 MiB allowed")),
    Case(M, "`load_fashion_mnist` from a folder of IDX bombs",
         lambda w: load_fashion_mnist("test", path=w.idx_bomb_folder),
         Raises("more than the 1024 MiB allowed")),
    Case(M, "a 30-megapixel PNG (a few kB)", lambda w: read_photo(w.big_image(".png")),
         Raises("big.png: 5000 x 6000 (height x width) = 30.0 megapixels, more than the 25 allowed")),
    Case(M, "a 30-megapixel JPEG", lambda w: read_photo(w.big_image(".jpg")),
         Raises("30.0 megapixels, more than the 25 allowed")),
    Case(M, "`et-inpaint` on a 30-megapixel PNG", lambda w: et_inpaint(str(w.big_image(".png")), out=str(w.path("b.png"))),
         Exits(2, "30.0 megapixels, more than the 25 allowed")),
    Case(M, "`et-classify` on a 30-megapixel PNG", lambda w: et_classify([str(w.big_image(".png"))]),
         Exits(2, "megapixels, more than the 25 allowed")),
    Case(M, "`et-train --text` a file larger than `MAX_TEXT_BYTES` (refused before it is read)",
         lambda w: w.train_text(w.huge_text), Exits(2, "huge.txt has 268,435,457 bytes, more than the 268,435,456 read")),

    Case(M, "`et-train --images` a folder of 12 photos of 24.5 megapixels (1,051 MiB of pixels, as they are)",
         lambda w: w.train_images(w.big_photo_folder, "--long-side", "0"),
         Exits(2, "take 1,051 MiB as 8-bit RGB pixels at full and half size (long side as they are), more than the 1,024 MiB "
                  "read at once: give fewer photos or a smaller --long-side")),
    # 3. training and generation faults
    Case(T, "`fit` with `out` naming a file", lambda w: w.train(out=w.a_file), Raises("a-file is a file, not a folder")),
    Case(T, "`fit` with `out` where no folder can be made", lambda w: w.train(out="/proc/et-out"),
         Raises("out: cannot write in /proc/et-out")),
    Case(T, "an output folder without room for a checkpoint", lambda w: check_output_dir(w.tmp, need=2**62),
         Raises("MiB needed")),
    Case(T, "`fit` while another live process writes the same run", lambda w: w.held_lock("l"),
         Raises("l.npz: another run (process")),
    Case(T, "`fit` after a killed run left its lock (its process is gone)",
         lambda w: w.stale_lock(f"{socket.gethostname()} 999999999"),
         Gives("trains; the lock is taken over and removed", lambda r: r == ["s.json", "s.npz"])),
    Case(T, "`fit` facing a lock file being written (no process id yet)", lambda w: w.stale_lock(""),
         Raises("another run (another process) is writing it")),
    Case(T, "a `.json` log cut from its `.npz` by a crash between renames", lambda w: w.mixed_pair(),
         Raises("come from different saves")),
    Case(T, "a `.npz`/`.json` pair written by `save_run`", lambda w: w.pair(), Gives("one save", lambda r: r == (3, 3))),
    Case(T, "`descend(T=10**8)`", lambda w: descend(w.et, w.ln, w.x, T=10**8),
         Raises(f"descend.T must be an int in [0, {MAX_STEPS}], got 100000000")),
    Case(T, "`descend(T=2**31)`", lambda w: descend(w.et, w.ln, w.x, T=2**31),
         Raises("descend.T must be an int in [0, 10000], got 2147483648")),
    Case(T, "`descend(T=-1)`", lambda w: descend(w.et, w.ln, w.x, T=-1),
         Raises("descend.T must be an int in [0, 10000], got -1")),
    Case(T, "`descend(T=3.0)`", lambda w: descend(w.et, w.ln, w.x, T=3.0), Raises("descend.T must be an int")),
    Case(T, "`descend(T=0)` (no step)", lambda w: np.array_equal(descend(w.et, w.ln, w.x, T=0), w.x),
         Gives("the tokens unchanged", lambda r: r is True)),
    Case(T, "`descend(rtol=1e-3, T=10**8)`", lambda w: descend(w.et, w.ln, w.x, rtol=1e-3, T=10**8),
         Raises("descend.T must be an int in [0, 10000], got 100000000")),
    Case(T, "`descend(every=1, T=2**31)`", lambda w: descend(w.et, w.ln, w.x, T=2**31, every=1),
         Raises("descend.T must be an int in [0, 10000]")),
    Case(T, "`descend(every=2, rtol=1e-3)` (a record and a stop at once)", lambda w: descend(w.et, w.ln, w.x, every=2, rtol=1e-3),
         Raises("descend: give every (a record) or rtol (a stop), not both")),
    Case(T, "`ImageETConfig(T=2**31)`", lambda w: ImageETConfig.tiny(T=2**31),
         Raises("ImageETConfig.T must be an int in [1, 10000]")),
    Case(T, "`LMConfig(T=10**8)`", lambda w: replace(w.lm_config, T=10**8), Raises("LMConfig.T must be an int in [1, 10000]")),
    Case(T, "an image model's `predict_tokens(T=10**8)`", lambda w: w.image_model.predict_tokens(
        np.zeros((16, 49), np.float32), np.zeros(16, bool), T=10**8), Raises("descend.T must be an int in [0, 10000]")),
    Case(T, "`generate(length=10**9)`", lambda w: generate(w.ar, "ab", 10**9),
         Raises(f"generate.length must be an int in [1, {MAX_GENERATE}], got 1000000000")),
    Case(T, "`generate(length=MAX_GENERATE + 1)`", lambda w: generate(w.ar, "ab", MAX_GENERATE + 1),
         Raises("generate.length must be an int in [1, 20000]")),
    Case(T, "`generate(length=0)`", lambda w: generate(w.ar, "ab", 0),
         Raises("generate.length must be an int in [1, 20000], got 0")),
    Case(T, "`generate` of 5 characters", lambda w: generate(w.ar, "ab", 5, temperature=0),
         Gives("5 characters of the vocabulary", lambda r: len(r) == 5 and set(r) <= set("abcdefgh"))),
    Case(T, "`et-generate --length 1000000000`", lambda w: et_generate(["--prompt", "And", "--length", "1000000000"]),
         Exits(2, "et-generate: error: --length must be an int in [1, 20000], got 1000000000")),
    Case(T, "`et-generate --prompt 'Zoë'` (a letter the model never saw)", lambda w: et_generate(["--prompt", "Zoë"]),
         Exits(2, "et-generate: error: characters not in the vocabulary: 'ë' (--unknown skip drops them, --unknown replace")),
    Case(T, "`et-generate --length 0`", lambda w: et_generate(["--prompt", "And", "--length", "0"]),
         Exits(2, "et-generate: error: --length must be an int in [1, 20000], got 0")),
    Case(T, "`et-generate --model nope`", lambda w: et_generate(["--prompt", "And", "--model", "nope"]),
         Exits(2, "et-generate: error: no language model 'nope'; available: kjv_ar, kjv_ar_transformer, kjv_mlm")),
    Case(T, "`et-generate --fill` of 300 characters", lambda w: et_generate(["--fill", "x" * 300]),
         Exits(2, "et-generate: error: text has 300 characters; a masked model fills 1..N = 64 at a time")),
    Case(T, "`et-generate --prompt a --fill b_`", lambda w: et_generate(["--prompt", "a", "--fill", "b_"]),
         Exits(2, "et-generate: error: give --prompt TEXT or --fill TEXT, not both")),
    Case(T, "`et-generate --top-p 2`", lambda w: et_generate(["--prompt", "a", "--top-p", "2"]),
         Exits(2, "et-generate: error: --top-p must be a finite number in (0, 1], got 2.0")),

    Case(T, "`et-train --images` a folder with a text file beside its photos (a one-step run)",
         lambda w: w.train_images(w.photo_folder("with-notes", [(40, 40), (40, 40)], ["notes.txt"])),
         Exits(0, "et-train: warning: skipped 1 file that is not an image: ")),
    Case(T, "`et-train --images` photos smaller than one 32 x 32 crop",
         lambda w: w.train_images(w.photo_folder("tiny-photos", [(31, 200), (20, 20), (64, 64)])),
         Exits(2, "et-train: error: no photo to train on holds one 32 x 32 crop: it needs a photo of at least 32 x 32 "
                  "pixels (height x width); the largest of the 2 is 31 x 200")),
    Case(T, "`et-train --images` a folder of one photo (none to hold out)",
         lambda w: w.train_images(w.photo_folder("one-photo", [(64, 64)])),
         Exits(2, "et-train: error: 1 photo: too few to hold one out; give at least 2")),
    # 4. paths
    Case(P, "`fit(name='../../x')`", lambda w: w.outside("../../x"),
         Raises("name must be a plain file name without folders, got '../../x'")),
    Case(P, "`fit(name='/tmp/x')` (absolute)", lambda w: w.outside("/tmp/x"),
         Raises("name must be a plain file name without folders, got '/tmp/x'")),
    Case(P, "`fit(name='a/b')`", lambda w: w.outside("a/b"), Raises("name must be a plain file name")),
    Case(P, "`fit(name='..')`", lambda w: w.outside(".."), Raises("name must be a plain file name")),
    Case(P, "`fit(name='')`", lambda w: w.outside(""), Raises("name must be a plain file name")),
    Case(P, "`et-train --name ../../x`", lambda w: et_train("tiny", out=str(w.path("cli")), name="../../x", steps=2, quiet=True),
         Exits(2, "et-train: error: --name must be a plain file name without folders, got '../../x'")),
    Case(P, "`et-train --name /tmp/x`", lambda w: et_train("tiny", out=str(w.path("cli")), name="/tmp/x", steps=2, quiet=True),
         Exits(2, "et-train: error: --name must be a plain file name without folders, got '/tmp/x'")),
    Case(P, "`et-train --out` naming a file", lambda w: et_train("tiny", out=str(w.a_file), steps=2, quiet=True),
         Exits(2, "a-file is a file, not a folder")),
    Case(P, "a shipped-checkpoint name with `../`", lambda w: checkpoint_path("../checks"),
         Raises("a shipped checkpoint name must be a plain file name without folders, got '../checks'")),
    Case(P, "`load_pretrained('../checks')`", lambda w: load_pretrained("../checks"),
         Raises("must be a plain file name without folders")),
    Case(P, "`load_pretrained('checkpoints/natural')`", lambda w: load_pretrained("checkpoints/natural"),
         Raises("must be a plain file name")),
    Case(P, "`load_language_model('../kjv_ar')`", lambda w: load_language_model("../kjv_ar"),
         Raises("no language model '../kjv_ar'")),
    Case(P, "`save_checkpoint` into a path whose folder is a file", lambda w: save_checkpoint(w.a_file / "m.npz", w.image_model),
         Raises("a-file is a file, not a folder")),
    Case(P, "`save_checkpoint` two folders below a file", lambda w: save_checkpoint(w.a_file / "sub" / "m.npz", w.image_model),
         Raises("a-file is a file, not a folder")),
    Case(P, "`save_checkpoint` onto a folder", lambda w: save_checkpoint(w.tmp, w.image_model),
         Raises("is a folder, not a file")),
    Case(P, "`save_run` into a path whose folder is a file",
         lambda w: save_run(w.a_file / "r.npz", w.image_model, {"history": []}, step=1),
         Raises("a-file is a file, not a folder")),
    Case(P, "`atomic_write` into a path whose folder is a file",
         lambda w: atomic_write(w.a_file / "x.json", lambda f: f.write(b"{}")),
         Raises("a-file is a file, not a folder")),
    Case(P, "`run_lock` of a path whose folder is a file", lambda w: run_lock(w.a_file / "r.npz").__enter__(),
         Raises("a-file is a file, not a folder")),
    Case(P, "`et-inpaint --out` below a file", lambda w: et_inpaint(str(w.photo), out=str(w.a_file / "o.png")),
         Exits(2, "et-inpaint: error: --out: ")),
    Case(P, "`recall_animation` into a path whose folder is a file",
         lambda w: recall_animation(np.ones((2, 16)), w.a_file / "r.gif"), Raises("a-file is a file, not a folder")),
    Case(P, "`et-classify --model ../x`", lambda w: et_classify([str(w.photo), "--model", "../x"]),
         Exits(2, "et-classify: error: a shipped checkpoint name must be a plain file name")),
    Case(P, "`et-inpaint` a file that does not exist", lambda w: et_inpaint(str(w.path("nope.png"))),
         Exits(2, "et-inpaint: error: no such file or folder: ")),
    Case(P, "`et-inpaint` an empty folder", lambda w: et_inpaint(str(w.folder("empty-dir", {}))),
         Exits(2, "empty-dir holds no image to inpaint: it is empty")),
    Case(P, "`et-inpaint` a folder without images", lambda w: et_inpaint(str(w.folder("notes-dir", {"notes.txt": b"hi"}))),
         Exits(2, "notes-dir holds no image to inpaint (only 1 other file, such as notes.txt)")),
    Case(P, "`et-inpaint` a folder of a photo and a text file (skipped)",
         lambda w: et_inpaint(str(w.folder("mixed-dir", {"a.png": w.coffee, "b.txt": b"hi"}))),
         Exits(0, "et-inpaint: warning: skipped 1 file that is not an image: ")),
    Case(P, "`et-inpaint` a photo smaller than the model's window", lambda w: et_inpaint(str(w.small_photo(20, 40))),
         Exits(2, "image 20 x 40 (height x width) is smaller than the model's 32 x 32 window")),
    Case(P, "`et-inpaint --mask` a file that does not exist", lambda w: et_inpaint(str(w.photo), mask=str(w.path("no-mask.png"))),
         Exits(2, "et-inpaint: error: --mask: no such file or folder: ")),
    Case(P, "`et-inpaint --mask` the photo itself", lambda w: et_inpaint(str(w.photo), mask=str(w.photo)),
         Exits(2, "photo.png is the photo itself; give the mask image")),
    Case(P, "`et-inpaint --mask` a folder without the photo's mask",
         lambda w: et_inpaint(str(w.photo), mask=str(w.folder("masks-other", {"other.png": w.photo}))),
         Exits(2, "--mask: no mask for ")),
    Case(P, "`et-inpaint --mask` a folder of two masks for one photo",
         lambda w: et_inpaint(str(w.photo), mask=str(w.folder("masks-two", {"photo.png": w.photo, "photo.bmp": w.photo}))),
         Exits(2, "masks for ")),
    Case(P, "`et-inpaint --out` an image file for two photos",
         lambda w: et_inpaint([str(w.photo), str(w.one_bit)], out=str(w.path("both.png"))),
         Exits(2, "--out ")),
    Case(P, "`et-inpaint --out` the input photo", lambda w: et_inpaint(str(w.photo), out=str(w.photo)),
         Exits(2, "which it would overwrite; give another file")),
    Case(P, "`et-train --text` a file that does not exist", lambda w: w.train_text(w.path("nope.txt")),
         Exits(2, "et-train: error: ")),
    Case(P, "`et-train --text` a folder", lambda w: w.train_text(w.tmp), Exits(2, "is a folder, not a text file")),
    Case(P, "`et-train --text --valid` a file that does not exist",
         lambda w: w.train_text(w.text("ok.txt", b"In the beginning.\n" * 500), "--valid", w.path("nope.txt")),
         Exits(2, "nope.txt: no such file")),

    Case(P, "`et-train --images` a folder that does not exist", lambda w: w.train_images(w.path("no-photos")),
         Exits(2, "et-train: error: no such folder: ")),
    Case(P, "`et-train --images` an empty folder", lambda w: w.train_images(w.photo_folder("no-files")),
         Exits(2, "holds no image to train on: it is empty")),
    Case(P, "`et-train --images` a folder of text files only", lambda w: w.train_images(w.photo_folder("texts", texts=["a.txt"])),
         Exits(2, "holds no image to train on (only 1 other file, such as a.txt)")),
    # 5. library-internal messages turned into one line naming the argument
    Case(L, "`EnergyTransformer(key=42)`", lambda w: EnergyTransformer(ETConfig.small(), key=42),
         Raises("key " + KEY + " int 42")),
    Case(L, "`EnergyTransformer(key=None)`", lambda w: EnergyTransformer(ETConfig.small(), key=None),
         Raises("key " + KEY + " NoneType")),
    Case(L, "`EnergyTransformer(key=<float array>)`", lambda w: EnergyTransformer(ETConfig.small(), key=np.ones(2)),
         Raises("key " + KEY + " an array of dtype float64 and shape (2,)")),
    Case(L, "`EnergyTransformer(key='0')`", lambda w: EnergyTransformer(ETConfig.small(), key="0"),
         Raises("key " + KEY + " str '0'")),
    Case(L, "`EnergyTransformer(key=<two keys>)`",
         lambda w: EnergyTransformer(ETConfig.small(), key=jax.random.split(jax.random.key(0))),
         Raises("key " + KEY + " an array of dtype key<fry> and shape (2,)")),
    Case(L, "`EnergyTransformer(key=jax.random.PRNGKey(0))` (a legacy key)",
         lambda w: EnergyTransformer(ETConfig.small(), key=jax.random.PRNGKey(0)).memory.Xi, FINITE),
    Case(L, "`ImageEnergyTransformer(key=42)`", lambda w: ImageEnergyTransformer(ImageETConfig.tiny(), key=42),
         Raises("key " + KEY)),
    Case(L, "`CausalET(key=None)`", lambda w: CausalET(w.lm_config, key=None), Raises("key " + KEY)),
    Case(L, "`MaskedET(key=42)`", lambda w: MaskedET(replace(w.lm_config, objective="mlm"), key=42), Raises("key " + KEY)),
    Case(L, "`CausalTransformer(key='a')`", lambda w: CausalTransformer(w.lm_config, key="a"), Raises("key " + KEY)),
    Case(L, "`ImageClassifier(key=1.5)`", lambda w: ImageClassifier(ClassifierConfig(), key=1.5),
         Raises("key " + KEY + " float 1.5")),
    Case(L, "`TransformerBlock(key=42)`", lambda w: TransformerBlock(8, 2, 4, 16, key=42), Raises("key " + KEY)),
    Case(L, "a `.npy` file passed as a checkpoint", lambda w: load_checkpoint(w.npy, ImageEnergyTransformer),
         Raises("weights.npy: not a readable checkpoint (it is a .npy file, which holds one bare array)")),
    Case(L, "`et-classify --model` a `.npy` file", lambda w: et_classify([str(w.photo), "--model", str(w.npy)]),
         Exits(2, "weights.npy: not a readable checkpoint")),
    Case(L, "a checkpoint header nested 100 000 deep", lambda w: read_checkpoint(
        w.ckpt_with("deep.npz", header="[" * 100_000 + "]" * 100_000)), Raises("its header is nested too deeply")),
    Case(L, "a checkpoint header that is a JSON list", lambda w: read_checkpoint(w.ckpt_with("list.npz", header="[1, 2]")),
         Raises("its header is a JSON list, not an object")),
    Case(L, "a text file named `.npz`", lambda w: load_checkpoint(w.text_file, ImageEnergyTransformer),
         Raises("notes.npz: not a readable checkpoint (BadZipFile")),
    Case(L, "a truncated checkpoint", lambda w: load_checkpoint(w.truncated, ImageEnergyTransformer),
         Raises("cut.npz: not a readable checkpoint")),
    Case(L, "`fill(rounds=0)`", lambda w: fill(w.mlm, "ab_d", rounds=0), Raises("fill.rounds must be an int >= 1, got 0")),
    Case(L, "`fill(rounds=-3)`", lambda w: fill(w.mlm, "ab_d", rounds=-3), Raises("fill.rounds must be an int >= 1, got -3")),
    Case(L, "`fill` of one blank", lambda w: fill(w.mlm, "ab_d"), Gives("the text with its blank filled",
                                                                      lambda r: len(r) == 4 and r[:2] + r[3] == "abd")),
    Case(L, "`TrainConfig(batch_size=0)`", _cfg(batch_size=0), Raises("TrainConfig.batch_size must be an int >= 1, got 0")),
    Case(L, "`predict_images(batch_size=0)`", lambda w: predict_images(
        w.image_model, np.zeros((2, 1, 28, 28), np.float32), np.zeros((2, 16), bool), batch_size=0),
         Raises("predict_images.batch_size must be an int >= 1, got 0")),
    Case(L, "`predict_proba(chunk=0)`", lambda w: load_pretrained("fashion_mnist_classifier").predict_proba(
        np.zeros((2, 1, 28, 28), np.float32), chunk=0), Raises("predict_proba.chunk must be an int >= 1, got 0")),
    Case(L, "`TrainConfig(seed=-1)`", _cfg(seed=-1), Raises("TrainConfig.seed must be an int in [0, 2147483647], got -1")),
    Case(L, "`TrainConfig(seed=2**64)`", _cfg(seed=2**64), Raises("TrainConfig.seed must be an int in [0, 2147483647]")),
    Case(L, "`generate(seed=-1)`", lambda w: generate(w.ar, "ab", 3, seed=-1),
         Raises("generate.seed must be an int >= 0, got -1")),
    Case(L, "`inpaint_photo(seed=-1)`", lambda w: inpaint_photo(w.image_model, np.zeros((1, 28, 28), np.float32), seed=-1),
         Raises("inpaint_photo.seed must be an int >= 0, got -1")),
    Case(L, "`eval_set(seed=-1)`", lambda w: eval_set(np.zeros((4, 1, 28, 28), np.float32), 16, 2, 0.5, seed=-1),
         Raises("eval_set.seed must be an int >= 0, got -1")),
    Case(L, "`paired_ratio` of unpaired errors", lambda w: paired_ratio(np.ones(3), np.ones(4)),
         Raises("paired_ratio: a and b must be 1-D errors of the same >= 2 images, got shapes (3,) and (4,)")),
    Case(W, "`paired_ratio` of errors holding NaN", lambda w: paired_ratio(np.array([1.0, np.nan]), np.ones(2)),
         Raises("paired_ratio: errors must be finite and >= 0")),
    Case(W, "`paired_ratio` where b's errors are mostly 0", lambda w: paired_ratio(np.eye(10)[0], np.eye(10)[-1]),
         Raises("b's errors are 0 on so many images that resamples of them are all 0: no interval")),
    Case(L, "`BatchIterator(seed=-1)`", lambda w: BatchIterator(np.zeros((4, 1, 2, 2)), 2, seed=-1),
         Raises("BatchIterator.seed must be an int >= 0, got -1")),
    Case(L, "`load_natural(seed=-1)`", lambda w: load_natural("test", n=2, seed=-1),
         Raises("load_natural.seed must be an int >= 0, got -1")),
    Case(L, "`window_stream(seed=-1)`", lambda w: window_stream(np.arange(100), 5, 2, seed=-1),
         Raises("window_stream.seed must be an int >= 0, got -1")),
    Case(L, "`labelled_batches(seed=-1)`",
         lambda w: labelled_batches(Split(np.zeros((4, 1, 2, 2)), np.zeros(4, int)), 2, seed=-1),
         Raises("labelled_batches.seed must be an int >= 0, got -1")),
    Case(L, "`TrainConfig(lr=inf)`", _cfg(lr=float("inf")), Raises("TrainConfig.lr must be a finite number > 0, got inf")),
    Case(L, "`TrainConfig(clip=nan)`", _cfg(clip=float("nan")), Raises("TrainConfig.clip must be a finite number > 0, got nan")),
    Case(L, "`et-train --lr inf`", lambda w: et_train("tiny", out=str(w.path("cli")), lr=float("inf"), quiet=True),
         Exits(2, "et-train: error: TrainConfig.lr must be a finite number > 0, got inf")),
    Case(L, "`et-train --batch-size 0`", lambda w: et_train("tiny", out=str(w.path("cli")), batch_size=0, quiet=True),
         Exits(2, "et-train: error: TrainConfig.batch_size must be an int >= 1, got 0")),
    Case(L, "`et-train --seed -1`", lambda w: et_train("tiny", out=str(w.path("cli")), seed=-1, quiet=True),
         Exits(2, "et-train: error: TrainConfig.seed must be an int in [0, 2147483647], got -1")),
    Case(L, "`et-train --alpha nan`", lambda w: et_train("tiny", out=str(w.path("cli")), alpha=float("nan"), quiet=True),
         Exits(2, "et-train: error: ImageETConfig.alpha must be a finite number > 0, got nan")),
    Case(L, "`et-train --descent-steps 100000000`",
         lambda w: et_train("tiny", out=str(w.path("cli")), descent_steps=10**8, quiet=True),
         Exits(2, "et-train: error: ImageETConfig.T must be an int in [1, 10000], got 100000000")),
    Case(L, "`et-generate --seed -1`", lambda w: et_generate(["--prompt", "And", "--length", "3", "--seed", "-1"]),
         Exits(2, "et-generate: error: --seed must be an int >= 0, got -1")),
    Case(L, "`et-inpaint --seed -1`", lambda w: et_inpaint(str(w.photo), out=str(w.path("s.png")), seed=-1),
         Exits(2, "et-inpaint: error: inpaint_photo.seed must be an int >= 0, got -1")),
    Case(L, "`et-inpaint --mask-ratio 1.5`", lambda w: et_inpaint(str(w.photo), out=str(w.path("m.png")), mask_ratio=1.5),
         Exits(2, "et-inpaint: error: --mask-ratio must be in (0, 1), got 1.5")),
    Case(L, "`et-inpaint --mask` an image of another size than the photo",
         lambda w: et_inpaint(str(w.photo), out=str(w.path("m.png")), mask=str(w.mask_png(32, 64, 255))),
         Exits(2, "mask.png is 32 x 64 pixels but the photo is 64 x 64")),
    Case(L, "`et-inpaint --mask` an all-black image (nothing to fill)",
         lambda w: et_inpaint(str(w.photo), out=str(w.path("m.png")), mask=str(w.mask_png(64, 64, 0))),
         Exits(2, "et-inpaint: error: region holds no pixel of the photo's whole 4 x 4 patches: nothing to fill")),
    Case(L, "`ClassicalHopfield.recall(key=7)` (a seed, not a key)", lambda w: w.binary.recall(w.binary.Xi[0], key=7),
         Raises("key " + KEY + " int 7")),
    Case(L, "`recall_batch(key=7)`", lambda w: recall_batch(w.binary, w.binary.Xi, key=7), Raises("key " + KEY + " int 7")),
    Case(L, "`recall_batch` with a key per cue (one key is split)",
         lambda w: recall_batch(w.binary, w.binary.Xi, key=jax.random.split(jax.random.key(0), 3)),
         Raises("key " + KEY + " an array of dtype key<fry> and shape (3,)")),
    Case(L, "`random_patterns(key=0)`", lambda w: random_patterns(0, 3, 8), Raises("key " + KEY + " int 0")),
    Case(L, "`flip_bits(key=1)`", lambda w: flip_bits(1, jnp.ones(4), 0.1), Raises("key " + KEY + " int 1")),
    Case(L, "`random_masks(key=3)`", lambda w: random_masks(3, 2, 16, 0.5), Raises("key " + KEY + " int 3")),
    Case(L, "`bit_error_curve(key=5)`", lambda w: bit_error_curve(5, 16, [8]), Raises("key " + KEY + " int 5")),
    Case(L, "`inpaint_photo(batch_size=0)`", lambda w: inpaint_photo(w.image_model, np.zeros((1, 28, 28), np.float32),
                                                                      batch_size=0),
         Raises("inpaint_photo.batch_size must be an int >= 1, got 0")),
    Case(L, "`inpaint_photo(batch_size=-1)`", lambda w: inpaint_photo(w.image_model, np.zeros((1, 28, 28), np.float32),
                                                                       batch_size=-1),
         Raises("inpaint_photo.batch_size must be an int >= 1, got -1")),
    Case(L, "`centre_weights(rows=0)`", lambda w: centre_weights(0, 4), Raises("centre_weights.rows must be an int >= 1, got 0")),
    Case(L, "`side_by_side(gap=-1)`", lambda w: side_by_side(np.zeros((1, 2, 2)), gap=-1),
         Raises("side_by_side.gap must be an int >= 0, got -1")),
    Case(L, "`random_patterns(K=-1)`", lambda w: random_patterns(jax.random.key(0), -1, 8),
         Raises("random_patterns.K must be an int >= 1, got -1")),
    Case(L, "`random_masks(B=0)`", lambda w: random_masks(jax.random.key(0), 0, 16, 0.5),
         Raises("random_masks.B must be an int >= 1, got 0")),
    Case(L, "`pattern_mosaic(ncols=0)`", lambda w: pattern_mosaic(np.ones((2, 16)), ncols=0),
         Raises("pattern_mosaic.ncols must be an int >= 1, got 0")),
    Case(L, "`render_glyph(size=4)`", lambda w: render_glyph("A", size=4),
         Raises("render_glyph.size must be an int >= 8, got 4")),
    Case(L, "`bit_error_curve(trials=0)`", lambda w: bit_error_curve(jax.random.key(0), 16, [8], trials=0),
         Raises("bit_error_curve.trials must be an int >= 1, got 0")),
    Case(L, "`measure_capacity(chunk=0)`", lambda w: measure_capacity(2, [16], chunk=0),
         Raises("measure_capacity.chunk must be an int >= 1, got 0")),
    Case(L, "`energy_recall(nsteps=-1)`", lambda w: energy_recall(w.et.energy, w.x, -1, 0.1),
         Raises("energy_recall.nsteps must be an int in [0, 10000], got -1")),
    Case(L, "`record_every(every=0)`", lambda w: record_every(lambda x, k: x, lambda x: x, jnp.zeros(2), 4, 0),
         Raises("record_every.every must be an int >= 1, got 0")),
    Case(L, "an all-False Hopfield mask", lambda w: w.hop.update(jnp.ones(4), jnp.zeros(3, bool)),
         Raises("mask allows no pattern")),
    Case(L, "an all-False Hopfield mask closed over inside `jax.jit` (its value known while tracing)",
         lambda w: jax.jit(lambda x: w.hop.update(x, w.no_pattern))(jnp.ones(4)), Raises("mask allows no pattern")),
    Case(L, "an all-False Hopfield mask under `eqx.filter_jit`",
         lambda w: eqx.filter_jit(lambda x, m: w.hop.update(x, m))(jnp.ones(4), jnp.zeros(3, bool)),
         RaisesAtRun("mask allows no pattern")),
    Case(L, "a Hopfield mask of the wrong length", lambda w: w.hop.energy(jnp.ones(4), jnp.ones(2, bool)),
         Raises("mask must be a boolean vector of length K=3")),
    Case(L, "an all-False Hopfield mask under plain `jax.jit` (Equinox's check inside JAX's callback error)",
         lambda w: jax.jit(lambda x, m: w.hop.update(x, m))(jnp.ones(4), jnp.zeros(3, bool)),
         RaisesAtRun("mask allows no pattern")),
    Case(L, "`et-train --text` a binary file", lambda w: w.train_text(w.text("bin.txt", b"PK\x03\x04\x00\x00rest")),
         Exits(2, "bin.txt is a binary file, not text (a NUL byte at offset 4)")),
    Case(L, "`et-train --text` a Latin-1 file (not UTF-8)",
         lambda w: w.train_text(w.text("latin1.txt", "café\n".encode("latin-1"))),
         Exits(2, "latin1.txt is not UTF-8 text: byte 0xe9 at offset 3 (--errors replace")),
    Case(L, "`et-train --text` an empty file", lambda w: w.train_text(w.text("empty.txt", b"")),
         Exits(2, "empty.txt is empty")),
    Case(L, "`et-train --text` a text of 12 characters", lambda w: w.train_text(w.text("tiny.txt", b"hello world\n")),
         Exits(2, "fewer than one window of 129 (preset small): give more text")),
    Case(L, "`et-train --text --errors ignore`", lambda w: w.train_text(w.text("ok2.txt", b"abc\n"), "--errors", "ignore"),
         Exits(2, "errors must be 'strict' or 'replace', got 'ignore'")),
    Case(L, "`et-train --text --objective lm`", lambda w: w.train_text(w.text("ok3.txt", b"abc\n" * 400), "--objective", "lm"),
         Exits(2, "unknown objective 'lm'; choose from ['causal', 'masked']")),
    Case(L, "`et-generate --unknown drop`", lambda w: et_generate(["--prompt", "Zoë", "--unknown", "drop"]),
         Exits(2, "et-generate: error: --unknown must be error, skip or replace, got 'drop'")),

    # 6. download integrity
    Case(D, "the Fashion-MNIST address", lambda w: FASHION_MNIST_URL, Gives("https", lambda r: r.startswith("https://"))),
    Case(D, "the pinned SHA-256 sums against the Debian package's files (recompressed, the same data)",
         lambda w: {p.name[:-3]: idx_sha256(p) for p in Path(FASHION).glob("*.gz")},
         Gives("equal, file for file", lambda r: r == FASHION_MNIST_SHA256), needs=FASHION),
    Case(D, "`download_fashion_mnist` from an intact copy", lambda w: w.download(w.mirror, "dl-ok"),
         Gives("the four files installed", lambda r: r == sorted(f"{s}.gz" for s in FASHION_MNIST_SHA256)), needs=FASHION),
    Case(D, "`download_fashion_mnist` of a file with one bit flipped", lambda w: w.download(w.corrupt_mirror("bit"), "dl-bit"),
         Raises("t10k-labels-idx1-ubyte.gz: SHA-256 of its data is 6c210ec5"), needs=FASHION),
    Case(D, "`download_fashion_mnist` of a truncated file", lambda w: w.download(w.corrupt_mirror("cut"), "dl-cut"),
         Raises("SHA-256 of its data is unreadable, expected 0402a96d"), needs=FASHION),
]


class Padded(eqx.Module):
    "`Line` with 2 million more (unused) parameters: its checkpoints take a while to write (fault-injection tests)"
    w: jax.Array
    pad: jax.Array
    config: TrainConfig = eqx.field(static=True)

    def __init__(self, config, *, key): self.w, self.pad, self.config = jax.random.normal(key, (2,)), jnp.zeros(2_000_000), config
