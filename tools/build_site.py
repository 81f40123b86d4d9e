#!/usr/bin/env python
"""Render the documentation site into the nbdev `doc_path` (`_docs/`) and write README.md.

With Quarto on PATH this is `nbdev-readme` + `nbdev-docs`. Without it, nbdev's own notebook processing
(`nbdev.serve.proc_nbs`: frontmatter, hidden cells, show_doc, doc links, folds) fills `_proc/`, and Debian's
pandoc renders every page listed in the sidebar of `_quarto.yml` (title, navbar, sidebar order and
sections, css, toc) with a Lua filter for Quarto's cell options and callouts (tools/site/quarto.lua), an
HTML template (tools/site/template.html), math typeset by a local copy of Debian's MathJax, and the
notebooks' figures extracted next to each page. Notebook code is not run (nbdev's processing only re-runs
the import, export and show_doc cells that API docs need). README.md is pandoc's GitHub markdown of the
processed `index.ipynb`, with documentation links pointing at the hosted site as `nbdev-readme` does.

Usage: python tools/build_site.py [--root DIR] [--force-pandoc] [--no-readme] [--workers N]
"""
from __future__ import annotations

import argparse, fnmatch, html, json, os, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
SITE = HERE / "site"
MATHJAX = Path("/usr/share/javascript/mathjax")
# The parts of MathJax 2 that the TeX-AMS_CHTML configuration loads; copied so that _docs/ is self-contained.
MATHJAX_PARTS = ["MathJax.js", "config/TeX-AMS_CHTML.js", "extensions", "jax/element", "jax/input/TeX",
                 "jax/output/CommonHTML", "fonts/HTML-CSS/TeX/woff", "localization/en"]
# Quarto reads notebook markdown with pandoc's markdown; these are the parts the notebooks use.
READER = ("ipynb+fenced_divs+bracketed_spans+link_attributes+implicit_figures+footnotes+definition_lists"
          "+header_attributes+fenced_code_attributes+inline_code_attributes+raw_attribute+smart")


class BuildError(Exception):
    "A problem that stops the build, reported as one clear message."


def log(*a): print("build_site:", *a, flush=True)


def find_root(start: Path) -> Path:
    for d in [start, *start.parents]:
        if (d / "pyproject.toml").exists() or (d / "settings.ini").exists(): return d
    raise BuildError(f"no pyproject.toml found above {start}")


# ---------------------------------------------------------------------------------------------- _quarto.yml
def load_quarto_yml(root: Path, nbs: Path) -> dict:
    for p in (root / "_quarto.yml", nbs / "_quarto.yml"):
        if p.exists(): return yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    return {}


def _nb_files(nbs: Path) -> list[str]:
    "Every page source in `nbs`, as nbdev would find them (no hidden or underscore files)."
    out = []
    for p in sorted(nbs.rglob("*")):
        rel = p.relative_to(nbs)
        if p.suffix not in (".ipynb", ".qmd", ".md") or any(s.startswith((".", "_")) for s in rel.parts): continue
        if ".ipynb_checkpoints" in rel.parts: continue
        out.append(rel.as_posix())
    return out


def sidebar_tree(contents, nbs: Path) -> list[dict]:
    """Sidebar `contents` of _quarto.yml as a tree of {'page': src} | {'link': href, 'text': t} |
    {'section': title, 'href': src|None, 'items': [...]}; globs and `auto` expand to the notebooks."""
    all_files = _nb_files(nbs)
    tree = []
    for item in contents or []:
        if isinstance(item, str):
            if item == "auto" or any(c in item for c in "*?["):
                pat = "*" if item == "auto" else item
                tree += [{"page": f} for f in all_files if fnmatch.fnmatch(f, pat)]
            else:
                tree.append({"page": item})
        elif isinstance(item, dict) and "section" in item:
            tree.append({"section": str(item["section"]), "href": item.get("href"),
                         "items": sidebar_tree(item.get("contents") or [], nbs)})
        elif isinstance(item, dict) and "auto" in item:
            pat = item["auto"] if isinstance(item["auto"], str) else "*"
            tree += [{"page": f} for f in all_files if fnmatch.fnmatch(f, pat)]
        elif isinstance(item, dict) and "href" in item:
            href = str(item["href"])
            if Path(href).suffix in (".ipynb", ".qmd", ".md") and "://" not in href:
                tree.append({"page": href, "text": item.get("text")})
            else:
                tree.append({"link": href, "text": item.get("text") or href})
    return tree


