"""Tests of the project's tools (tools.build_site, tools.browser_test, tools.check_sync, tools.ship_checkpoint, run
from the repository root as `python -m tools.<name>`) and of the notebook-test command, on a tiny nbdev project built in
a temporary folder (independent of the real notebooks)."""
import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jax
import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from PIL import Image

from energy_transformer.checkpoint import named_leaves, read_checkpoint, save_checkpoint
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.pretrained import load_pretrained
from tools import run_notebooks, ship_checkpoint, shrink_figures, site_api, site_nav, site_notebook, site_pandoc, site_search

ROOT = Path(__file__).resolve().parents[1]
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
        contents: [00_topic.ipynb, 01_not_written_yet.ipynb]
      - text: "API reference"
        href: api.html
"""


def _png(w=24, h=12, color=(200, 30, 30)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _nb(cells):
    nb = new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"display_name": "python3", "language": "python", "name": "python3"}}
    return nb


def tiny_env(root: Path) -> dict:
    "The environment of a tool run on the tiny project: its package is not installed, so it is on PYTHONPATH"
    return {**os.environ, "PYTHONPATH": str(root)}


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
        new_markdown_cell("Intro with inline math $a+b$ and a [topic link](00_topic.ipynb), a [link to a section]"
                          "(00_topic.ipynb#measured-quality), a [method without show_doc](00_topic.ipynb#box.volume) "
                          "and ![a dot](images/dot.gif).\n\n"
                          "## Usage\n\nRun `make site`, then `make test`."),
        new_code_cell("#| echo: false\nshow_the_home_figure()", execution_count=None),
    ])
    index.cells[-1].outputs = [new_output("display_data", data={"image/png": _png(240, 120, (30, 30, 200)),
                                                                 "text/plain": "<Figure>"})]
    index.cells.append(new_markdown_cell("*The home page's figure: a blue box.*"))  # every figure has its caption
    plot = new_code_cell("#| code-fold: true\n#| fig-cap: A red box\nshow_a_plot()", execution_count=None)
    plot.outputs = [new_output("display_data", data={"image/png": _png(), "text/plain": "<Figure>"})]
    topic = _nb([
        new_markdown_cell("# Topic\n\n> One page of the tiny project."),
        new_code_cell("#| default_exp core"),
        new_code_cell("#| hide\nSECRET_HIDDEN_CELL = 1"),
        new_code_cell('#| export\ndef add(a, # first\n        b, # second\n       ):\n    "Add `a` and `b`"\n'
                      "    return a + b"),
        new_code_cell('#| export\nclass Box:\n    "A box"\n    def __init__(self, w): self.w = w\n'
                      '    def area(self):\n        "Area of the box"\n        return self.w ** 2\n'
                      '    def volume(self):\n        "Volume of the box"\n        return self.w ** 3\n'
                      '    def _hidden(self): return 0'),
        new_code_cell("from nbdev.showdoc import show_doc"),
        new_code_cell("show_doc(Box.area)"),
        new_markdown_cell("## 7. Measured quality\n\nThe word zyzzyva appears only here.\n\n## Measured quality"),
        new_markdown_cell("The energy\n\n$$E(\\sigma) = -\\frac{1}{2}\\sum_{\\mu} (\\xi_\\mu \\cdot \\sigma)^2$$\n\n"
                          "is quadratic in $\\sigma$.\n\n"
                          ":::{.callout-note}\n## Careful\nFlipping every bit keeps $E$.\n:::\n\n"
                          ":::{.callout-warning}\nNo title here.\n:::\n\n"
                          "![a dot](images/dot.gif)\n\nBack to the [home page](index.ipynb)."),
        new_code_cell("assert add(1, 2) == 3"),
        plot,
        new_code_cell("#| echo: false\nprint('only the output')", execution_count=None),
        new_code_cell("print_a_table()", execution_count=None),
    ])
    topic.cells[-2].outputs = [new_output("stream", name="stdout", text="ECHO_FALSE_OUTPUT\n")]
    topic.cells[-1].outputs = [new_output("stream", name="stdout", text="before\n| photo | mse |\n|---|---:|\n"
                                          "| cat | 0.25 |\nafter\n")]
    nbformat.write(index, root / "nbs" / "index.ipynb")
    nbformat.write(topic, root / "nbs" / "00_topic.ipynb")
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    "The tiny project, rendered once by tools.build_site with pandoc."
    if not HAVE_PANDOC: pytest.skip("pandoc is not installed")
    root = make_project(tmp_path_factory.mktemp("tiny"))
    subprocess.run([str(BIN / "nbdev-export")], cwd=root, check=True, capture_output=True)
    r = subprocess.run([PY, "-m", "tools.build_site", "--root", str(root), "--force-pandoc"], cwd=ROOT,
                       env=tiny_env(root), capture_output=True, text=True, timeout=300)
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
    assert re.search(r'<figure>\s*<img\s+src="topic_files/[^"]+\.png"[^>]*>\s*'
                     r'<figcaption[^>]*>A red box</figcaption>', html)


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


def test_printed_markdown_table_is_a_table(site):
    html = (site[0] / "_docs" / "topic.html").read_text()
    assert "|---|" not in html and "| cat |" not in html
    assert re.search(r"<table.*?<th[^>]*>photo</th>.*?<td[^>]*>cat</td>\s*<td[^>]*>0.25</td>", html, re.S)
    assert html.index("before") < html.index("<table") < html.index("after")   # the text around it stays


def test_split_printed_tables():
    split = site_notebook.split_printed_tables
    assert split("a\n| x | y |\n|---|:--:|\n| 1 | 2 |\nb\n") == [
        ("text", "a\n"), ("markdown", "| x | y |\n|---|:--:|\n| 1 | 2 |\n"), ("text", "b\n")]
    assert split("| x |\nno rule under it\n") == [("text", "| x |\nno rule under it\n")]
    assert split("| just | one line |\n") == [("text", "| just | one line |\n")]


def test_summary_line_and_report_file(site):
    root, out = site
    line = next(l for l in out.splitlines() if "details in" in l)
    assert re.search(r"3 pages in [\d.]+ s; API page: (\d+) names documented, (\d+) without a show_doc section", line)
    assert len(line) < 250 and "note: " not in out                     # counts only; the details are in the file
    report = (root / "_docs" / "build_report.txt").read_text()
    assert "index.html" in report and "topic.html" in report and "api.html" in report
    assert "volume" in report                                           # Box.volume: no show_doc on its page


def test_readme_from_index(site):
    readme = (site[0] / "README.md").read_text()
    figs = re.findall(r"!\[figure\]\((nbs/images/readme/[0-9a-f]+\.png)\)", readme)
    assert len(figs) == 1 and (site[0] / figs[0]).is_file()            # the home page's figure as a file
    assert "show_the_home_figure" not in readme
    assert readme.startswith("# tinyproj\n\n> A tiny project with $x^2$ in it.")
    assert "$a+b$" in readme and "## Usage" in readme and "`make site`" in readme
    assert "(nbs/00_topic.ipynb)" in readme                            # relative: works in a checkout
    assert "(nbs/00_topic.ipynb#measured-quality)" in readme and "(nbs/images/dot.gif)" in readme
    assert "https://example.org" not in readme
    assert "<div" not in readme


def test_heading_ids_are_quartos(site):
    html = (site[0] / "_docs" / "topic.html").read_text()
    assert '<h2 id="measured-quality">7. Measured quality' in html            # leading number dropped
    assert '<h2 id="measured-quality-1">Measured quality' in html            # repeats numbered
    assert '<h3 id="box.area">Box.area</h3>' in html                        # show_doc of a method keeps the dot
    assert 'href="topic.html#measured-quality"' in (site[0] / "_docs" / "index.html").read_text()


def test_missing_sidebar_notebook_is_skipped_with_a_note(site):
    root, out = site
    assert "01_not_written_yet.ipynb, which does not exist yet" in (root / "_docs" / "build_report.txt").read_text()
    assert "not_written_yet" not in (root / "_docs" / "index.html").read_text()


def test_api_page_lists_every_public_name_with_links(site):
    docs = site[0] / "_docs"
    html = (docs / "api.html").read_text()
    assert '<h2 id="tinyproj.core">tinyproj.core</h2>' in html
    assert '<h3 id="add">add</h3>' in html and '<h3 id="box">Box</h3>' in html
    assert '<h4 id="box.area">Box.area</h4>' in html and "_hidden" not in html
    # each module's entries are folded under its heading, the headings (and the index above them) stay open
    folds = re.findall(r'<details class="api-module">\s*<summary>\s*(\d+) entries', html)
    assert folds and html.count('<details class="api-module">') == html.count("<h2 id=\"tinyproj.")
    core = html[html.index('<h2 id="tinyproj.core">'):]
    assert core.index('<details class="api-module">') < core.index('<h3 id="add">') < core.index("</details>")
    for name, href in [("add", "topic.html#add"), ("box.area", "topic.html#box.area")]:
        sec = html[html.index(f'id="{name}"'):]
        assert f'href="{href}"' in sec[:sec.index("<h", 10)]                  # its section on the tutorial page
    side = html[html.index('id="sidebar"'):]
    assert re.search(r'class="sidebar-link active" aria-current="page" href="api.html">API reference<', side)
    # a link to a method that has no show_doc on its page goes to the method's entry on the API page
    assert '<h4 id="box.volume">Box.volume</h4>' in html
    index = (docs / "index.html").read_text()
    assert 'href="api.html#box.volume"' in index and "topic.html#box.volume" not in index
    assert ("they now point at the API page's entry: topic.html#box.volume"
            in (site[0] / "_docs" / "build_report.txt").read_text())


def test_public_methods_of_a_class():
    class A:
        x: int = 1
        def __init__(self): pass
        def __call__(self): pass
        def f(self): pass
        @property
        def p(self): return 1
        @classmethod
        def make(cls): return cls()
        def _private(self): pass
    class B(A):
        def g(self): pass
    assert site_api.public_methods(A) == ["__call__", "f", "p", "make"]
    assert site_api.public_methods(B) == ["g"]                               # inherited ones are A's


def test_api_entry_without_show_doc_when_an_annotation_does_not_resolve():
    ns = {}
    exec('def f(x: "NotImported", y=2):\n    "Doc of f"\n', ns)
    api = site_api.ApiPage("p", Path("."), {}, {}, {}, [])
    md = api._doc(ns["f"], "f", 3)
    assert md == "### f\n\n```python\nf(x: 'NotImported', y=2)\n```\n\n*Doc of f*"
    assert api.plain and "f (NameError" in api.plain[0]


def test_api_docstrings_keep_their_brackets_to_themselves():
    "A docstring's unbalanced bracket cannot pair with another on the API page into a link that swallows text"
    def html(md): return subprocess.run(["pandoc", "-f", site_pandoc.MD_READER, "-t", "html"], input=md, capture_output=True,
                                        text=True, check=True).stdout
    text = lambda h: re.sub(r"<[^>]*>|\\\\", "", h).replace("\n", " ")  # what a reader sees
    # a docstring's unbalanced "[" before another entry's "](url)"; its unbalanced "]" after a stray "[" and before "(url)"
    for doc, before, after in (("*ids in [0, V) of the vocabulary*", "", ", see x](p.html)"),
                               ("a decay in (0, 1]", "x[i and ", "(p.html)")):
        assert "<a " in html(before + doc + after)  # as written: a link that swallows the docstring's words
        out = html(before + site_api.escape_brackets(doc) + after)
        assert "<a " not in out and doc.strip("*") in text(out), out
    ok = "ids [0, V), see [the page](p.html)"
    assert '<a href="p.html">the page</a>' in html(site_api.escape_brackets(ok))  # real links stay links
    assert site_api.escape_brackets("`a[0]`\n```\nb[1]\n```") == "`a[0]`\n```\nb[1]\n```"  # code stays as written


def test_search_index_has_one_document_per_section(site):
    docs = site[0] / "_docs"
    js = (docs / "site_libs" / "search_index.js").read_text()
    data = json.loads(js.removeprefix("window.SITE_SEARCH = ").rstrip().rstrip(";"))
    by_url = {d["url"]: d for d in data["docs"]}
    d = by_url["topic.html#measured-quality"]
    assert d["title"] == "7. Measured quality" and d["page"] == "Topic" and "zyzzyva" in d["text"]
    assert "zyzzyva" not in by_url["topic.html#measured-quality-1"]["text"]
    assert (docs / "site_libs" / "lunr" / "lunr.min.js").exists()
    if shutil.which("node"): assert data["index"]["fields"] == ["title", "text"]   # prebuilt by node


def test_page_sections_keep_tex_and_leave_out_navigation():
    html = ('<nav id="sidebar"><a>Pages</a></nav><main><p>Intro at <span class="math inline">\\(x^2\\)</span>: '
            'text</p><nav class="page-navigation">Next</nav><h2 id="a">A <em>b</em></h2><p>Body '
            '<span class="math display">\\[E = \\sum_i x_i\\]</span></p></main><nav id="TOC">toc</nav>')
    assert site_search.page_sections(html) == [{"id": "", "title": None, "text": "Intro at x^2: text"},
                                               {"id": "a", "title": "A b", "text": "Body E = \\sum_i x_i"}]


def test_build_fails_naming_missing_image_and_broken_notebook(tmp_path):
    if not HAVE_PANDOC: pytest.skip("pandoc is not installed")
    root = make_project(tmp_path)
    nbp = root / "nbs" / "00_topic.ipynb"
    nb = nbformat.read(nbp, as_version=4)
    nb.cells.append(new_markdown_cell("![gone](images/not_there.png)"))
    nbformat.write(nb, nbp)
    r = subprocess.run([PY, "-m", "tools.build_site", "--root", str(root), "--force-pandoc"], cwd=ROOT,
                       env=tiny_env(root), capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert "00_topic.ipynb" in r.stderr and "nbs/images/not_there.png" in r.stderr
    assert (root / "_docs" / "index.html").exists()                      # the other pages are still built
    # a notebook that nbdev cannot process (a cell mixing an import with code that needs earlier cells)
    nb.cells[-1] = new_code_cell("import math\nundefined_name + 1")
    nbformat.write(nb, nbp)
    r = subprocess.run([PY, "-m", "tools.build_site", "--root", str(root), "--force-pandoc"], cwd=ROOT,
                       env=tiny_env(root), capture_output=True, text=True, timeout=300)
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
    front, out = site_notebook.prepare_notebook(json.loads(nbformat.writes(nb)))
    cells = [(c["cell_type"], c["source"], c["metadata"], len(c.get("outputs", []))) for c in out["cells"]]
    assert cells[0] == ("code", "y = 2", {}, 0)                           # include: false dropped, output: false
    assert cells[1] == ("markdown", "### f\n\ndoc", {}, 0)                # markdown output, no code (echo: false)
    assert cells[2] == ("code", "z = 3", {"code-fold": "show", "code-summary": "Exported source"}, 0)
    assert cells[3] == ("code", "plot()", {}, 1)                          # image stays an output ...
    assert cells[4] == ("markdown", "### f\n\ndoc", {}, 0)                # ... markdown output follows it
    assert len(cells) == 5


def test_sidebar_tree_sections_globs_and_links(tmp_path):
    for n in ["index.ipynb", "00_a.ipynb", "01_b.ipynb", "_hidden.ipynb"]: (tmp_path / n).write_text("{}")
    tree = site_nav.sidebar_tree(["index.ipynb", {"section": "S", "contents": ["0*.ipynb"]},
                                  {"text": "Ext", "href": "https://x.org"}], tmp_path)
    assert site_nav.tree_pages(tree) == ["index.ipynb", "00_a.ipynb", "01_b.ipynb"]
    assert tree[2] == {"link": "https://x.org", "text": "Ext"}
    assert site_nav.tree_pages(site_nav.sidebar_tree(["auto"], tmp_path)) == \
        ["00_a.ipynb", "01_b.ipynb", "index.ipynb"]
    pruned = site_nav.prune_tree(tree, {"00_a.ipynb", "01_b.ipynb"})          # a section left empty goes too
    assert site_nav.tree_pages(pruned) == ["index.ipynb"] and len(pruned) == 2
    api, title = site_nav.use_api_page([{"section": "L", "href": None, "items": [{"link": "api.html", "text": "API"}]}])
    assert api[0]["items"] == [{"page": site_nav.API_SRC, "text": "API"}] and title == "API"


# ----------------------------------------------------------------------------------------- browser_test.py
@pytest.mark.skipif(not HAVE_BROWSER, reason="chromium / chromedriver not installed")
def test_browser_test_passes_then_names_page_and_problems(site, tmp_path):
    root = site[0]
    docs = tmp_path / "docs"
    shutil.copytree(root / "_docs", docs)
    shots = tmp_path / "shots"
    run = lambda *a: subprocess.run([PY, "-m", "tools.browser_test", "--root", str(root), "--docs", str(docs),
                                     "--shots", str(shots), "--search", "zyzzyva",
                                     "--expect", r"^topic\.html#measured-quality$", *a],
                                    cwd=ROOT, capture_output=True, text=True, timeout=300)
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "browser test: 3 pages, 0 failed" in r.stdout
    assert sorted(p.name for p in shots.glob("*.png")) == ["api.png", "api__390px.png", "index.png",
                                                           "index__390px.png", "topic.png", "topic__390px.png"]
    assert not list(docs.rglob("*.png")) or not any("shot" in str(p) for p in docs.rglob("*.png"))
    r = run("--shots", str(docs / "_screenshots"))                               # never into the published site
    assert r.returncode == 1 and "published" in r.stderr
    page = docs / "topic.html"
    page.write_text(page.read_text().replace(
        "<main", '<p>left raw: $$x^2$$ and ::: here</p><img src="missing.png"><a href="index.html#nowhere">x</a>'
        '<div style="width: 900px">too wide</div><p><span class="math inline">\\(\\frac{1}{\\)</span></p><main', 1)
        .replace("</main>", '<h2 id="plotting">Plotting</h2><h2 id="next">Next</h2><p>text</p>'
                 '<div class="cell-output"><pre><code>| photo | mse |\n|---|---:|\n| cat | 0.2 |</code></pre></div>'
                 '<p>Built-in immutable sequence.</p><h3 id="last">Last words</h3></main>', 1))
    home = docs / "index.html"
    home.write_text(re.sub(r'<img\s+src="index_files/[0-9a-f]+\.png"[^>]*>', "", home.read_text()))   # no figure
    r = run("--search", "nonexistentword")
    assert r.returncode == 1
    assert "browser test: 3 pages, 2 failed" in r.stdout, r.stdout + r.stderr
    err = r.stderr
    assert "topic.html: image did not load: missing.png" in err
    assert "topic.html: raw display math '$$'" in err and "topic.html: a fenced-div marker ':::'" in err
    assert "topic.html: HTTP 404 for /missing.png" in err
    assert "topic.html: broken link to index.html#nowhere (no such id on that page)" in err
    assert "topic.html: scrolls sideways at 390 px" in err and "div (right edge" in err
    assert "topic.html: MathJax error:" in err
    assert "search for 'nonexistentword' shows no results" in err
    assert "topic.html: a Markdown table shown as text" in err and "|---|" in err
    assert "topic.html: empty heading 'Plotting'" in err and "topic.html: empty heading 'Last words'" in err
    assert "empty heading 'Next'" not in err
    assert "topic.html: a built-in type's docstring shows: 'Built-in immutable sequence'" in err
    assert "(home: sidebar, search): the first screen of the home page (1280 x 800 px) shows no image" in err
    assert "index.html:" not in err and "api.html:" not in err


# ------------------------------------------------------------------------------------------- check_sync.py
def test_check_sync_detects_hand_edit_and_unclean_notebook(tmp_path):
    root = make_project(tmp_path)
    subprocess.run([str(BIN / "nbdev-export")], cwd=root, check=True, capture_output=True)
    subprocess.run([str(BIN / "nbdev-clean")], cwd=root, check=True, capture_output=True)
    check = lambda: subprocess.run([PY, "-m", "tools.check_sync", "--root", str(root)], cwd=ROOT,
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


def test_committed_notebook_times_order_a_fresh_checkout():
    "The times nbtest orders a fresh checkout by (slowest first) name only notebooks that exist, each in seconds"
    times = json.loads((ROOT / "tools" / "nbtest_times.json").read_text())
    assert times and all((ROOT / "nbs" / name).is_file() for name in times)
    assert all(isinstance(t, (int, float)) and t >= 0 for t in times.values())


def test_shrink_figures_keeps_the_picture(tmp_path):
    y, x = np.mgrid[:120, :160]
    img = np.stack([(x * 1.5) % 256, (y * 2) % 256, np.full_like(x, 90)], -1).astype(np.uint8)  # a smooth plot-like image
    buf = io.BytesIO(); Image.fromarray(img).save(buf, "PNG")
    b64 = base64.b64encode(buf.getvalue()).decode()
    out = shrink_figures.shrink_png(b64)
    back = np.asarray(Image.open(io.BytesIO(base64.b64decode(out))).convert("RGB"), float)
    assert len(out) <= len(b64) and back.shape == img.shape and np.abs(back - img).mean() < 4  # at most a few grey levels
    fig = new_output("display_data", data={"image/png": b64, "text/plain": "f"})
    doc = new_output("display_data", data={"text/markdown": "### f", "text/plain": "f()"})
    value = new_output("execute_result", data={"text/plain": "42"})
    nb = new_notebook(cells=[new_code_cell("x", outputs=[fig, doc, value])])
    nbformat.write(nb, tmp_path / "a.ipynb")
    before, after = shrink_figures.shrink_notebook(tmp_path / "a.ipynb")
    cell = nbformat.read(tmp_path / "a.ipynb", as_version=4).cells[0]
    assert after <= before and cell.source == "x"
    # the plain-text stand-in goes where a picture or Markdown shows the output; a value shown as text stays
    test_data = [sorted(o["data"]) for o in cell.outputs]
    assert test_data == [["image/png"], ["text/markdown"], ["text/plain"]]


def test_run_notebooks_saves_outputs_and_keeps_slow_ones(tmp_path):
    "Cells run and keep their outputs; a `#| slow` cell is not run and keeps its old output; a failure writes nothing"
    old = new_output("stream", name="stdout", text="from an earlier full run\n")
    cells = [new_code_cell("x = 6 * 7"), new_code_cell("print(x)"),
             new_code_cell("#| slow\nraise RuntimeError('not run')", outputs=[old])]
    nbformat.write(new_notebook(cells=cells), tmp_path / "a.ipynb")
    run_notebooks.run(tmp_path / "a.ipynb", ["slow"])
    nb = nbformat.read(tmp_path / "a.ipynb", as_version=4)
    assert nb.cells[1].outputs[0]["text"] == "42\n" and nb.cells[2].outputs[0]["text"] == old["text"]
    before = (tmp_path / "a.ipynb").read_bytes()
    with pytest.raises(RuntimeError, match="not run"): run_notebooks.run(tmp_path / "a.ipynb", ["slow"], ["slow"])
    assert (tmp_path / "a.ipynb").read_bytes() == before


def test_ship_checkpoint_keeps_the_model_and_moves_the_log(tmp_path):
    model = ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.PRNGKey(0))
    history = [{"step": s, "loss": 1.0 / s} for s in range(1, 5001)]
    (tmp_path / "run").mkdir(); (tmp_path / "pkg").mkdir()
    src = save_checkpoint(tmp_path / "run" / "m.npz", model, opt_state={"mu": np.ones(3)}, step=77,
                          meta={"history": history, "final": {"mse": 0.01}})
    (tmp_path / "run" / "m.json").write_text(json.dumps({"history": history, "final": {"mse": 0.01}}))  # as `fit` writes it
    dest = ship_checkpoint.ship(src, tmp_path / "pkg")
    header, arrays = read_checkpoint(dest)
    assert header["step"] == 77 and header["meta"] == {"final": {"mse": 0.01}}  # the log is not in the header
    assert all(k.startswith("model/") for k in arrays)                             # no optimizer state
    for k, v in named_leaves(model).items(): np.testing.assert_array_equal(np.asarray(named_leaves(load_pretrained(dest))[k]), v)
    assert json.loads(dest.with_suffix(".json").read_text())["history"] == history  # the log is beside it
    assert dest.stat().st_size < src.stat().st_size / 3


def test_top_level_names_read_from_the_package_init(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text('"""A package.\n\nUse it as `import pkg as pk`."""\n'
                    "from os import path\n"                       # not the package's: left out
                    "from .core import ETConfig, count_params as cp\n"
                    "from pkg.data import load\n"
                    "from .x import _private\n")                  # private: left out
    alias, pairs = site_api.top_level_names(init, "pkg")
    assert alias == "pk"
    assert pairs == [("core", "ETConfig"), ("core", "cp"), ("data", "load")]
    init.write_text("from .core import A\n")
    assert site_api.top_level_names(init, "pkg") == (None, [("core", "A")])


# ------------------------------------------------------------------------------- browser_test.py --report
WIDE_PAGE = (   # hand-written content for the top of topic.html (a page of the sidebar section "Tutorials")
    '<div class="cell"><div class="sourceCode"><pre class="sourceCode python"><code style="white-space: pre">WIDE_CODE = "'
    + "x" * 300 + '"</code></pre></div></div>\n'
    '<p><span class="math display">\\[W_{\\mathrm{wide}} = \\text{' + "wide " * 60
    + '}\\]</span></p>\n'   # MathJax breaks lines between the terms of an equation, never in a text
    '<div class="cell"><div class="cell-output cell-output-display"><p><img src="captioned.png"></p></div></div>\n'
    '<p><em>A captioned figure.</em></p>\n'
    '<div class="cell"><div class="cell-output cell-output-display"><p><img src="uncaptioned.png"></p></div></div>\n'
    '<p>No caption: plain text that costs $5 and shows W__d, and Box.__init__ (a name, rendered).</p>\n'
    '<figure><img src="figure.png"><figcaption>A figure with a caption of its own</figcaption></figure>\n')


@pytest.mark.skipif(not HAVE_BROWSER, reason="chromium / chromedriver not installed")
def test_browser_report_finds_wide_code_equation_and_uncaptioned_figure(site, tmp_path):
    root = site[0]
    docs = tmp_path / "docs"
    shutil.copytree(root / "_docs", docs)
    for name in ("captioned", "uncaptioned", "figure"):
        Image.new("RGB", (240, 120), (30, 120, 30)).save(docs / f"{name}.png")
    page = docs / "topic.html"
    page.write_text(re.sub(r"(<main[^>]*>)", lambda m: m.group(1) + WIDE_PAGE, page.read_text(), count=1))
    report = tmp_path / "report.json"
    run = lambda *a: subprocess.run([PY, "-m", "tools.browser_test", "--root", str(root), "--docs", str(docs),
                                     "--shots", str(tmp_path / "shots"), "--search", "zyzzyva",
                                     "--expect", r"^topic\.html#measured-quality$", *a],
                                    cwd=ROOT, capture_output=True, text=True, timeout=300)
    r = run("--report", str(report))
    assert r.returncode == 0, r.stdout + r.stderr          # the report fails on none of the layout rules
    rep = json.loads(report.read_text())
    topic = rep["pages"]["topic.html"]
    assert topic["section"] == "Tutorials" and rep["widths"] == ["1280", "390"]
    for w in ("1280", "390"):
        m = topic["layout"][w]
        assert m["width"] == int(w)
        assert any(e.startswith('WIDE_CODE = "xxx') for e in m["examples"]["code"]), m
        assert any(e.startswith("W_{\\mathrm{wide}} = \\text{wide wide") for e in m["examples"]["equations"]), m
        assert m["figures"] == 3 and m["counts"]["uncaptioned"] == 1 and m["examples"]["uncaptioned"] == [
            "uncaptioned.png"], m
        assert m["counts"]["unrendered"] == 2 and "costs $5" in m["examples"]["unrendered"][0], m
        assert "shows W__d" in m["examples"]["unrendered"][1]       # and not Box.__init__: 2 found, not 4
        assert 0 < m["height"] < 40_000
    assert topic["problems"]["code_width@390"] and topic["problems"]["equation_width@1280"]
    assert topic["problems"]["figure_caption"] == ["uncaptioned.png"]
    assert rep["pages"]["index.html"]["layout"]["1280"]["counts"]["code"] == 0   # the home page's are narrow
    assert "topic.html" in r.stdout and "layout report in" in r.stdout
    # a normal run fails on the rules not in REPORT_ONLY: a table too wide at 390 px, the navbar out of order
    page.write_text(page.read_text().replace(
        WIDE_PAGE, WIDE_PAGE + '<table style="overflow: visible; max-width: none; width: 900px"><tr><td>WIDE_TABLE'
        "</td></tr></table>\n"))
    home = docs / "index.html"
    home.write_text(re.sub(r'<a class="nav-link" href="topic.html">Topic</a>',
                           '<a class="nav-link" href="index.html">Tutorials</a>', home.read_text()))
    r = run()
    assert r.returncode == 1, r.stdout + r.stderr
    assert "topic.html: table wider than its container at 390 px: WIDE_TABLE (900 > " in r.stderr, r.stderr
    assert ("(site: navbar, sidebar, home page): navbar, sidebar and the home page's tutorials disagree: the "
            "navbar's 'Tutorials' leads to index.html, the sidebar's section starts with topic.html") in r.stderr
    assert "topic.html: code block scrolls sideways at 1280 px: WIDE_CODE" in r.stderr, r.stderr
    assert "topic.html: display equation wider than its container at 1280 px" in r.stderr, r.stderr
    assert "topic.html: display equation wider than its container at 390 px" in r.stderr, r.stderr
    assert "topic.html: figure without a caption" in r.stderr and "uncaptioned.png" in r.stderr, r.stderr
