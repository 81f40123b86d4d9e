#!/usr/bin/env python
"""Test the notebooks as `nbdev-test` does, printing each notebook's result and time as soon as it finishes.

Each notebook goes through nbdev's own `test_nb` (the same cells: `tst_flags` skipped, `--flags` forced, `eval: false`
and `skip_exec` respected, the configured `cell_timeout`), in a pool of worker processes as `nbdev-test --n-workers`
runs them. The longest notebooks (by the times of the last run, kept in _proc/nbtest_times.json; in a fresh checkout
by the times committed in tools/nbtest_times.json; else by the size of their code) start first, so the workers finish
together. A failing notebook prints nbdev's traceback (notebook and
cell) as it fails; the exit status is 1 if any failed.

When XLA_FLAGS asks for quick compilation (`make test` does: its notebooks mostly compile small programs and run them
for moments), the notebooks named by --optimised (those that mostly run large programs: whole photos, the shipped
models) run in workers of their own with XLA's default optimisation instead.

Usage: python -m tools.nbtest [nbs/01_energy_transformer.ipynb ...] [--n-workers 2] [--flags slow] [--cell-timing-min 5]
       [--optimised 14_inpaint.ipynb,...]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from fastcore.foundation import working_directory
from nbdev.config import get_config, import_obj
from nbdev.doclinks import nbglob
from nbdev.test import nb_test_cells, test_nb

ROOT = Path(__file__).resolve().parents[1]
TIMES = ROOT / "_proc" / "nbtest_times.json"
COMMITTED_TIMES = Path(__file__).with_name("nbtest_times.json")  # a full run's, for a checkout that has not run one
# the XLA flags of quick compilation: unoptimised code, and XLA's older loop emitter for fused element-wise code, which
# compiles small programs in about half the time of the newer fusion emitters (and runs large ones more slowly)
QUICK_COMPILE = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")


def full_optimisation():
    "Worker set-up: XLA_FLAGS without the quick-compilation flags (read when JAX starts its CPU backend)"
    flags = os.environ.get("XLA_FLAGS", "").split()
    os.environ["XLA_FLAGS"] = " ".join(f for f in flags if f not in QUICK_COMPILE)


def code_size(nb: Path) -> int:
    "Characters of code in a notebook: a first guess at its test time (outputs and prose excluded)"
    return sum(len("".join(c["source"])) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
               if c["cell_type"] == "code")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="notebooks to test (default: every notebook nbdev-test tests)")
    ap.add_argument("--n-workers", type=int, default=2, help="notebooks tested at the same time")
    ap.add_argument("--flags", default="", help="space-separated test flags to run (e.g. slow)")
    ap.add_argument("--cell-timing-min", type=float, default=None, help="also print each cell slower than this (seconds)")
    ap.add_argument("--optimised", default="", help="comma-separated notebook names run with XLA's default optimisation")
    a = ap.parse_args(argv)
    cfg = get_config()
    skip, force = cfg.tst_flags.split(), a.flags.split()
    files = [p.resolve() for p in a.notebooks] or [f.absolute() for f in sorted(nbglob(cfg.nbs_path, as_path=True))
                                                   if not (f.parent / ".notest").exists()]
    for f in files:
        if not f.is_file(): sys.exit(f"nbtest: no notebook at {f}")
    last = next((json.loads(t.read_text()) for t in (TIMES, COMMITTED_TIMES) if t.is_file()), {})
    files.sort(key=lambda f: -last.get(f.name, code_size(f) / 200))  # longest first (by its code when never timed)
    with working_directory(cfg.nbs_path):
        if setup := cfg.get("test_setup"): import_obj(setup)([c for f in files for c in nb_test_cells(f, skip, force)])
        t0, times, failed = time.time(), {}, []
        optimised = set(a.optimised.split(",")) if QUICK_COMPILE[0] in os.environ.get("XLA_FLAGS", "") else set()
        print(f"nbtest: {len(files)} notebooks, {a.n_workers} at a time" + (f" ({a.n_workers} more for the optimised ones)"
              if optimised else ""), flush=True)
        n = max(1, a.n_workers)
        with ProcessPoolExecutor(n) as ex, ProcessPoolExecutor(n, initializer=full_optimisation) as ex_opt:
            jobs = {(ex_opt if f.name in optimised else ex).submit(
                        test_nb, f, skip_flags=skip, force_flags=force, basepath=cfg.config_path,
                        cell_timeout=cfg.cell_timeout or None, cell_timing_min=a.cell_timing_min): f for f in files}
            for job in as_completed(jobs):
                f = jobs[job]
                ok, secs = job.result()
                times[f.name] = round(secs, 1)
                if not ok: failed.append(f.name)
                print(f"[{len(times):2d}/{len(files)}] {f.name}: {'ok' if ok else 'FAILED'} in {secs:.0f} s "
                      f"({time.time() - t0:.0f} s elapsed)", flush=True)
    if not a.notebooks and not force:
        TIMES.parent.mkdir(exist_ok=True)
        TIMES.write_text(json.dumps(times, indent=1, sort_keys=True))
    top = ", ".join(f"{n} {t:.0f} s" for n, t in sorted(times.items(), key=lambda o: -o[1])[:5])
    print(f"nbtest: {len(files) - len(failed)} of {len(files)} notebooks passed in {time.time() - t0:.0f} s "
          f"(slowest: {top})" + (f"; FAILED: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
