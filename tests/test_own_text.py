"""`et-train --text` end to end on small texts: progress lines with the model's held-out bpc beside the tuned Kneser-Ney's,
the final score, Ctrl-C and `--resume` without losing a step, `et-generate --model` on the checkpoint, one-line errors."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from energy_transformer.checkpoint import read_checkpoint
from energy_transformer.counting import KneserNeyLM, kneser_ney_fill_bpc
from energy_transformer.text import CharVocab

LICENCES = Path("/usr/share/common-licenses")
pytestmark = pytest.mark.skipif(not (LICENCES / "GPL-3").is_file() or not (LICENCES / "GPL-2").is_file(),
                                reason="needs Debian's licence texts (base-files)")
EVAL = re.compile(r"^step (\d+): bpc ([\d.]+), kneser_ney_bpc ([\d.]+)$")


def command(name: str) -> list[str]:
    "The installed console script"
    return [shutil.which(name) or str(Path(sys.executable).parent / name)]


def run(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([*command(args[0]), *args[1:]], capture_output=True, text=True, timeout=timeout, env=ENV)


ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="module")
def text_file(tmp_path_factory) -> Path:
    "53 kB of licence text: the GPL 3 and the GPL 2, the first 53,000 bytes (ASCII)"
    f = tmp_path_factory.mktemp("text") / "licences.txt"
    f.write_bytes(((LICENCES / "GPL-3").read_bytes() + (LICENCES / "GPL-2").read_bytes())[:53_000])
    return f


def tail_split(text: str) -> tuple[str, str]:
    "The held-out tail as documented: the last 10% of the characters (rounded), the rest ending in a line break"
    n = round(0.1 * len(text))
    train, valid = text[:-n], text[-n:]
    return train + ("" if train.endswith("\n") else "\n"), valid + ("" if valid.endswith("\n") else "\n")


@pytest.fixture(scope="module")
def trained(text_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    r = run("et-train", "--text", str(text_file), "--out", str(out), "--name", "lic", "--steps", "12")
    return r, out


def test_progress_lines_show_the_kneser_ney_line_and_the_final_score(trained, text_file):
    r, out = trained
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    evals = [EVAL.match(l) for l in lines if l.startswith("step ")]
    assert all(evals) and [int(m[1]) for m in evals] == list(range(1, 12))  # every step but the last (the final score)
    kn = {float(m[3]) for m in evals}
    assert len(kn) == 1  # computed once, before training
    # the line is the Kneser-Ney at its logged order and discount on the held-out tail, recomputed here
    log = json.loads((out / "lic.json").read_text())
    train, valid = tail_split(text_file.read_text())
    alphabet = CharVocab.from_text(train + valid).chars
    model_kn = KneserNeyLM(train, log["kneser_ney"]["order"], alphabet, discount=log["kneser_ney"]["discount"])
    assert abs(model_kn.bpc(valid) - kn.pop()) < 1e-4
    assert log["chars"] == dict(train=len(train), valid=len(valid))
    # the model learns: its held-out bpc falls from the first evaluation to the last
    bpcs = [float(m[2]) for m in evals]
    assert bpcs[-1] < bpcs[0]
    final = lines[-1]
    assert re.fullmatch(rf"wrote {re.escape(str(out / 'lic.npz'))} and lic\.json: 12 steps, [\d.]+ CPU min; held-out bpc "
                        rf"[\d.]+ \(tuned Kneser-Ney: {log['kneser_ney']['bpc']:.4f}\)", final), final
    assert f"held-out bpc {log['evals'][-1]['bpc']:.4f}" in final and log["evals"][-1]["step"] == 12
    assert read_checkpoint(out / "lic.npz")[0]["step"] == 12 and "Traceback" not in r.stderr


def test_et_generate_samples_from_the_checkpoint(trained, text_file):
    r, out = trained
    g = run("et-generate", "--model", str(out / "lic.npz"), "--prompt", "This License", "--length", "60")
    assert g.returncode == 0, g.stderr
    new = g.stdout.rstrip("\n")
    assert new.startswith("This License") and len(new) == len("This License") + 60
    assert set(new) <= set(text_file.read_text())  # the user's alphabet, not the Bible's
    g = run("et-generate", "--model", str(out / "lic.npz"), "--length", "30")  # no prompt: from a line break
    assert g.returncode == 0 and len(g.stdout.rstrip("\n")) >= 29, g.stderr


def test_ctrl_c_ends_with_one_line_and_resume_loses_no_step(text_file, tmp_path):
    args = ["--text", str(text_file), "--out", str(tmp_path), "--name", "r", "--steps", "30"]
    p = subprocess.Popen([*command("et-train"), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    for line in p.stdout:  # the first evaluation (every 3 steps)
        if line.startswith("step 3:"): break
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=300)
    step = read_checkpoint(tmp_path / "r.npz")[0]["step"]
    assert p.returncode == 130 and "Traceback" not in err and 3 <= step < 30, (p.returncode, step, err[-2000:])
    assert err.strip().splitlines()[-1] == (f"et-train: interrupted at step {step} of 30; the state is saved in "
                                            f"{tmp_path / 'r.npz'}; to continue, run the same command with --resume")
    r = run("et-train", *args, "--resume")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1].startswith(f"wrote {tmp_path / 'r.npz'} and r.json: 30 steps")
    log = json.loads((tmp_path / "r.json").read_text())
    assert read_checkpoint(tmp_path / "r.npz")[0]["step"] == 30
    assert [e["step"] for e in log["evals"]] == list(range(3, 31, 3))  # each evaluation once, none lost or repeated
    steps = [h["step"] for h in log["history"]]
    assert steps == sorted(set(steps)) and steps[-1] == 30
    assert "Traceback" not in r.stderr


def test_masked_objective_beside_the_kneser_ney_fill(text_file, tmp_path):
    r = run("et-train", "--text", str(text_file), "--objective", "masked", "--out", str(tmp_path), "--steps", "2", "--quiet")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("\n") == 1 and "2 steps" in r.stdout  # --quiet: the final line only
    log = json.loads((tmp_path / "text_model.json").read_text())
    assert log["model"] == "MaskedET" and log["model_config"]["objective"] == "mlm"
    train, valid = tail_split(text_file.read_text())
    vocab = CharVocab.from_text(train + valid)
    kn = KneserNeyLM(train, log["kneser_ney"]["order"], vocab.chars, discount=log["kneser_ney"]["discount"])
    assert abs(kneser_ney_fill_bpc(kn, vocab, valid, log["model_config"]["N"]) - log["evals"][-1]["kneser_ney_bpc"]) < 1e-4


def one_error(r: subprocess.CompletedProcess) -> str:
    "The one stderr line of a failed command (exit status 2)"
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    return r.stderr.strip()


def test_bad_files_are_one_line_errors(tmp_path):
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    (tmp_path / "latin1.txt").write_bytes("Caf\u00e9 cr\u00e8me\n".encode("latin-1") * 20)
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "tiny.txt").write_text("a short note\n" * 10)
    cmd = lambda name, *more: one_error(run("et-train", "--text", str(tmp_path / name), "--out", str(tmp_path), *more))
    assert cmd("pic.png") == f"et-train: error: {tmp_path / 'pic.png'} is a binary file, not text (a NUL byte at offset 8)"
    assert cmd("latin1.txt") == (f"et-train: error: {tmp_path / 'latin1.txt'} is not UTF-8 text: byte 0xe9 at offset 3 "
                                 "(--errors replace, or errors='replace', reads each such byte as U+FFFD)")
    assert cmd("empty.txt") == f"et-train: error: {tmp_path / 'empty.txt'} is empty"
    assert cmd("missing.txt") == f"et-train: error: {tmp_path / 'missing.txt'}: no such file"
    # shorter than a context window of the small preset (129 characters to train on and 129 held out)
    assert cmd("tiny.txt") == ("et-train: error: the training text has 117 characters, fewer than one window of 129 "
                               "(preset small): give more text (at least about 1,290 characters)")
    # --errors replace reads the Latin-1 file (the error is now its length: 13 characters a line, 10% held out)
    assert "fewer than one window" in cmd("latin1.txt", "--errors", "replace")
    assert not list(tmp_path.glob("*.npz"))


def test_help_lists_the_presets_and_the_text_options():
    r = run("et-train", "--help")
    assert r.returncode == 0 and "preset: tiny, fashion_mnist, natural" in r.stdout and "--text FILE" in r.stdout
    r = run("et-train", "--text", "--help")
    assert r.returncode == 0 and all(o in r.stdout for o in ("--objective", "--preset", "--valid", "--errors", "--resume"))
