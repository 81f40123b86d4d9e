#!/usr/bin/env python
"""Re-run notebooks and save them with their outputs, as the site shows them.

Cells flagged `#| slow` (full training runs) are not run and keep the outputs they have; pass --slow to run
them too. Each notebook runs in its own folder (`nbs/`), stops at its first failing cell, and is written back
only if every cell ran; then `nbdev-clean` and `tools/shrink_figures.py` tidy it.

Usage: python tools/run_notebooks.py nbs/02_image_inpainting.ipynb [more notebooks] [--slow]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from execnb.shell import CaptureShell
from fastcore.nbio import read_nb, write_nb

HERE = Path(__file__).resolve().parent
SLOW = re.compile(r"^\s*#\s*\|\s*slow\s*$", re.MULTILINE)


def is_slow(cell) -> bool:
    "Whether a code cell carries nbdev's `#| slow` flag."
    return cell.cell_type == "code" and bool(SLOW.search(cell.source))


def run(path: Path, slow: bool) -> float:
    "Run one notebook in its folder and write it back with its outputs; returns the seconds it took."
    nb, t0, cwd = read_nb(path), time.perf_counter(), os.getcwd()
    shell = CaptureShell()
    try:
        os.chdir(path.parent)
        shell.set_path(str(path.parent.resolve()))
        shell.run_all(nb, exc_stop=True, preproc=lambda c: is_slow(c) and not slow)
    finally:
        os.chdir(cwd)
    write_nb(nb, path)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--slow", action="store_true", help="also run the cells flagged `#| slow`")
    a = ap.parse_args(argv)
    for p in a.notebooks:
        if not p.is_file(): sys.exit(f"run_notebooks: no notebook at {p}")
    for p in a.notebooks:
        print(f"{p}: ran in {run(p.resolve(), a.slow):.0f} s", flush=True)
    bin_ = Path(sys.executable).parent
    for p in a.notebooks: subprocess.run([str(bin_ / "nbdev-clean"), "--fname", str(p)], check=True)
    subprocess.run([sys.executable, str(HERE / "shrink_figures.py"), *map(str, a.notebooks)], check=True)


if __name__ == "__main__":
    main()
