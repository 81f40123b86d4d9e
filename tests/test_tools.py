"""Tests of the project's tools (tools/build_site.py, tools/browser_test.py, tools/check_sync.py) and of the
notebook-test command, on a tiny nbdev project built in a temporary folder (independent of the real notebooks)."""
import base64, io, json, re, shutil, subprocess, sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
sys.path.insert(0, str(TOOLS))
import build_site  # noqa: E402

PY = sys.executable
BIN = Path(PY).parent
HAVE_PANDOC = shutil.which("pandoc") is not None
HAVE_BROWSER = Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()

PYPROJECT = """
[project]
name = "tinyproj"
version = "0.0.1"

[project.urls]
Documentation = "https://example.org/tinyproj"

[tool.nbdev]
lib_path = "tinyproj"
nbs_path = "nbs"
doc_path = "_docs"
doc_host = "https://example.org"
doc_baseurl = "/tinyproj"
git_url = "https://github.com/example/tinyproj"
branch = "main"
title = "tinyproj"
tst_flags = "notest slow"
readme_nb = "index.ipynb"
custom_sidebar = true
jupyter_hooks = false
clean_ids = true
clear_all = false
"""

QUARTO = """
project: {type: website, output-dir: _docs}
format:
  html: {theme: cosmo, css: styles.css, toc: true}
website:
  title: "tinyproj"
  navbar:
    left: [{text: "Topic", href: topic.html}]
  sidebar:
    contents:
      - index.ipynb
      - section: Tutorials
        contents: [00_topic.ipynb]
"""


def _png(w=24, h=12, color=(200, 30, 30)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _nb(cells):
    nb = new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"display_name": "python3", "language": "python", "name": "python3"}}
    return nb


