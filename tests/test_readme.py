"""README.md's examples run as shown, and so does every `et-*` command that README.md or a tutorial page shows.

* Each ```python block of README.md runs on its own in a fresh interpreter; where the README shows its output (the
  indented block after it), the output is the same.
* Each `et-*` command with arguments, in a code block or inline code of README.md or of a notebook's Markdown, runs
  in a folder holding the files the examples name (photo.jpg, coat.png, shoe.jpg); placeholders (PHOTO, IMAGE...)
  become those files, and `et-train` gets a tiny budget (a full run takes hours). A usage synopsis (one with
  [optional] parts) is checked against `--help`. A command that another shown command extends with more options runs
  once, in the longer form. Shell lines that are not `et-*` commands (make, git, pip) are not run here: `make` is this
  test suite, the others need a network.
* Each command's `--help` lists every option with a one-line help text, in the one style the four share.

The snippets and commands run two at a time (each is a fresh process that imports JAX).
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from skimage import data

from energy_transformer.data import load_fashion_mnist

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PLACEHOLDERS = {"PHOTO": ["photo.jpg"], "IMAGE...": ["coat.png", "shoe.jpg"], "S": ["1"]}  # S: a seed
# et-train's shown runs take hours: the same command with a budget of two steps and a small evaluation
SMALL = {"et-train": ["--steps", "2", "--eval-every", "2", "--eval-size", "16", "--final-eval-size", "16", "--quiet"]}
COMMANDS = sorted(s.split("=")[0] for s in
                  re.search(r"^console_scripts\s*=\s*(.*)$", (ROOT / "settings.ini").read_text(), re.M).group(1).split())


def python_blocks(md: str) -> list[tuple[str, str | None]]:
    "Each ```python block of `md` with the output shown right after it (an indented block), or None"
    out = []
    for m in re.finditer(r"^``` ?python\n(.*?)^```\n((?:\n|    [^\n]*\n)*)", md, re.M | re.S):
        shown = "\n".join(l[4:] for l in m.group(2).splitlines()).strip()
        out.append((m.group(1), shown or None))
    return out


def code_blocks(md: str) -> list[tuple[str, str]]:
    "The fenced code blocks of `md` as (language, text), fences paired in order"
    blocks, lang, body = [], None, []
    for line in md.splitlines():
        if line.startswith("```"):
            if lang is None: lang, body = line[3:].strip(), []
            else: blocks.append((lang, "".join(body))); lang = None
        elif lang is not None: body.append(line + "\n")
    return blocks


def shell_scripts(md: str) -> list[str]:
    "The ```sh blocks of `md` that run an `et-*` command, without the lines that are not run here (make, git, pip, cd)"
    return ["".join(l for l in b.splitlines(keepends=True) if not re.match(r"\s*(make|git|pip|cd)\b", l))
            for lang, b in code_blocks(md) if lang in ("sh", "bash", "shell") and re.search(r"^\s*et-[a-z]+ ", b, re.M)]


def et_commands(md: str) -> list[str]:
    "The `et-*` commands with arguments in inline code and in code blocks other than shell scripts and Python"
    lines = [l.strip() for lang, b in code_blocks(md) if lang not in ("sh", "bash", "shell", "python") for l in b.splitlines()]
    prose = "\n".join(l for l in re.split(r"^```.*?^```", md, flags=re.M | re.S))
    inline = re.findall(r"(?<!`)`(et-[a-z]+ [^`]+)`", prose)
    return [c for c in lines + inline if re.match(r"et-[a-z]+ \S", c)]


# Pages whose shown commands run elsewhere on inputs of their own: the how-to guides run theirs in their own cells, and the
# library pages of `et-train --text` and `--images` (and the command-line page, which shows their usage and `--help`)
# show what tests/test_own_text.py and tests/test_own_images.py run end to end
RUN_ELSEWHERE = {"28_howto_own_photo.ipynb", "29_own_text.ipynb", "30_cli.ipynb", "31_howto_own_text.ipynb",
                 "33_own_images.ipynb", "34_howto_own_images.ipynb", "35_howto_classify.ipynb"}


def page_markdown() -> dict[str, str]:
    "README.md and the Markdown cells of every notebook, by name (but the pages of `RUN_ELSEWHERE`)"
    pages = {"README.md": README}
    for nb in sorted((ROOT / "nbs").glob("*.ipynb")):
        if nb.name in RUN_ELSEWHERE: continue
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        pages[nb.name] = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return pages


def shown(extract) -> dict[str, list[str]]:
    "Each distinct item `extract` finds on the pages, with the pages that show it"
    found = {}
    for page, md in page_markdown().items():
        for c in extract(md): found.setdefault(c, []).append(page)
    return found


SNIPPETS = python_blocks(README)
SCRIPTS = shown(shell_scripts)
SHOWN = {c: p for c, p in shown(et_commands).items() if not any(c in s.splitlines() for s in SCRIPTS)}  # run once


def covered(cmd: str, others: list[str]) -> bool:
    "Whether another command runs `cmd` with more options (`et-train tiny --processes 2` covers `et-train tiny`)"
    return any(o.startswith(cmd + " ") and "[" not in o for o in others)


RUN = [l.strip() for s in SCRIPTS for l in s.splitlines()] + list(SHOWN)
SHOWN = {c: p for c, p in SHOWN.items() if not covered(c, RUN)}  # the longer form runs, once


def to_argv(cmd: str) -> list[str]:
    "A shown command as the argv it runs with: placeholders replaced by the example files, the small budget added"
    words = shlex.split(cmd, comments=True)
    unknown = [w for w in words[1:] if re.fullmatch(r"[A-Z][A-Z_]*(\.\.\.)?", w) and w not in PLACEHOLDERS]
    assert not unknown, f"{cmd}: no example file for the placeholder(s) {unknown} (add one to PLACEHOLDERS)"
    argv = [str(BIN / words[0])] + [a for w in words[1:] for a in PLACEHOLDERS.get(w, [w])]
    return argv + SMALL.get(words[0], [])


def input_files(argv: list[str]) -> list[str]:
    "The image files a command reads (its .png/.jpg arguments that are not --out)"
    return [a for prev, a in zip(argv, argv[1:], strict=False)
            if re.search(r"\.(png|jpe?g)$", a, re.I) and prev != "--out"]


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory):
    "A folder with the files the examples name: a photo and two Fashion-MNIST test images (a coat and a sneaker)"
    d = tmp_path_factory.mktemp("examples")
    Image.fromarray(data.chelsea()).save(d / "photo.jpg", quality=90)
    images, labels = load_fashion_mnist("test")
    for name, label in (("coat.png", 4), ("shoe.jpg", 7)):
        Image.fromarray((images[np.flatnonzero(labels == label)[0], 0] * 255).astype(np.uint8)).save(d / name)
    return d


@pytest.fixture(scope="module")
def runs(example_dir):
    "Every snippet, script and shown command run in a folder of its own (with the example files), two at a time"
    env = {**{k: v for k, v in os.environ.items() if k not in ("ET_SLOW", "ET_RETRAIN", "ET_WRITE_SHIPPED")},
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}  # `python` and `et-*` are this environment's
    jobs = {f"snippet {i}": [sys.executable, "-c", code] for i, (code, _) in enumerate(SNIPPETS)}  # name: argv
    small = "".join(f'{w}() {{ command {w} "$@" {" ".join(args)}; }}\n' for w, args in SMALL.items())  # bash functions
    jobs |= {script: ["bash", "-e", "-c", small + script] for script in SCRIPTS}
    jobs |= {cmd: (to_argv(re.sub(r"\[.*", "", cmd).strip()) + ["--help"] if "[" in cmd else to_argv(cmd))
             for cmd in SHOWN}
    def run(item):
        name, argv = item
        cwd = example_dir / f"job{list(jobs).index(name)}"
        cwd.mkdir()
        for f in example_dir.iterdir():
            if f.is_file(): (cwd / f.name).symlink_to(f)
        for f in input_files(argv) if name in SHOWN else []:  # an image a page names: a photo or a garment
            if not (cwd / f).exists(): (cwd / f).symlink_to(example_dir / ("photo.jpg" if "inpaint" in argv[0] else "coat.png"))
        return name, subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    with ThreadPoolExecutor(2) as ex: return dict(ex.map(run, jobs.items()))


def test_the_readme_has_examples():
    assert len(SNIPPETS) >= 3 and (SCRIPTS or SHOWN)
    # the extraction itself, on a made-up page
    md = ("```python\nprint(1)\n```\n\n    1\n\nThen `et-x --a 1` and `et-x`.\n\n```sh\nmake test\net-y a.png --out b.png\n```\n"
          "```python\nx = 2\n```\n\n```\net-z PHOTO\n```\n")
    assert python_blocks(md) == [("print(1)\n", "1"), ("x = 2\n", None)]
    assert shell_scripts(md) == ["et-y a.png --out b.png\n"]
    assert et_commands(md) == ["et-z PHOTO", "et-x --a 1"]
    assert to_argv("et-classify IMAGE... --mirror  # a comment")[1:] == ["coat.png", "shoe.jpg", "--mirror"]
    assert input_files(to_argv("et-inpaint a.png --out b.png")) == ["a.png"]
    assert covered("et-x a", ["et-x a --b 1"]) and not covered("et-x a", ["et-x ab", "et-x a [--b B]", "et-x a"])


@pytest.mark.parametrize("i", range(len(SNIPPETS)))
def test_readme_python_block_runs_as_shown(runs, i):
    code, shown_output = SNIPPETS[i]
    r = runs[f"snippet {i}"]
    assert r.returncode == 0, f"README python block {i} failed:\n{code}\n{r.stderr[-3000:]}"
    if shown_output is not None:
        assert r.stdout.strip() == shown_output, f"README block {i} printed\n{r.stdout}\nbut the README shows\n{shown_output}"


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_shell_block_runs(runs, script):
    r = runs[script]
    assert r.returncode == 0, f"the shell block (shown in {', '.join(SCRIPTS[script])})\n{script}failed:\n{r.stderr[-3000:]}"
    assert r.stdout.strip(), f"the shell block\n{script}printed nothing"


@pytest.mark.parametrize("cmd", sorted(SHOWN))
def test_shown_command_runs(runs, cmd):
    r = runs[cmd]
    assert r.returncode == 0, f"`{cmd}` (shown in {', '.join(SHOWN[cmd])}) failed:\n{r.stderr[-3000:]}"
    if "[" in cmd:  # a synopsis: every option it names is one the command takes
        for opt in re.findall(r"--[a-z][a-z-]*", cmd): assert opt in r.stdout, f"{cmd}: {opt} is not in --help"
    else:
        assert r.stdout.strip(), f"`{cmd}` printed nothing"


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_style(cmd):
    "Every option is listed with its value type (or as a flag) and a help text on its line, as fastcore prints them"
    r = subprocess.run([str(BIN / cmd), "--help"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    options = re.findall(r"^  (--[a-z-]+)( \(\w+\))?\s{2,}(\S.*)$", r.stdout, re.M)
    assert options, r.stdout
    listed = {o for o, _, _ in options}
    usage = r.stdout.split("\n\n")[0]
    assert listed == set(re.findall(r"\[(--[a-z-]+)", usage)), r.stdout
    for opt, _, text in options:
        assert len(text) > 8, (cmd, opt, text)
    assert "energy_transformer" in r.stdout.strip().splitlines()[-1]  # the version line fastcore adds
