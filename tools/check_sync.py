#!/usr/bin/env python
"""Check, without touching the work tree, that the package is what the notebooks export and that the
notebooks are clean.

A copy of the notebooks, pyproject.toml, settings.ini and the package goes to a temporary folder, where
`nbdev-export` and `nbdev-clean` run; any module that the export changes, adds or removes and any notebook
that the clean changes is reported by name (with the first lines of its diff), and the exit status is 1.

Usage: python -m tools.check_sync [--root DIR] [--no-clean]
"""
from __future__ import annotations

import argparse
import difflib
import filecmp
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints"}


def _files(d: Path, suffixes) -> dict[str, Path]:
    if not d.exists(): return {}
    return {p.relative_to(d).as_posix(): p for p in sorted(d.rglob("*"))
            if p.is_file() and p.suffix in suffixes and not (set(p.relative_to(d).parts) & SKIP_DIRS)}


def _nbdev(cmd: str, cwd: Path, *args) -> subprocess.CompletedProcess:
    "Run an nbdev command of this Python's environment in `cwd`."
    exe = Path(sys.executable).parent / cmd
    call = [str(exe) if exe.exists() else (shutil.which(cmd) or cmd), *args]
    return subprocess.run(call, cwd=cwd, capture_output=True, text=True)


def _diff(a: Path | None, b: Path | None, name: str, n: int = 12) -> str:
    la = a.read_text(encoding="utf-8", errors="replace").splitlines() if a else []
    lb = b.read_text(encoding="utf-8", errors="replace").splitlines() if b else []
    d = list(difflib.unified_diff(la, lb, f"{name} (work tree)", f"{name} (exported)", n=1, lineterm=""))
    more = f"\n      ... {len(d) - n} more diff lines" if len(d) > n else ""
    return "\n".join("      " + l for l in d[:n]) + more


def check(root: Path, clean: bool = True) -> list[str]:
    "Problems found (empty when the package and notebooks are in sync)."
    from nbdev.config import get_config
    cfg = get_config(root)
    lib, nbs = Path(cfg.lib_path), Path(cfg.nbs_path)
    lib_rel, nbs_rel = lib.relative_to(cfg.config_path), nbs.relative_to(cfg.config_path)
    probs = []
    with tempfile.TemporaryDirectory(prefix="check_sync_") as tmp:
        tmp = Path(tmp)
        shutil.copytree(nbs, tmp / nbs_rel, symlinks=True, ignore=shutil.ignore_patterns(*SKIP_DIRS, "_proc"))
        for f in ("pyproject.toml", "settings.ini", "_quarto.yml", "setup.py"):
            if (root / f).exists(): shutil.copy2(root / f, tmp / f)
        if lib.exists(): shutil.copytree(lib, tmp / lib_rel, ignore=shutil.ignore_patterns(*SKIP_DIRS))

        r = _nbdev("nbdev-export", tmp)
        if r.returncode:
            return [f"nbdev-export failed on a copy of the notebooks:\n{r.stderr.strip() or r.stdout.strip()}"]
        before, after = _files(lib, {".py"}), _files(tmp / lib_rel, {".py"})
        for name in sorted(set(before) | set(after)):
            a, b = before.get(name), after.get(name)   # b is never None: the package was copied first
            path = f"{lib_rel.as_posix()}/{name}"
            if a is None: probs.append(f"{path} is not in the work tree but the notebooks export it (run `make export`)")
            elif not filecmp.cmp(a, b, shallow=False):
                probs.append(f"{path} differs from what the notebooks export (edit the notebook, then `make export`):\n"
                             + _diff(a, b, path))

        if clean:
            nb_before = _files(tmp / nbs_rel, {".ipynb"})
            orig = {k: v.read_bytes() for k, v in nb_before.items()}
            r = _nbdev("nbdev-clean", tmp)
            if r.returncode:
                probs.append(f"nbdev-clean failed on a copy of the notebooks:\n{r.stderr.strip() or r.stdout.strip()}")
            else:
                for name, p in _files(tmp / nbs_rel, {".ipynb"}).items():
                    if name in orig and p.read_bytes() != orig[name]:
                        nb = f"{nbs_rel.as_posix()}/{name}"
                        probs.append(f"{nb} is not clean (run `nbdev-clean --fname {nb}`)")
    return probs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent, help="project root")
    ap.add_argument("--no-clean", action="store_true", help="only check the export")
    a = ap.parse_args(argv)
    t0 = time.time()
    probs = check(a.root.resolve(), clean=not a.no_clean)
    if probs:
        print(f"sync: FAILED, {len(probs)} problem(s):", file=sys.stderr)
        for p in probs: print("  - " + p, file=sys.stderr)
        return 1
    print(f"sync: ok, the package matches the notebooks{'' if a.no_clean else ' and the notebooks are clean'} "
          f"({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
