"""The exit statuses of the four console commands: 2 for a usage or input mistake, 130 when interrupted (Ctrl-C), and an
uncaught error (status 1 from Python) for any other failure, never turned into 2. Each command runs in this process,
its signal handlers restored after."""
import io
import os
import signal
from contextlib import redirect_stderr, redirect_stdout

import pytest

from energy_transformer import cli, image_training


def status_of(f):
    "Exit status (0 when it returns), standard error and output of a command run in this process"
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    err, out = io.StringIO(), io.StringIO()
    try:
        with redirect_stderr(err), redirect_stdout(out):
            try: f(); status = 0
            except SystemExit as e: status = e.code
    finally:
        for s, h in handlers.items(): signal.signal(s, h)
    return status, err.getvalue(), out.getvalue()


def ctrl_c(*args, **kwargs):
    "Stands in for a function a command calls: the user presses Ctrl-C while it runs"
    os.kill(os.getpid(), signal.SIGINT)  # its handler runs as soon as this call returns


def fails(*args, **kwargs): raise RuntimeError("a bug, not the user's mistake")


@pytest.fixture
def photo(tmp_path):
    from PIL import Image
    p = tmp_path / "p.png"
    Image.new("L", (40, 40), 128).save(p)
    return p


def commands(tmp_path, photo):
    "name -> (a call of the command with arguments that pass its checks, (module, function) that it calls first)"
    text = tmp_path / "t.txt"; text.write_text("In the beginning.\n" * 400)
    return {
        "et-train": (lambda: cli.et_train(["tiny", "--out", str(tmp_path), "--steps", "2", "--quiet"]),
                     (image_training, "preset")),
        "et-train --text": (lambda: cli.et_train(["--text", str(text), "--out", str(tmp_path), "--steps", "2", "--quiet"]),
                            (cli, "train_on_text")),
        "et-inpaint": (lambda: cli.et_inpaint(str(photo), out=str(tmp_path / "o.png")), (cli, "load_checkpoint")),
        "et-classify": (lambda: cli.et_classify([str(photo)]), (cli, "load_classifier")),
        "et-generate": (lambda: cli.et_generate(["--prompt", "And", "--length", "3"]),
                        (cli, "load_language_model")),
    }


MISTAKES = {  # a usage mistake (argparse) and an input mistake of each command
    "et-train": [lambda t, p: cli.et_train(["tiny", "--bogus"]),
                 lambda t, p: cli.et_train(["tiny", "--out", str(t), "--steps", "0", "--quiet"])],
    "et-train --text": [lambda t, p: cli.et_train(["--text", str(t / "t.txt"), "--bogus"]),
                        lambda t, p: cli.et_train(["--text", str(t / "missing.txt"), "--out", str(t)])],
    "et-inpaint": [lambda t, p: cli.et_inpaint(str(t / "missing.png")),
                   lambda t, p: cli.et_inpaint(str(p), mask_ratio=2.0)],
    "et-classify": [lambda t, p: cli.et_classify([str(p), "--bogus"]),
                    lambda t, p: cli.et_classify([str(t / "missing.png")])],
    "et-generate": [lambda t, p: cli.et_generate(["--bogus"]),
                    lambda t, p: cli.et_generate(["--length", "0"])],
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_mistakes_exit_2(name, tmp_path, photo):
    commands(tmp_path, photo)  # writes t.txt
    for mistake in MISTAKES[name]:
        status, err, _ = status_of(lambda m=mistake: m(tmp_path, photo))
        assert status == 2 and "Traceback" not in err and err.strip(), (name, status, err)


@pytest.mark.parametrize("name", ["et-train", "et-train --text", "et-inpaint", "et-classify", "et-generate"])
def test_interrupted_exits_130_and_other_failures_are_not_2(name, tmp_path, photo, monkeypatch):
    run, (module, function) = commands(tmp_path, photo)[name]
    with monkeypatch.context() as m:
        m.setattr(module, function, ctrl_c)
        status, err, _ = status_of(run)
    assert status == 130 and err.strip().endswith("interrupted") and "Traceback" not in err, (name, status, err)
    with monkeypatch.context() as m:
        m.setattr(module, function, fails)
        with pytest.raises(RuntimeError, match="a bug"): status_of(run)  # uncaught: Python's status 1, with its traceback
