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

This module is the command: it runs the build's parts in order and reports. The parts: the notebooks made
pandoc's input (tools/site_notebook.py), pandoc with the theme and MathJax (tools/site_pandoc.py), the navbar,
sidebar and page links (tools/site_nav.py), the API page and the links into it (tools/site_links.py,
tools/site_api.py), the search index (tools/site_search.py) and README.md (tools/site_readme.py).

Usage: python -m tools.build_site [--root DIR] [--force-pandoc] [--no-readme] [--workers N]
"""
from __future__ import annotations

import argparse
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

from tools.site_api import API_HTML
from tools.site_links import retarget_to_api, write_api_page
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
from tools.site_notebook import prepare_notebook, process_notebooks, raw_title
from tools.site_pandoc import MD_READER, READER, SITE, BuildError, copy_mathjax, run
from tools.site_readme import write_readme
from tools.site_search import write_search

HERE = Path(__file__).resolve().parent


def log(*a): print("build_site:", *a, flush=True)


def find_root(start: Path) -> Path:
    for d in [start, *start.parents]:
        if (d / "pyproject.toml").exists() or (d / "settings.ini").exists(): return d
    raise BuildError(f"no pyproject.toml found above {start}")


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
                        "title": raw_title(nbs / s) or Path(name).stem}
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
