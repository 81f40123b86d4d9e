#!/usr/bin/env python
r"""Load every page of the built site (`_docs/`) in headless Chromium and fail on what a reader would see.

The site is served on 127.0.0.1 (a free port, a threaded http.server in this process). The pages are the
sidebar links of the home page, which must cover every page that `_quarto.yml`'s sidebar lists; they are
shared out among `--browsers` browsers (one per core, at most two), each with a server of its own, so that a
failed request is charged to the page that made it. For each page: wait for MathJax to finish, save
full-page screenshots at the desktop width and at 390 px (a phone), and report what tools/browser_checks.py
finds (images that did not load, raw math or Markdown, broken links, sideways scrolling, console errors, empty
headings ...). Once, on the home page: the first screen shows an image, the sidebar collapses at 390 px and its
toggle shows it, and the search box finds the expected section for a query (by default "Lagrangian" -> the
energy layer norm section). The layout rules of tools/browser_layout.py (wide equations, code and tables on the
tutorial and how-to pages, figures without a caption, page height, unrendered `$`, `\(`, `__`, the navbar's,
sidebar's and home page's orders) fail the run, except those in its REPORT_ONLY; `--report FILE.json` writes what
every rule measures per page and width (counts, and a few offending elements each), prints a table of the counts,
and fails on none of them.

This module is the command: it finds the pages, shares them out and reports. The checks are in
tools/browser_checks.py, the JavaScript they run in tools/browser_js.py, the browser and the server in
tools/browser_session.py.

Screenshots go to ROOT/screenshots/ (git-ignored), never into the published folder.
Usage: python -m tools.browser_test [--docs _docs] [--shots screenshots] [--width 1280] [--report FILE.json]
Needs Debian's chromium and chromium-driver (`make setup` installs them) and selenium.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.browser_checks import check_home, check_pages
from tools.browser_js import JS_NAV_ORDER, JS_SIDEBAR
from tools.browser_layout import (
    DESKTOP,
    PHONE,
    RULES,
    failing,
    order_problems,
    page_problems,
    report_only,
    rule_keys,
    summary,
)
from tools.browser_session import CHROMEDRIVER, CHROMIUM, browser
from tools.site_nav import load_quarto_yml, prune_tree, sidebar_tree, tree_pages, use_api_page

HERE = Path(__file__).resolve().parent
SEARCH_QUERY = "Lagrangian"
SEARCH_EXPECT = r"energy_transformer\.html#(energylayernorm|[a-z0-9.-]*layer-norm[a-z0-9.-]*)$"


def expected_pages(root: Path) -> int | None:
    """How many pages the sidebar of _quarto.yml lists that the build renders: those whose notebook exists,
    and the API page (None when there is no _quarto.yml)."""
    try:
        from nbdev.config import get_config
        nbs = Path(get_config(root).nbs_path)
    except Exception:
        nbs = root / "nbs"
    qy = load_quarto_yml(root, nbs)
    if not qy: return None
    sb = (qy.get("website") or {}).get("sidebar") or {}
    if isinstance(sb, list): sb = next((s for s in sb if s.get("contents")), sb[0] if sb else {})
    tree = sidebar_tree(sb.get("contents") or ["auto"], nbs)
    tree, _ = use_api_page(prune_tree(tree, {p for p in tree_pages(tree) if not (nbs / p).exists()}))
    return len(tree_pages(tree))



def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent, help="project root (for _quarto.yml)")
    ap.add_argument("--docs", type=Path, default=None, help="built site (default ROOT/_docs)")
    ap.add_argument("--shots", type=Path, default=None, help="screenshot folder (default ROOT/screenshots)")
    ap.add_argument("--width", type=int, default=DESKTOP)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--browsers", type=int, default=min(2, os.cpu_count() or 1), help="browsers checking pages at once")
    ap.add_argument("--search", default=SEARCH_QUERY, help="query typed into the search box")
    ap.add_argument("--expect", default=SEARCH_EXPECT,
                    help="regex that one of the first 5 results (page.html#id) must match")
    ap.add_argument("--report", type=Path, default=None,
                    help="write the layout rules' measures per page and width to this JSON file (none of them fails)")
    a = ap.parse_args(argv)
    root = a.root.resolve()
    docs = (a.docs or root / "_docs").resolve()
    shots = (a.shots or root / "screenshots").resolve()
    if shots == docs or docs in shots.parents:
        print(f"browser test: FAILED: screenshots would be published with the site ({shots})", file=sys.stderr)
        return 1
    if not (docs / "index.html").exists():
        print(f"browser test: FAILED: no site at {docs} (run `make site` first)", file=sys.stderr); return 1
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not Path(exe).exists():
            print(f"browser test: FAILED: {exe} missing (`make setup` installs chromium and chromium-driver)",
                  file=sys.stderr); return 1
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    want = expected_pages(root)
    results, t0 = {}, time.time()
    with browser(docs, a.width, a.height) as (driver, _, base):
        driver.get(base + "index.html")
        pages = [u for u in driver.execute_script(JS_SIDEBAR) if u.startswith(base)]
        pages = [base + "index.html"] + [u for u in pages if u.split("#")[0] != base + "index.html"]
        pages = [u[len(base):] for u in dict.fromkeys(u.split("#")[0] for u in pages)]
        nav = driver.execute_script(JS_NAV_ORDER)
        if want is not None and len(pages) < want:
            results["(sidebar)"] = [f"the home page's sidebar links {len(pages)} pages, _quarto.yml lists {want}"]
        n = max(1, min(a.browsers, len(pages)))   # the pages shared out, each browser with a server of its own
        with ThreadPoolExecutor(n) as ex:
            parts = [ex.submit(check_pages, docs, pages[i::n], shots, a.width, a.height) for i in range(n)]
            home = check_home(driver, base, docs, a.width, a.height, a.search, a.expect)   # meanwhile, in this one
            checked = {rel: got for part in parts for rel, got in part.result().items()}
    sections = {s["href"].split("#")[0][len(base):]: s["section"] for s in nav["sidebar"]}
    rules = {rel: page_problems(sections.get(rel, ""), checked[rel][1]) for rel in pages}
    site = order_problems(nav, base)
    results |= {rel: checked[rel][0] + ([] if a.report else failing(rules[rel])) for rel in pages}
    results |= {"(home: sidebar, search)": home, "(site: navbar, sidebar, home page)": [] if a.report else failing(site)}
    if a.report:
        report = {"widths": [str(a.width), str(PHONE)], "rules": RULES, "report_only": [k for k in rule_keys() if report_only(k)],
                  "failing_rules": [k for k in rule_keys() if not report_only(k)], "site": site,
                  "pages": {rel: {"section": sections.get(rel, ""), "layout": checked[rel][1], "problems": rules[rel]}
                            for rel in pages}}
        a.report.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(summary(report))
        print(f"browser test: layout report in {a.report}")
    failed = {k: v for k, v in results.items() if v}
    for page, probs in results.items():
        if page.startswith("("): continue
        print(f"  {'FAIL' if probs else 'ok  '} {page}")
    for page, probs in failed.items():
        for p in probs: print(f"browser test: {page}: {p}", file=sys.stderr)
    n = len([k for k in results if not k.startswith("(")])
    print(f"browser test: {n} pages, {len(failed)} failed ({time.time() - t0:.1f} s); screenshots in {shots}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