def tree_pages(tree) -> list[str]:
    out = []
    for t in tree:
        if "page" in t: out.append(t["page"])
        elif "section" in t:
            if t.get("href"): out.append(t["href"])
            out += tree_pages(t["items"])
    return list(dict.fromkeys(out))


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


def prepare_notebook(nb: dict) -> tuple[dict, dict]:
    """Apply Quarto's cell options to a processed notebook so that pandoc's ipynb reader renders what Quarto
    would: returns (frontmatter, notebook). `include: false` drops a cell; `output: false` its outputs;
    markdown outputs (show_doc, `output: asis`) become markdown cells; `echo`, `code-fold`, `code-summary`
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
        for o in outputs:
            o = {k: v for k, v in o.items() if k != "execution_count"}
            if o.get("output_type") == "execute_result": o["execution_count"] = None
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


# ------------------------------------------------------------------------------------------------ html bits
def _esc(s) -> str: return html.escape(str(s), quote=True)


def _href(target: str, pages: dict, prefix: str) -> str:
    "A navbar/sidebar href: page sources map to their html, relative links get the page's root prefix."
    if "://" in target or target.startswith(("mailto:", "#")): return target
    path, _, frag = target.partition("#")
    if path in pages: path = pages[path]["html"]
    elif path.endswith((".ipynb", ".qmd")): path = str(Path(path).with_suffix(".html"))
    return prefix + path + (("#" + frag) if frag else "")


def navbar_html(site: dict, pages: dict, prefix: str) -> str:
    nav = site.get("navbar") or {}
    title = site.get("title") or ""
    parts = [f'<a class="navbar-brand" href="{prefix}index.html">{_esc(title)}</a>']
    for side in ("left", "right"):
        items = []
        for it in nav.get(side) or []:
            if isinstance(it, str): it = {"href": it}
            href = it.get("href")
            if not href: continue
            text = it.get("text") or (it.get("icon") or "").capitalize().replace("Github", "GitHub") or href
            if not it.get("text") and href in pages: text = pages[href]["title"]
            ext = ' target="_blank" rel="noopener"' if "://" in str(href) else ""
            items.append(f'<li><a class="nav-link" href="{_esc(_href(str(href), pages, prefix))}"{ext}>'
                         f'{_esc(text)}</a></li>')
        if items: parts.append(f'<ul class="navbar-nav navbar-{side}">' + "".join(items) + "</ul>")
    return "\n".join(parts)


def sidebar_html(tree, pages: dict, current: str, prefix: str) -> str:
    def item(t):
        if "page" in t:
            p = pages.get(t["page"])
            if p is None: return ""
            cur = t["page"] == current
            cls = "sidebar-link active" if cur else "sidebar-link"
            aria = ' aria-current="page"' if cur else ""
            return (f'<li class="sidebar-item"><a class="{cls}"{aria} href="{_esc(prefix + p["html"])}">'
                    f'{_esc(t.get("text") or p["title"])}</a></li>')
        if "link" in t:
            return (f'<li class="sidebar-item"><a class="sidebar-link" href="{_esc(_href(t["link"], pages, prefix))}">'
                    f'{_esc(t["text"])}</a></li>')
        head = _esc(t["section"])
        if t.get("href") and t["href"] in pages:
            head = f'<a href="{_esc(prefix + pages[t["href"]]["html"])}">{head}</a>'
        return (f'<li class="sidebar-section"><span class="sidebar-section-title">{head}</span>'
                f'<ul class="sidebar-section-items">' + "".join(item(s) for s in t["items"]) + "</ul></li>")
    return '<ul class="sidebar-menu">' + "".join(item(t) for t in tree) + "</ul>"


def page_nav_html(order: list[str], pages: dict, current: str, prefix: str) -> str:
    i = order.index(current)
    out = []
    if i > 0:
        p = pages[order[i - 1]]
        out.append(f'<a class="nav-prev" href="{_esc(prefix + p["html"])}">&larr; {_esc(p["title"])}</a>')
    if i + 1 < len(order):
        p = pages[order[i + 1]]
        out.append(f'<a class="nav-next" href="{_esc(prefix + p["html"])}">{_esc(p["title"])} &rarr;</a>')
    return "".join(out)


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


def process_notebooks(root: Path, nbs: Path, srcs: list[str], workers: int) -> tuple[Path, dict]:
    """nbdev's processing of the notebooks into _proc/ (cached by modification time, as nbdev does).
    Returns the folder and {page: error message} for the notebooks that nbdev could not process."""
    import warnings
    from nbdev.serve import proc_nbs
    if str(root) not in sys.path: sys.path.insert(0, str(root))
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
                log(f"note: {s}: a cell mixes imports with other code, so nbdev runs it while building the docs "
                    f"(give the imports a cell of their own): {code[0] if code else ''!r} ...")
            elif issubclass(w.category, (UserWarning, RuntimeWarning)):
                log(f"nbdev warning: {s}: {msg.splitlines()[0] if msg else w.category.__name__}")
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
    "Render the site with pandoc; returns {'pages': [...], 'out': Path, 'readme': Path|None}."
    from nbdev.config import get_config, nbpath2html
    os.chdir(root)
    cfg = get_config()
    nbs, out = Path(cfg.nbs_path), Path(out or cfg.doc_path)
    qy = load_quarto_yml(root, nbs)
    site = qy.get("website") or {}
    html_fmt = ((qy.get("format") or {}).get("html") or {})
    sidebar = site.get("sidebar") or {}
    if isinstance(sidebar, list): sidebar = next((s for s in sidebar if s.get("contents")), sidebar[0] if sidebar else {})
    tree = sidebar_tree(sidebar.get("contents") or ["auto"], nbs)
    srcs = tree_pages(tree)
    readme_nb = str(cfg.get("readme_nb", "index.ipynb"))
    if readme and readme_nb not in srcs and (nbs / readme_nb).exists(): srcs.append(readme_nb)
    missing = [s for s in srcs if not (nbs / s).exists()]
    if missing: raise BuildError(f"_quarto.yml lists pages that do not exist in {nbs}: {', '.join(missing)}")

    proc, errors = process_notebooks(root, nbs, srcs, workers)
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
            front, src, fmt = {}, p if p.exists() else nbs / s, READER.replace("ipynb", "markdown", 1)
            text = src.read_text(encoding="utf-8")
            if text.startswith("---"):
                try: front = yaml.safe_load(text.split("---", 2)[1]) or {}
                except yaml.YAMLError: front = {}
        name = front.get("output-file") or nbpath2html(Path(Path(s).name)).name
        if Path(name).suffix != ".html": name = str(Path(name).with_suffix(".html"))
        htmlp = (Path(s).parent / name).as_posix()
        title = front.get("title") or Path(name).stem.replace("_", " ").capitalize()
        pages[s] = {"src": src, "fmt": fmt, "front": front, "html": htmlp, "title": str(title)}

    # 2. static files: the notebooks' folder (images, styles.css, ...), the theme, MathJax
    for f in sorted(proc.rglob("*")):
        rel = f.relative_to(proc)
        if (f.is_dir() or f.suffix in (".ipynb", ".qmd") or f.suffix in (".yml", ".yaml")
                or any(x.startswith(".") for x in rel.parts)): continue
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, out / rel)
    (out / "site_libs").mkdir(exist_ok=True)
    shutil.copy2(SITE / "site.css", out / "site_libs" / "site.css")
    copy_mathjax(out / "site_libs" / "mathjax")

    css = html_fmt.get("css") or []
    if isinstance(css, str): css = [css]
    pagemap = {s: p["html"] for s, p in pages.items()}
    site_url = (str(cfg.get("doc_host", "") or "") + str(cfg.get("doc_baseurl", "") or "")).rstrip("/")
    order = tree_pages(tree)
    warnings = {}

    # 3. render each page
    for s in order:
        p = pages[s]
        if s in errors: continue
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
        for c in css: cmd += ["-V", f"css={prefix}{c}"]
        if site.get("page-navigation"): cmd += ["-V", "page-nav=" + page_nav_html(order, pages, s, prefix)]
        _, warn = run(cmd, cwd=dest.parent, what=f"pandoc on {s}")
        missing = [m.group(1) for l in warn if (m := re.search(r"Could not fetch resource '?([^':]+?)'?:", l))]
        if missing:   # pandoc would show the alt text instead: a broken figure must not pass unnoticed
            errors[s] = "files referenced by the page do not exist: " + ", ".join(
                str(Path(nbs.name) / Path(s).parent / m) for m in missing)
        warn = [l for l in warn if "Could not fetch resource" not in l]
        if warn: warnings[s] = warn

    # 4. README.md from the processed index notebook
    readme_path = None
    if readme and readme_nb in pages and readme_nb not in errors: readme_path = write_readme(root, pages[readme_nb], pagemap, cfg, work)
    shutil.rmtree(work, ignore_errors=True)
    for s, w in warnings.items():
        for l in w: log(f"pandoc warning ({s}): {l}")
    if errors:
        raise BuildError(f"{len(errors)} of {len(order)} pages have problems (the site is in {out}):\n"
                         + "\n".join(f"--- {s}:\n{e}" for s, e in errors.items()))
    return {"pages": [pages[s]["html"] for s in order], "out": out, "readme": readme_path}


def write_readme(root: Path, page: dict, pagemap: dict, cfg, work: Path) -> Path:
    "GitHub markdown of the processed index notebook, with links into the hosted docs (as nbdev_readme)."
    meta = {"pagemap": pagemap}
    mfile = work / "readme.meta.yaml"
    mfile.write_text(yaml.safe_dump(meta), encoding="utf-8")
    stem = Path(page["html"]).stem
    js, _ = run(["pandoc", str(page["src"]), "-f", page["fmt"], "-t", "json", "--lua-filter", str(SITE / "quarto.lua"),
                 "--metadata-file", str(mfile), f"--extract-media={stem}_files"], cwd=root, what="pandoc (README)")
    doc = json.loads(js)
    if cfg.get("doc_host"):
        from nbdev.readme_filter import rewrite_links
        rewrite_links(doc["blocks"], cfg.doc_url, Path(cfg.readme_nb).parent.as_posix())
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=None, help="project root (default: the one holding tools/)")
    ap.add_argument("--force-pandoc", action="store_true", help="use pandoc even when Quarto is installed")
    ap.add_argument("--no-readme", action="store_true", help="do not write README.md")
    ap.add_argument("--workers", type=int, default=int(os.environ.get("NBDEV_WORKERS_DOCS", 0)),
                    help="processes for nbdev's notebook processing (0: in this process)")
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
    log(f"{len(res['pages'])} pages in {time.time() - t0:.1f} s: " + ", ".join(res["pages"]))
    if res.get("readme"): log(f"wrote {res['readme']}")
    try: rel = out.relative_to(Path.cwd())
    except ValueError: rel = out
    print(f"\nThe site is in {out}/ (home page: {out / 'index.html'})\n"
          f"Serve it with:  python -m http.server -d {rel} 8000   (or `make serve`), then open http://127.0.0.1:8000/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
