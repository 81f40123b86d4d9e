#!/usr/bin/env python
"""Re-run notebooks and save them with their outputs, as the site shows them.

The cells run are the ones `nbdev-test` runs (nbdev's `nb_test_cells`: the project's `tst_flags`, `eval: false`,
...); the others, such as the cells flagged `#| slow` (sweeps, timings), keep the outputs they have. Pass --slow to
run those too (it sets ET_SLOW=1, without which they do nothing; the slow cells that retrain the shipped models also
need ET_RETRAIN=1). Each notebook runs in its own folder (`nbs/`), stops at its first failing cell, and is written back
only if every cell ran; then `nbdev-clean` and `tools.shrink_figures` tidy it.

Usage: python -m tools.run_notebooks nbs/02_image_inpainting.ipynb [more notebooks] [--slow]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from execnb.shell import CaptureShell
from fastcore.nbio import read_nb, write_nb
from nbdev.config import get_config
from nbdev.test import nb_test_cells

from tools import shrink_figures


def run(path: Path, skip_flags: list[str], force_flags: list[str] = ()) -> float:
    "Run the cells of one notebook that `nbdev-test` would run, in its folder, and write it back with their outputs"
    nb, t0, cwd = read_nb(path), time.perf_counter(), os.getcwd()
    ran = {c.idx_ for c in nb_test_cells(path, skip_flags, list(force_flags))}
    shell = CaptureShell()
    try:
        os.chdir(path.parent)
        shell.set_path(str(path.parent.resolve()))
        shell.run_all(nb, exc_stop=True, preproc=lambda c: c.idx_ not in ran)
    finally:
        os.chdir(cwd)
    write_nb(nb, path)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--slow", action="store_true", help="also run the cells flagged `#| slow` (with ET_SLOW=1)")
    a = ap.parse_args(argv)
    for p in a.notebooks:
        if not p.is_file(): sys.exit(f"run_notebooks: no notebook at {p}")
    if a.slow: os.environ["ET_SLOW"] = "1"  # the slow cells do nothing without it
    for p in a.notebooks:
        secs = run(p.resolve(), get_config().tst_flags.split(), ["slow"] if a.slow else [])
        print(f"{p}: ran in {secs:.0f} s", flush=True)
    bin_ = Path(sys.executable).parent
    for p in a.notebooks: subprocess.run([str(bin_ / "nbdev-clean"), "--fname", str(p)], check=True)
    shrink_figures.main([str(p) for p in a.notebooks])


if __name__ == "__main__":
    main()
