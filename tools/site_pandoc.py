"""Running pandoc for the site build (tools/build_site.py): the readers it is given, the theme it renders with
(tools/site/), MathJax copied beside the pages, and the one error that stops a build."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SITE = Path(__file__).resolve().parent / "site"   # the theme: template, Lua filter, css, js, highlighting
MATHJAX = Path("/usr/share/javascript/mathjax")
# The parts of MathJax 2 that the TeX-AMS_CHTML configuration loads; copied so that _docs/ is self-contained.
MATHJAX_PARTS = ["MathJax.js", "config/TeX-AMS_CHTML.js", "extensions", "jax/element", "jax/input/TeX",
                 "jax/output/CommonHTML", "fonts/HTML-CSS/TeX/woff", "localization/en"]
# Quarto reads notebook markdown with pandoc's markdown; these are the parts the notebooks use.
# Heading ids come from tools/site/quarto.lua (Quarto's, which keep `.`), hence -auto_identifiers.
READER = ("ipynb-auto_identifiers+fenced_divs+bracketed_spans+link_attributes+implicit_figures+footnotes"
          "+definition_lists"
          "+header_attributes+fenced_code_attributes+inline_code_attributes+raw_attribute+smart")
MD_READER = READER.replace("ipynb", "markdown", 1)


class BuildError(Exception):
    "A problem that stops the build, reported as one clear message."


def run(cmd, cwd=None, what=""):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    warn = [l for l in r.stderr.splitlines() if l.strip()]
    if r.returncode != 0:
        raise BuildError(f"{what or cmd[0]} failed (exit {r.returncode}):\n" + r.stderr.strip())
    return r.stdout, warn


def copy_mathjax(dest: Path):
    if not (MATHJAX / "MathJax.js").exists():
        raise BuildError(f"MathJax not found at {MATHJAX} (Debian package libjs-mathjax; `make setup` installs it)")
    for part in MATHJAX_PARTS:
        s, d = MATHJAX / part, dest / part
        d.parent.mkdir(parents=True, exist_ok=True)
        if s.is_dir(): shutil.copytree(s, d, dirs_exist_ok=True, symlinks=False)
        else: shutil.copy2(s, d)