def make_project(root: Path) -> Path:
    "A two-page nbdev project: a home page and a topic page using every feature the site renders."
    (root / "nbs" / "images").mkdir(parents=True)
    (root / "tinyproj").mkdir()
    (root / "tinyproj" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "_quarto.yml").write_text(QUARTO)
    (root / "nbs" / "styles.css").write_text(".cell { margin-bottom: 1rem; }\n")
    Image.new("P", (8, 8), 1).save(root / "nbs" / "images" / "dot.gif")
    index = _nb([
        new_markdown_cell("# tinyproj\n\n> A tiny project with $x^2$ in it."),
        new_markdown_cell("Intro with inline math $a+b$ and a [topic link](00_topic.ipynb).\n\n"
                          "## Usage\n\nRun `make site`, then `make test`."),
    ])
    plot = new_code_cell("#| code-fold: true\n#| fig-cap: A red box\nshow_a_plot()", execution_count=None)
    plot.outputs = [new_output("display_data", data={"image/png": _png(), "text/plain": "<Figure>"})]
    topic = _nb([
        new_markdown_cell("# Topic\n\n> One page of the tiny project."),
        new_code_cell("#| default_exp core"),
        new_code_cell("#| hide\nSECRET_HIDDEN_CELL = 1"),
        new_code_cell('#| export\ndef add(a, # first\n        b, # second\n       ):\n    "Add `a` and `b`"\n'
                      "    return a + b"),
        new_markdown_cell("The energy\n\n$$E(\\sigma) = -\\frac{1}{2}\\sum_{\\mu} (\\xi_\\mu \\cdot \\sigma)^2$$\n\n"
                          "is quadratic in $\\sigma$.\n\n"
                          ":::{.callout-note}\n## Careful\nFlipping every bit keeps $E$.\n:::\n\n"
                          ":::{.callout-warning}\nNo title here.\n:::\n\n"
                          "![a dot](images/dot.gif)\n\nBack to the [home page](index.ipynb)."),
        new_code_cell("assert add(1, 2) == 3"),
        plot,
        new_code_cell("#| echo: false\nprint('only the output')", execution_count=None),
    ])
    topic.cells[-1].outputs = [new_output("stream", name="stdout", text="ECHO_FALSE_OUTPUT\n")]
    nbformat.write(index, root / "nbs" / "index.ipynb")
    nbformat.write(topic, root / "nbs" / "00_topic.ipynb")
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    "The tiny project, rendered once by tools/build_site.py with pandoc."
    if not HAVE_PANDOC: pytest.skip("pandoc is not installed")
    root = make_project(tmp_path_factory.mktemp("tiny"))
    r = subprocess.run([PY, str(TOOLS / "build_site.py"), "--root", str(root), "--force-pandoc"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return root, r.stdout


# ------------------------------------------------------------------------------------------ build_site.py
def test_site_pages_named_as_nbdev_names_them(site):
    root, out = site
    docs = root / "_docs"
    assert (docs / "index.html").exists() and (docs / "topic.html").exists()   # numeric prefix stripped
    assert "python -m http.server -d" in out and str(docs) in out                 # says where and how to serve


def test_sidebar_in_order_with_current_page(site):
    html = (site[0] / "_docs" / "topic.html").read_text()
    side = html[html.index('id="sidebar"'):html.index("</nav>", html.index('id="sidebar"'))]
    assert side.index('href="index.html"') < side.index("Tutorials") < side.index('href="topic.html"')
    assert re.search(r'class="sidebar-link active" aria-current="page" href="topic.html">Topic<', side)
    assert side.count("active") == 1
    assert '<a class="navbar-brand" href="index.html">tinyproj</a>' in html


def test_math_is_ready_for_local_mathjax(site):
    docs = site[0] / "_docs"
    html = (docs / "topic.html").read_text()
    assert r'<span class="math display">\[E(\sigma)' in html
    assert r'<span class="math inline">\(\sigma\)</span>' in html
    m = re.search(r'<script src="([^"?]+)\?config=TeX-AMS_CHTML"', html)
    assert m and "://" not in m.group(1) and (docs / m.group(1)).exists()     # no CDN: a local copy
    assert (docs / "site_libs/mathjax/config/TeX-AMS_CHTML.js").exists()
    assert (docs / "site_libs/mathjax/jax/output/CommonHTML/jax.js").exists()


def test_callouts_become_boxes_with_titles(site):
    html = (site[0] / "_docs" / "topic.html").read_text()
    assert re.search(r'<div class="callout callout-note">\s*<div class="callout-header">\s*Careful\s*</div>', html)
    assert re.search(r'<div class="callout callout-warning">\s*<div class="callout-header">\s*Warning\s*</div>', html)
    body = re.sub(r"<pre.*?</pre>", "", html, flags=re.S)
    assert ":::" not in body and "callout-note}" not in body


def test_figures_and_images_are_files(site):
    docs = site[0] / "_docs"
    html = (docs / "topic.html").read_text()
    srcs = re.findall(r'<img\s+src="([^"]+)"', html)
    assert any(s.endswith("images/dot.gif") for s in srcs)         # pandoc copies it next to the page
    figs = [s for s in srcs if s.endswith(".png")]
    assert figs and all(s.startswith("topic_files/") for s in figs)
    for s in srcs: assert (docs / s).is_file(), s
    assert re.search(r'<figure>\s*<img\s+src="topic_files/[^"]+\.png"[^>]*>\s*<figcaption[^>]*>A red box</figcaption>', html)


def test_code_fold_hidden_cells_echo_and_show_doc(site):
    html = (site[0] / "_docs" / "topic.html").read_text()
    fold = html[html.index('<details class="code-fold">'):]
    assert fold.index("<summary>Code</summary>") < fold.index("show_a_plot") < fold.index("</details>")
    assert "SECRET_HIDDEN_CELL" not in html and "default_exp" not in html and "#|" not in html
    assert "ECHO_FALSE_OUTPUT" in html and "only the output" not in html
    assert re.search(r'<h3 id="add">add</h3>', html)                 # API docs from nbdev's show_doc
    assert "Add <code>a</code> and <code>b</code>" in html


def test_links_between_pages(site):
    docs = site[0] / "_docs"
    assert 'href="index.html">home page</a>' in (docs / "topic.html").read_text()
    assert 'href="topic.html">topic link</a>' in (docs / "index.html").read_text()


def test_readme_from_index(site):
    readme = (site[0] / "README.md").read_text()
    assert readme.startswith("# tinyproj\n\n> A tiny project with $x^2$ in it.")
    assert "$a+b$" in readme and "## Usage" in readme and "`make site`" in readme
    assert "(https://example.org/tinyproj/topic.html)" in readme      # doc links point at the hosted site
    assert "<div" not in readme


def test_build_fails_naming_missing_image_and_broken_notebook(tmp_path):
    if not HAVE_PANDOC: pytest.skip("pandoc is not installed")
    root = make_project(tmp_path)
    nbp = root / "nbs" / "00_topic.ipynb"
    nb = nbformat.read(nbp, as_version=4)
    nb.cells.append(new_markdown_cell("![gone](images/not_there.png)"))
    nbformat.write(nb, nbp)
    r = subprocess.run([PY, str(TOOLS / "build_site.py"), "--root", str(root), "--force-pandoc"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert "00_topic.ipynb" in r.stderr and "nbs/images/not_there.png" in r.stderr
    assert (root / "_docs" / "index.html").exists()                      # the other pages are still built
    # a notebook that nbdev cannot process (a cell mixing an import with code that needs earlier cells)
    nb.cells[-1] = new_code_cell("import math\nundefined_name + 1")
    nbformat.write(nb, nbp)
    r = subprocess.run([PY, str(TOOLS / "build_site.py"), "--root", str(root), "--force-pandoc"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert "--- 00_topic.ipynb:" in r.stderr and "NameError" in r.stderr and "own" in r.stderr


def test_prepare_notebook_applies_quarto_cell_options():
    md_out = new_output("execute_result", data={"text/markdown": "### f\n\ndoc", "text/plain": "f"})
    img_out = new_output("display_data", data={"image/png": _png(), "text/plain": "<Figure>"})
    nb = _nb([new_code_cell("#| include: false\nx = 1"),
              new_code_cell("#| output: false\ny = 2"),
              new_code_cell("#| echo: false\n#| output: asis\nshow_doc(f)"),
              new_code_cell("#| code-fold: show\n#| code-summary: \"Exported source\"\nz = 3"),
              new_code_cell("plot()")])
    nb.cells[1].outputs = [img_out]
    nb.cells[2].outputs = [md_out]
    nb.cells[4].outputs = [img_out, md_out]
    front, out = build_site.prepare_notebook(json.loads(nbformat.writes(nb)))
    cells = [(c["cell_type"], c["source"], c["metadata"], len(c.get("outputs", []))) for c in out["cells"]]
    assert cells[0] == ("code", "y = 2", {}, 0)                           # include: false dropped, output: false
    assert cells[1] == ("markdown", "### f\n\ndoc", {}, 0)                # markdown output, no code (echo: false)
    assert cells[2] == ("code", "z = 3", {"code-fold": "show", "code-summary": "Exported source"}, 0)
    assert cells[3] == ("code", "plot()", {}, 1)                          # image stays an output ...
    assert cells[4] == ("markdown", "### f\n\ndoc", {}, 0)                # ... markdown output follows it
    assert len(cells) == 5


def test_sidebar_tree_sections_globs_and_links(tmp_path):
    for n in ["index.ipynb", "00_a.ipynb", "01_b.ipynb", "_hidden.ipynb"]: (tmp_path / n).write_text("{}")
    tree = build_site.sidebar_tree(["index.ipynb", {"section": "S", "contents": ["0*.ipynb"]},
                                    {"text": "Ext", "href": "https://x.org"}], tmp_path)
    assert build_site.tree_pages(tree) == ["index.ipynb", "00_a.ipynb", "01_b.ipynb"]
    assert tree[2] == {"link": "https://x.org", "text": "Ext"}
    assert build_site.tree_pages(build_site.sidebar_tree(["auto"], tmp_path)) == \
        ["00_a.ipynb", "01_b.ipynb", "index.ipynb"]


# ----------------------------------------------------------------------------------------- browser_test.py
@pytest.mark.skipif(not HAVE_BROWSER, reason="chromium / chromedriver not installed")
def test_browser_test_passes_then_names_page_and_problems(site, tmp_path):
    root = site[0]
    docs = tmp_path / "docs"
    shutil.copytree(root / "_docs", docs)
    run = lambda: subprocess.run([PY, str(TOOLS / "browser_test.py"), "--root", str(root), "--docs", str(docs)],
                                 capture_output=True, text=True, timeout=300)
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "browser test: 2 pages, 0 failed" in r.stdout
    shots = sorted(p.name for p in (docs / "_screenshots").glob("*.png"))
    assert shots == ["index.png", "topic.png"]
    page = docs / "topic.html"
    page.write_text(page.read_text().replace(
        "<main", '<p>left raw: $$x^2$$ and ::: here</p><img src="missing.png"><main', 1))
    r = run()
    assert r.returncode == 1
    assert "browser test: 2 pages, 1 failed" in r.stdout
    err = r.stderr
    assert "topic.html: image did not load: missing.png" in err
    assert "topic.html: raw display math '$$'" in err and "topic.html: a fenced-div marker ':::'" in err
    assert "topic.html: HTTP 404 for /missing.png" in err
    assert "index.html:" not in err


# ------------------------------------------------------------------------------------------- check_sync.py
def test_check_sync_detects_hand_edit_and_unclean_notebook(tmp_path):
    root = make_project(tmp_path)
    subprocess.run([str(BIN / "nbdev-export")], cwd=root, check=True, capture_output=True)
    subprocess.run([str(BIN / "nbdev-clean")], cwd=root, check=True, capture_output=True)
    check = lambda: subprocess.run([PY, str(TOOLS / "check_sync.py"), "--root", str(root)],
                                   capture_output=True, text=True, timeout=120)
    r = check()
    assert r.returncode == 0, r.stdout + r.stderr
    mod = root / "tinyproj" / "core.py"
    mod.write_text(mod.read_text() + "\n# edited by hand\n")
    nbp = root / "nbs" / "00_topic.ipynb"
    nb = json.loads(nbp.read_text())
    nb["cells"][5]["execution_count"] = 7
    nbp.write_text(json.dumps(nb, indent=1))
    before = {p: p.read_bytes() for p in [mod, nbp]}
    r = check()
    assert r.returncode == 1
    assert "tinyproj/core.py differs from what the notebooks export" in r.stderr
    assert "-# edited by hand" in r.stderr
    assert "nbs/00_topic.ipynb is not clean" in r.stderr and "index.ipynb" not in r.stderr
    assert all(p.read_bytes() == b for p, b in before.items())          # the work tree is untouched


# ------------------------------------------------------------------------------------------------ nbtest
def test_nbdev_test_names_notebook_and_cell(tmp_path):
    root = make_project(tmp_path)
    nbp = root / "nbs" / "00_topic.ipynb"
    nb = json.loads(nbp.read_text())
    nb["cells"][5]["source"] = "assert add(1, 2) == 4, 'add is off'"
    nbp.write_text(json.dumps(nb))
    (root / "nbs" / "index.ipynb").unlink()
    r = subprocess.run([str(BIN / "nbdev-test"), "--n-workers", "1"], cwd=root, capture_output=True, text=True,
                       timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "00_topic.ipynb" in out and "Cell #6" in out and "add is off" in out
