#!/usr/bin/env python
"""Render the documentation site into the nbdev `doc_path` (`_docs/`) and write README.md.

With Quarto on PATH this is `nbdev-readme` + `nbdev-docs`. Without it, nbdev's own notebook processing
(`nbdev.serve.proc_nbs`: frontmatter, hidden cells, show_doc, doc links, folds) fills `_proc/`, and Debian's
pandoc renders every page listed in the sidebar of `_quarto.yml` (title, navbar, sidebar order and
sections, css, toc) with a Lua filter for Quarto's cell options and callouts (tools/site/quarto.lua), an
HTML template (tools/site/template.html), math typeset by a local copy of Debian's MathJax, and the
notebooks' figures extracted next to each page, an API reference page when the sidebar links `api.html`
(tools/site_api.py), an offline lunr search index of every section (tools/site_search.py), and
tools/site/site.js for the reader (collapsible sidebar, TOC that follows, copy buttons, heading anchors,
search box). Heading ids are Quarto's (`energytransformer.grad`, `measured-quality`). Notebook code is not
run (nbdev's processing only re-runs the import, export and show_doc cells that API docs need).
README.md is pandoc's GitHub markdown of the processed `index.ipynb`, with relative links into `nbs/` that
work in a checkout (and on GitHub).

Usage: python -m tools.build_site [--root DIR] [--force-pandoc] [--no-readme] [--workers N]
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from tools.site_api import API_HTML, ApiPage, load_modidx
from tools.site_nav import (
    API_SRC,
    load_quarto_yml,
    navbar_html,
    page_nav_html,
    prune_tree,
    sidebar_html,
    sidebar_tree,
    tree_pages,
    use_api_page,
)
from tools.site_search import write_search

HERE = Path(__file__).resolve().parent
SITE = HERE / "site"
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


def log(*a): print("build_site:", *a, flush=True)


def find_root(start: Path) -> Path:
    for d in [start, *start.parents]:
        if (d / "pyproject.toml").exists() or (d / "settings.ini").exists(): return d
    raise BuildError(f"no pyproject.toml found above {start}")


# ------------------------------------------------------------------------------------ processed notebooks
def _cell_options(src: str) -> tuple[dict, str]:
    "Quarto cell options (`#| key: value` lines opening a code cell) and the remaining source."
    lines, opts, i = src.splitlines(), {}, 0
    while i < len(lines) and lines[i].lstrip().startswith("#|"):
        text = lines[i].lstrip()[2:].strip()
        i += 1
        if not text: continue
        try: val = yaml.safe_load(text)
        except yaml.YAMLError: val = None
        if isinstance(val, dict): opts.update(val)
        elif ":" in text:
            k, v = text.split(":", 1)
            opts[k.strip()] = v.strip()
        else: opts[text] = True
    return opts, "\n".join(lines[i:])


def _src(x) -> str: return "".join(x) if isinstance(x, list) else (x or "")


def _md_cell(text: str) -> dict: return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code_cell(source: str, outputs: list, meta: dict) -> dict:
    return {"cell_type": "code", "metadata": meta, "execution_count": None, "source": source, "outputs": outputs}


def _markdown_output(o: dict, asis: bool) -> str | None:
    "The markdown that Quarto would splice into the page for output `o` (None: a regular output)."
    data = o.get("data", {})
    if o.get("output_type") in ("display_data", "execute_result"):
        if any(k.startswith("image/") or k == "text/html" for k in data): return None
        if "text/markdown" in data: return _src(data["text/markdown"])
        if asis and "text/plain" in data: return _src(data["text/plain"])
    if asis and o.get("output_type") == "stream" and o.get("name") == "stdout": return _src(o.get("text"))
    return None


RE_TABLE_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")   # |---|:--:|---:|


def split_printed_tables(text: str) -> list[tuple[str, str]]:
    """Printed text cut into ('text', ...) and ('markdown', ...) parts: each run of lines that opens with `|`
    and has a rule line (`|---|---:|`) second is a Markdown table that a cell printed, which the page shows as
    a table rather than as its source."""
    lines, parts, i = text.splitlines(keepends=True), [], 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"): j += 1
        if j - i >= 2 and RE_TABLE_RULE.match(lines[i + 1].strip()):
            parts.append(("markdown", "".join(lines[i:j])))
            i = j
            continue
        if parts and parts[-1][0] == "text": parts[-1] = ("text", parts[-1][1] + lines[i])
        else: parts.append(("text", lines[i]))
        i += 1
    return [(k, t) for k, t in parts if t.strip()]


def _printed_outputs(o: dict) -> list:
    "A stdout output whose text holds printed Markdown tables, as [output | markdown text, ...]; else [o]."
    if o.get("output_type") != "stream" or o.get("name") != "stdout": return [o]
    parts = split_printed_tables(_src(o.get("text")))
    if not any(k == "markdown" for k, _ in parts): return [o]
    return [t if k == "markdown" else {**o, "text": t} for k, t in parts]


def prepare_notebook(nb: dict) -> tuple[dict, dict]:
    """Apply Quarto's cell options to a processed notebook so that pandoc's ipynb reader renders what Quarto
    would: returns (frontmatter, notebook). `include: false` drops a cell; `output: false` its outputs;
    markdown outputs (show_doc, `IPython.display.Markdown`, `output: asis`) and Markdown tables printed to
    stdout become markdown cells; `echo`, `code-fold`, `code-summary`
    and `fig-cap` go into cell metadata for the Lua filter."""
    front, cells = {}, []
    for cell in nb.get("cells", []):
        ctype, src = cell.get("cell_type"), _src(cell.get("source"))
        if ctype == "raw":
            s = src.strip()
            if not front and s.startswith("---"):
                try: front = yaml.safe_load(s.strip("-\n ")) or {}
                except yaml.YAMLError: front = {}
                continue
            cells.append(cell); continue
        if ctype != "code":
            cells.append({"cell_type": ctype, "metadata": {}, "source": src, **({"attachments": cell["attachments"]}
                                                                                 if "attachments" in cell else {})})
            continue
        opts, code = _cell_options(src)
        if opts.get("include") is False: continue
        meta = {}
        for k in ("echo", "code-fold", "code-summary", "fig-cap"):
            if k in opts: meta[k] = str(opts[k]).lower() if isinstance(opts[k], bool) else str(opts[k])
        outputs = [] if opts.get("output") is False else list(cell.get("outputs", []))
        asis = opts.get("output") == "asis"
        # split the outputs at each markdown output: [outputs, markdown, outputs, markdown, ..., outputs]
        segments, run_ = [], []
        for o in (x for out in outputs for x in ([out] if asis else _printed_outputs(out))):
            if isinstance(o, str): segments += [run_, o]; run_ = []; continue   # a printed Markdown table
            o = {k: v for k, v in o.items() if k != "execution_count"}
            if o.get("output_type") == "execute_result":  # pandoc reads one only with a number: shown the same way
                o["output_type"] = "display_data"
            md = _markdown_output(o, asis)
            if md is None: run_.append(o)
            else: segments += [run_, md]; run_ = []
        segments.append(run_)
        for i, seg in enumerate(segments):
            if isinstance(seg, str): cells.append(_md_cell(seg))
            elif i == 0 and meta.get("echo") != "false": cells.append(_code_cell(code, seg, meta))
            elif seg: cells.append(_code_cell("", seg, {**meta, "echo": "false"}))   # outputs only
    nb = {**nb, "cells": cells}
    return front, nb



# ---------------------------------------------------------------------------------------------------- build
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


HINT_IMPORTS = ("nbdev runs each notebook's import, export and show_doc cells to render the API docs; a cell "
                "that mixes imports with other code is run too, and fails without the cells before it: give the "
                "imports a cell of their own.")


def process_notebooks(root: Path, nbs: Path, srcs: list[str], workers: int, notes: list[str]) -> tuple[Path, dict]:
    """nbdev's processing of the notebooks into _proc/ (cached by modification time, as nbdev does).
    Returns the folder and {page: error message} for the notebooks that nbdev could not process; what nbdev
    warns about goes to `notes`."""
    import warnings

    from nbdev.serve import proc_nbs
    if workers > 0:
        try: return Path(proc_nbs(str(nbs), n_workers=workers)), {}
        except Exception: pass   # find out which notebooks fail, one at a time
    errors = {}   # one notebook at a time, to name every one that fails and still render the others
    for s in srcs:
        if not s.endswith(".ipynb"): continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try: proc_nbs(str(nbs), n_workers=0, file_glob=Path(s).name)
            except Exception as e:  # nbdev's message names the notebook and the cell; the traceback adds nothing
                msg = str(e)
                if "import" in msg: msg += "\n" + HINT_IMPORTS
                errors[s] = msg
        for w in caught:
            msg = str(w.message)
            if "Found cells containing imports" in msg:
                code = [l for l in msg.split("---", 1)[-1].strip("-\n ").splitlines() if l and not l.startswith("#|")]
                notes.append(f"{s}: a cell mixes imports with other code, so nbdev runs it while building the "
                             f"docs (give the imports a cell of their own): {code[0] if code else ''!r} ...")
            elif issubclass(w.category, (UserWarning, RuntimeWarning)):
                notes.append(f"nbdev warning: {s}: {msg.splitlines()[0] if msg else w.category.__name__}")
    return root / "_proc", errors


def _raw_title(path: Path) -> str | None:
    "The `# Title` opening a notebook's first markdown cell."
    try: cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except Exception: return None
    for c in cells:
        if c.get("cell_type") == "markdown":
            line = _src(c.get("source")).strip().splitlines()[:1]
            return line[0].lstrip("#").strip() if line and line[0].startswith("# ") else None
    return None


def build_with_quarto(root: Path, readme: bool):
    bindir = Path(sys.executable).parent
    exe = lambda n: str(bindir / n) if (bindir / n).exists() else n
    subprocess.run([exe("nbdev-docs")], cwd=root, check=True)   # also writes nbs/nbdev.yml, which nbdev-readme needs
    if readme: subprocess.run([exe("nbdev-readme")], cwd=root, check=True)


def build(root: Path, out: Path | None = None, readme: bool = True, workers: int = 0) -> dict:
    """Render the site with pandoc; returns {'pages': [...], 'out': Path, 'readme': Path|None, 'notes': [...],
    'api': {'documented': n, 'unlinked': [...]}, 'search': str}."""
    notes: list[str] = []
    from nbdev.config import get_config, nbpath2html
    os.chdir(root)
    cfg = get_config()
    nbs, out = Path(cfg.nbs_path), Path(out or cfg.doc_path)
    qy = load_quarto_yml(root, nbs)
    site = qy.get("website") or {}
    html_fmt = ((qy.get("format") or {}).get("html") or {})
    sidebar = site.get("sidebar") or {}
    if isinstance(sidebar, list):
        sidebar = next((s for s in sidebar if s.get("contents")), sidebar[0] if sidebar else {})
    tree = sidebar_tree(sidebar.get("contents") or ["auto"], nbs)
    srcs = tree_pages(tree)
    readme_nb = str(cfg.get("readme_nb", "index.ipynb"))
    if readme and readme_nb not in srcs and (nbs / readme_nb).exists(): srcs.append(readme_nb)
    missing = [s for s in srcs if not (nbs / s).exists()]
    for s in missing: notes.append(f"_quarto.yml lists {s}, which does not exist yet in {nbs}: skipped")
    tree = prune_tree(tree, set(missing))
    srcs = [s for s in srcs if s not in missing]

    proc, errors = process_notebooks(root, nbs, srcs, workers, notes)
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="build_site_"))

    # 1. every page: frontmatter, prepared notebook, html name
    pages = {}
    for s in srcs:
        p = proc / s
        if s in errors:
            name = nbpath2html(Path(Path(s).name)).name
            pages[s] = {"src": None, "fmt": None, "front": {}, "html": (Path(s).parent / name).as_posix(),
                        "title": _raw_title(nbs / s) or Path(name).stem}
            continue
        if p.suffix == ".ipynb":
            front, nb = prepare_notebook(json.loads(p.read_text(encoding="utf-8")))
            src = work / s
            src.parent.mkdir(parents=True, exist_ok=True)
            src.write_text(json.dumps(nb), encoding="utf-8")
            fmt = READER
        else:
            front, src, fmt = {}, p if p.exists() else nbs / s, MD_READER
            text = src.read_text(encoding="utf-8")
            if text.startswith("---"):
                try: front = yaml.safe_load(text.split("---", 2)[1]) or {}
                except yaml.YAMLError: front = {}
        name = front.get("output-file") or nbpath2html(Path(Path(s).name)).name
        if Path(name).suffix != ".html": name = str(Path(name).with_suffix(".html"))
        htmlp = (Path(s).parent / name).as_posix()
        title = front.get("title") or Path(name).stem.replace("_", " ").capitalize()
        pages[s] = {"src": src, "fmt": fmt, "front": front, "html": htmlp, "title": str(title)}
    tree, api_title = use_api_page(tree)
    if api_title:
        pages[API_SRC] = {"src": work / "api.md", "fmt": MD_READER, "front": {}, "html": API_HTML, "title": api_title}

    # 2. static files: the notebooks' folder (images, styles.css, ...), the theme, MathJax
    for f in sorted(proc.rglob("*")):
        rel = f.relative_to(proc)
        if (f.is_dir() or f.suffix in (".ipynb", ".qmd") or f.suffix in (".yml", ".yaml")
                or any(x.startswith(".") for x in rel.parts)): continue
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, out / rel)
    (out / "site_libs").mkdir(exist_ok=True)
    for f in ("site.css", "site.js"): shutil.copy2(SITE / f, out / "site_libs" / f)
    copy_mathjax(out / "site_libs" / "mathjax")

    css = html_fmt.get("css") or []
    if isinstance(css, str): css = [css]
    pagemap = {s: p["html"] for s, p in pages.items()}
    site_url = (str(cfg.get("doc_host", "") or "") + str(cfg.get("doc_baseurl", "") or "")).rstrip("/")
    order = tree_pages(tree)
    warnings = {}

    # 3. render each page; then the API page, whose links must resolve in the pages rendered before it
    def render(s):
        p = pages[s]
        depth = len(Path(p["html"]).parts) - 1
        prefix = "../" * depth
        dest = out / p["html"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        meta = {"title": p["title"], "pagetitle": p["title"], "site-title": site.get("title") or "",
                "pagemap": pagemap, "site_url": site_url, "site_root": prefix or "./"}
        desc = p["front"].get("description")
        if desc: meta |= {"description": str(desc), "description-meta": str(desc)}
        mfile = work / (s + ".meta.yaml")
        mfile.parent.mkdir(parents=True, exist_ok=True)
        mfile.write_text(yaml.safe_dump(meta, allow_unicode=True), encoding="utf-8")
        cmd = ["pandoc", str(p["src"]), "-f", p["fmt"], "-t", "html5", "-o", dest.name,
               "--template", str(SITE / "template.html"), "--lua-filter", str(SITE / "quarto.lua"),
               "--highlight-style", str(SITE / "arrow.theme"),
               f"--mathjax={prefix}site_libs/mathjax/MathJax.js?config=TeX-AMS_CHTML",
               f"--extract-media={Path(p['html']).stem}_files", f"--resource-path={proc / Path(s).parent}",
               "--metadata-file", str(mfile),
               "-V", f"site-root={prefix}", "-V", "navbar=" + navbar_html(site, pages, prefix),
               "-V", "sidebar=" + sidebar_html(tree, pages, s, prefix)]
        if html_fmt.get("toc", False): cmd += ["--toc", f"--toc-depth={int(html_fmt.get('toc-depth', 3))}"]
        if search: cmd += ["-V", "search=true"]
        for c in css: cmd += ["-V", f"css={prefix}{c}"]
        if site.get("page-navigation"): cmd += ["-V", "page-nav=" + page_nav_html(order, pages, s, prefix)]
        _, warn = run(cmd, cwd=dest.parent, what=f"pandoc on {s}")
        missing = [m.group(1) for l in warn if (m := re.search(r"Could not fetch resource '?([^':]+?)'?:", l))]
        if missing:   # pandoc would show the alt text instead: a broken figure must not pass unnoticed
            errors[s] = "files referenced by the page do not exist: " + ", ".join(
                str(Path(nbs.name) / Path(s).parent / m) for m in missing)
        warn = [l for l in warn if "Could not fetch resource" not in l]
        if warn: warnings[s] = warn

    search = site.get("search", (site.get("navbar") or {}).get("search", True)) is not False
    with ThreadPoolExecutor(os.cpu_count() or 1) as ex:   # one pandoc process per page, as many at once as cores
        list(ex.map(render, [s for s in order if s not in errors and s != API_SRC]))
    api = {"documented": 0, "unlinked": []}
    if api_title:
        api = write_api_page(pages, order, errors, out, cfg, notes)
        render(API_SRC)
        if API_SRC not in errors:
            moved = retarget_to_api(out, [pages[s]["html"] for s in order if s not in errors and s != API_SRC])
            if moved:
                notes.append(f"{len(moved)} links name a section that its page lacks (no show_doc there); they now "
                             "point at the API page's entry: " + ", ".join(moved))
    search_line = "no search index"
    if search:
        try: n = write_search(out, [(pages[s]["html"], pages[s]["title"]) for s in order if s not in errors],
                              boost={API_HTML: 0.3}, log=lambda m: notes.append(m.removeprefix("note: ")))
        except FileNotFoundError as e: raise BuildError(f"{e}; `make setup` installs it") from None
        search_line = f"search index: {n['docs']} sections" + ("" if n["prebuilt"] else " (the browser builds it)")

    # 4. README.md from the processed index notebook
    readme_path = None
    if readme and readme_nb in pages and readme_nb not in errors:
        readme_path = write_readme(root, pages[readme_nb], pagemap, cfg, work)
    shutil.rmtree(work, ignore_errors=True)
    for s, w in warnings.items():
        for l in w: notes.append(f"pandoc warning ({s}): {l}")
    if errors:
        raise BuildError(f"{len(errors)} of {len(order)} pages have problems (the site is in {out}):\n"
                         + "\n".join(f"--- {s}:\n{e}" for s, e in errors.items()))
    return {"pages": [pages[s]["html"] for s in order], "out": out, "readme": readme_path, "notes": notes,
            "api": api, "search": search_line}


def _ids(path: Path) -> set[str]: return set(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


def retarget_to_api(out: Path, htmls: list[str]) -> list[str]:
    """Point links to `page.html#name` whose page has no such id (nbdev links every backticked public name to its
    module's page, show_doc or not) at the API page's entry `api.html#name` when it has one. Returns them."""
    api_ids, ids, moved = _ids(out / API_HTML), {h: _ids(out / h) for h in htmls}, []
    for h in htmls:
        page = out / h
        def fix(m, h=h):
            href = m.group(1)
            path, _, frag = href.partition("#")
            target = (Path(h).parent / path).as_posix() if path else h
            target = os.path.normpath(target).replace(os.sep, "/")
            if not frag or "://" in path or target not in ids or frag in ids[target] or frag not in api_ids:
                return m.group(0)
            moved.append(f"{target}#{frag}")
            rel = os.path.relpath(API_HTML, Path(h).parent.as_posix() or ".").replace(os.sep, "/")
            return f'href="{rel}#{frag}"'
        text = page.read_text(encoding="utf-8")
        new = re.sub(r'href="([^"]*#[^"]*)"', fix, text)
        if new != text: page.write_text(new, encoding="utf-8")
    return sorted(set(moved))


def write_api_page(pages: dict, order: list[str], errors: dict, out: Path, cfg, notes: list[str]) -> dict:
    """The markdown of the API reference page, linked to the sections of the pages rendered in `out`.
    Returns {'documented': number of entries, 'unlinked': names without a show_doc section on their page}."""
    built = [s for s in order if s not in errors and s != API_SRC]
    ids = {pages[s]["html"]: _ids(out / pages[s]["html"]) for s in built}
    api = ApiPage(str(cfg.lib_name), Path(cfg.lib_path), load_modidx(Path(cfg.lib_path)), ids,
                  {pages[s]["html"]: pages[s]["title"] for s in built}, [pages[s]["html"] for s in built])
    pages[API_SRC]["src"].write_text(api.markdown(), encoding="utf-8")
    if api.errors: errors[API_SRC] = "modules left out of the API page:\n" + "\n".join(api.errors)
    for p in api.plain: notes.append(f"API page: show_doc cannot render {p}; signature shown as written")
    return {"documented": api.documented, "unlinked": [n.split(".", 2)[-1] for n in api.unlinked]}


README_FIGURES = "images/readme"   # in the notebooks' folder: the home page's figures as files, for README.md


def readme_figures(nb: dict, folder: Path) -> dict:
    """The prepared notebook with each PNG or JPEG output written to `folder` (named by its content's hash, so
    an unchanged figure keeps its file) and shown by a markdown cell `![](images/readme/<hash>.png)` instead:
    GitHub shows no images embedded in README.md. Files of `folder` that no figure uses any more are removed."""
    cells, used = [], set()
    for c in nb["cells"]:
        if c["cell_type"] != "code": cells.append(c); continue
        run_ = []
        for o in c.get("outputs", []):
            data = o.get("data", {})
            kind = next((k for k in ("image/png", "image/jpeg") if k in data), None)
            if kind is None: run_.append(o); continue
            raw = base64.b64decode(_src(data[kind]))
            name = hashlib.sha1(raw).hexdigest()[:16] + (".png" if kind == "image/png" else ".jpg")
            folder.mkdir(parents=True, exist_ok=True)
            if not (folder / name).exists(): (folder / name).write_bytes(raw)
            used.add(name)
            cells += [{**c, "outputs": run_}, _md_cell(f"![figure]({README_FIGURES}/{name})")]
            c, run_ = {**c, "source": "", "metadata": {**c["metadata"], "echo": "false"}}, []
        cells.append({**c, "outputs": run_})
    if folder.is_dir():
        for f in folder.iterdir():
            if f.name not in used: f.unlink()
    return {**nb, "cells": cells}


def write_readme(root: Path, page: dict, pagemap: dict, cfg, work: Path) -> Path:
    "GitHub markdown of the processed index notebook; links to notebooks and images point into the notebooks' folder."
    nbs = Path(cfg.nbs_path)
    nbs_rel = os.path.relpath(nbs.resolve(), root.resolve()).replace(os.sep, "/")
    meta = {"pagemap": pagemap, "nbs_prefix": "" if nbs_rel == "." else nbs_rel + "/"}
    mfile = work / "readme.meta.yaml"
    mfile.write_text(yaml.safe_dump(meta), encoding="utf-8")
    src = work / "readme.ipynb"
    src.write_text(json.dumps(readme_figures(json.loads(Path(page["src"]).read_text(encoding="utf-8")),
                                             nbs / README_FIGURES)), encoding="utf-8")
    # no --extract-media: images keep their paths (into nbs/), so README.md shows them in a checkout
    js, _ = run(["pandoc", str(src), "-f", page["fmt"], "-t", "json", "--lua-filter", str(SITE / "quarto.lua"),
                 "--metadata-file", str(mfile)], cwd=root, what="pandoc (README)")
    doc = json.loads(js)
    doc["meta"] = {}
    md = _pandoc_stdin(json.dumps(doc), root)
    head = f"# {page['title']}\n\n"
    desc = page["front"].get("description")
    if desc: head += f"> {desc}\n\n"
    text = head + "<!-- WARNING: THIS FILE WAS AUTOGENERATED FROM nbs/index.ipynb! DO NOT EDIT! -->\n\n" + md
    out = root / "README.md"
    out.write_text(text.rstrip() + "\n", encoding="utf-8")
    return out


def _pandoc_stdin(text: str, cwd: Path) -> str:
    r = subprocess.run(["pandoc", "-f", "json", "-t", "gfm+tex_math_dollars", "--wrap=preserve"], input=text,
                       cwd=cwd, capture_output=True, text=True)
    if r.returncode: raise BuildError("pandoc (README) failed:\n" + r.stderr)
    return r.stdout


REPORT = "build_report.txt"


def write_report(res: dict, path: Path) -> Path:
    "The build's details, one section each: pages, notes, names without a show_doc section, search index."
    api = res.get("api") or {}
    unlinked = api.get("unlinked", [])
    sections = [(f"{len(res['pages'])} pages", res["pages"]), (f"{len(res.get('notes', []))} notes", res.get("notes", [])),
                (f"{len(unlinked)} public names without a show_doc section on their page (the API page documents "
                 "them and links their class or page instead)", unlinked),
                ("search", [res["search"]] if res.get("search") else [])]
    path.write_text("".join(f"{title}:\n" + "".join(f"  {x}\n" for x in items) + "\n" for title, items in sections),
                    encoding="utf-8")
    return path


def summary(res: dict, seconds: float, report: Path) -> str:
    "One line of counts; the details are in `report`."
    api, notes = res.get("api") or {}, res.get("notes", [])
    try: report = report.relative_to(Path.cwd())
    except ValueError: pass
    return (f"{len(res['pages'])} pages in {seconds:.1f} s; API page: {api.get('documented', 0)} names documented, "
            f"{len(api.get('unlinked', []))} without a show_doc section on their page; {len(notes)} "
            f"note{'s' * (len(notes) != 1)}; details in {report}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=None, help="project root (default: the one holding tools/)")
    ap.add_argument("--force-pandoc", action="store_true", help="use pandoc even when Quarto is installed")
    ap.add_argument("--no-readme", action="store_true", help="do not write README.md")
    ap.add_argument("--workers", type=int, default=int(os.environ.get("NBDEV_WORKERS_DOCS", 0)),
                    help="processes for nbdev's notebook processing (0: in this process, which collects its warnings)")
    a = ap.parse_args(argv)
    root = find_root((a.root or HERE.parent).resolve())
    t0 = time.time()
    try:
        if shutil.which("quarto") and not a.force_pandoc:
            log("Quarto found: nbdev-docs + nbdev-readme")
            build_with_quarto(root, readme=not a.no_readme)
            out = root / "_docs"
            pages = sorted(p.relative_to(out).as_posix() for p in out.glob("*.html"))
            res = {"out": out, "pages": pages, "readme": None if a.no_readme else root / "README.md"}
        else:
            if shutil.which("pandoc") is None:
                raise BuildError("pandoc not found (Debian package pandoc; `make setup` installs it)")
            res = build(root, readme=not a.no_readme, workers=a.workers)
    except BuildError as e:
        print(f"build_site: ERROR: {e}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as e:
        print(f"build_site: ERROR: {' '.join(map(str, e.cmd))} failed (exit {e.returncode})", file=sys.stderr)
        return 1
    out = res["out"].resolve()
    log(summary(res, time.time() - t0, write_report(res, out / REPORT)))
    if res.get("readme"): log(f"wrote {res['readme']}")
    try: rel = out.relative_to(Path.cwd())
    except ValueError: rel = out
    print(f"\nThe site is in {out}/ (home page: {out / 'index.html'})\n"
          f"Serve it with:  python -m http.server -d {rel} 8000   (or `make serve`), then open http://127.0.0.1:8000/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
