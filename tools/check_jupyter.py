#!/usr/bin/env python
"""Run notebooks top to bottom as Jupyter does (nbclient, every cell, flags ignored) and check that they change no
tracked file.

Each notebook runs in a fresh kernel in its own folder (`nbs/`) without ET_SLOW, as a reader's run would, and is not
written back. The report gives each notebook's wall time and its slowest cells; a notebook fails when a cell raises,
when it takes longer than --budget seconds, or when a file that git tracks differs after the run (compared by
content with the state before it). Not part of `make test`: it takes minutes per notebook.

Usage: python -m tools.check_jupyter [nbs/02_image_inpainting.ipynb ...] [--budget 180] [--timeout 600]
       (no notebooks: every notebook in nbs/)
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

ROOT = Path(__file__).resolve().parents[1]


def tracked_state() -> dict[str, str]:
    "Content hash of every tracked file that differs from HEAD (or is deleted); the rest are as committed"
    out = subprocess.run(["git", "status", "--porcelain", "-z", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    paths = [e[3:] for e in out.split("\0") if e]
    return {p: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() if (ROOT / p).is_file() else "deleted" for p in paths}


def run(path: Path, timeout: int) -> tuple[float, list[tuple[float, int]], str | None]:
    "Execute one notebook in memory: (wall seconds, [(seconds, cell number)] slowest first, error or None)"
    nb = nbformat.read(path, as_version=4)
    starts, times = {}, []
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
                            on_cell_execute=lambda cell, cell_index: starts.__setitem__(cell_index, time.perf_counter()),
                            on_cell_executed=lambda cell, cell_index, execute_reply: times.append(
                                (time.perf_counter() - starts[cell_index], cell_index + 1)))
    env = {k: v for k, v in os.environ.items() if k not in ("ET_SLOW", "ET_RETRAIN", "ET_WRITE_SHIPPED")}
    t0, err = time.perf_counter(), None
    try: client.execute(env=env)
    except (CellExecutionError, CellTimeoutError) as e:
        msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip()  # without the traceback's colours
        err = msg.splitlines()[-1][:300] if msg else type(e).__name__
    return time.perf_counter() - t0, sorted(times, reverse=True), err


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("--budget", type=float, default=180, help="seconds a notebook may take (default 180)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a cell may take before it is stopped")
    a = ap.parse_args(argv)
    nbs = [p.resolve() for p in a.notebooks] or sorted((ROOT / "nbs").glob("*.ipynb"))
    for p in nbs:
        if not p.is_file(): sys.exit(f"check_jupyter: no notebook at {p}")
    failed = []
    for p in nbs:
        before = tracked_state()
        secs, times, err = run(p, a.timeout)
        after = tracked_state()
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        slow = ", ".join(f"cell {i} {t:.0f} s" for t, i in times[:3])
        probs = ([f"failed: {err}"] if err else []) + ([f"over the {a.budget:.0f} s budget"] if secs > a.budget else []) \
            + ([f"changed tracked files: {', '.join(changed)}"] if changed else [])
        name = p.relative_to(ROOT) if p.is_relative_to(ROOT) else p
        print(f"{name}: {secs:.0f} s ({slow})" + ("  FAILED: " + "; ".join(probs) if probs else ""), flush=True)
        if probs: failed.append(p.name)
    print(f"check_jupyter: {len(nbs) - len(failed)} of {len(nbs)} notebooks ran top to bottom within {a.budget:.0f} s "
          f"and changed no tracked file" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
