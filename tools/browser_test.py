#!/usr/bin/env python
"""Load every page of the built site (`_docs/`) in headless Chromium and fail on what a reader would see.

The site is served on 127.0.0.1 (a free port, a threaded http.server in this process). The pages are the
sidebar links of the home page, which must cover every page that `_quarto.yml`'s sidebar lists; they are
shared out among `--browsers` browsers (one per core, at most two), each with a server of its own, so that a
failed request is charged to the page that made it. For each page: wait for MathJax to finish, save
full-page screenshots at the desktop width and at 390 px (a phone), and report a failure when
* an <img> did not load (naturalWidth 0) or the server answered 404 to any request of the page,
* math is left raw (TeX delimiters or commands in the visible text, math that MathJax did not typeset, or
  a MathJax error),
* `:::` or `$$` leaks into the visible text (code blocks excepted),
* a link into the site points at nothing: a missing file, or a `#fragment` that is no id of its page,
* the page scrolls sideways at 390 px,
* the browser console shows a SEVERE message,
* a Markdown table is shown as its source (a `|---|` rule in the visible text or in a cell's output),
* a heading is empty: followed directly by a heading of the same or a higher level, or by nothing,
* Python's own docstring of a built-in type shows (`show_doc` of a constant: "Built-in immutable sequence").
Once, on the home page: the first screen (1280 x 800) shows an image; at 390 px the sidebar is hidden and its
toggle shows it; the search box finds the expected section for a query (by default "Lagrangian" -> the energy
layer norm section).

Screenshots go to ROOT/screenshots/ (git-ignored), never into the published folder.
Usage: python -m tools.browser_test [--docs _docs] [--shots screenshots] [--width 1400]
Needs Debian's chromium and chromium-driver (`make setup` installs them) and selenium.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tools.site_nav import load_quarto_yml, prune_tree, sidebar_tree, tree_pages, use_api_page

HERE = Path(__file__).resolve().parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1"]
RAW_TEXT = [(":::", "a fenced-div marker ':::'"), ("$$", "raw display math '$$'"),
            ("\\(", "raw inline math '\\('"), ("\\[", "raw display math '\\['"),
            ("\\begin{", "a raw LaTeX environment '\\begin{'"), ("\\frac", "raw TeX '\\frac'")]
RE_DOLLAR_TEX = re.compile(r"\$\s*\\[A-Za-z]+")          # "$\alpha" : dollar math that was never parsed
RE_TABLE_RULE = re.compile(r"\|\s*:?-{3,}:?\s*\|")         # "|---|", "| ---: |": a Markdown table left as text
# docstrings of built-in types that show_doc prints for a constant (a tuple, a dict ...) instead of its own
BUILTIN_DOCS = ["Built-in immutable sequence", "Built-in mutable sequence", "dict() -> new empty dictionary",
                "str(object='') -> str", "int([x]) -> integer"]
FIRST_SCREEN = (1280, 800)   # the home page's first screen must show an image (a figure, not an icon)
MIN_FIGURE = (120, 60)
MAX_SHOT_H = 30000
PHONE = 390
FAVICON = "/favicon.ico"   # a new browser asks for it once, whatever icon the page names: answered "no content"
SETTLE_S, LAYOUT_S = 10.0, 3.0   # how long late images, and the layout after a resize, may take
SEARCH_QUERY = "Lagrangian"
SEARCH_EXPECT = r"energy_transformer\.html#(energylayernorm|[a-z0-9.-]*layer-norm[a-z0-9.-]*)$"
RE_ID = re.compile(r"""\bid=["']([^"']+)["']""")

# Visible text outside code, as the reader sees it (no <pre>/<code>/<script>, no hidden elements).
JS_TEXT = r"""
const skip = new Set(['PRE','CODE','SCRIPT','STYLE','NOSCRIPT','TEXTAREA','SVG']);
const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const out = [];
for (let n = w.nextNode(); n; n = w.nextNode()) {
  let e = n.parentElement, ok = true;
  for (let a = e; a; a = a.parentElement) { if (skip.has(a.tagName.toUpperCase())) { ok = false; break; } }
  if (!ok || !n.textContent.trim()) continue;
  if (e.offsetParent === null && getComputedStyle(e).position !== 'fixed' && !e.closest('details')) continue;
  out.push(n.textContent);
}
return out.join(' ');
"""
JS_MATH_WAIT = r"""
const done = arguments[arguments.length - 1];
if (window.MathJax && MathJax.Hub && MathJax.Hub.Queue) { MathJax.Hub.Queue(() => done('mathjax2')); }
else if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(() => done('mathjax3'), () => done('mathjax3-error')); }
else { done('none'); }
"""
JS_MATH = r"""
const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
const untypeset = scripts.filter(s => !document.getElementById(s.id + '-Frame')).map(s => s.textContent);
const pandocMath = document.querySelectorAll('span.math, .math').length;
const rendered = document.querySelectorAll('.MathJax_CHTML, .MathJax, .MathJax_Display, mjx-container, math').length;
const errors = [...document.querySelectorAll('.MathJax_Error, .mjx-merror, [data-mjx-error], .noError, mjx-merror')]
  .map(e => e.textContent.slice(0, 80)).concat((window.mathjaxErrors || []).map(e => e.slice(0, 80)));
return {scripts: scripts.length, untypeset, pandocMath, rendered, errors};
"""
JS_IMAGES = r"""
return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
"""
# Text of the cells' outputs (printed text is in <pre>, which JS_TEXT leaves out).
JS_OUTPUT_TEXT = r"""
return [...document.querySelectorAll('.cell-output pre, .cell-output code')].map(e => e.textContent).join('\n');
"""
# Headings of the content with nothing under them: the next heading (of the same or a higher level) or the end
# of the content comes before any paragraph, list, table, code, figure or math.
JS_EMPTY_HEADINGS = r"""
const root = document.querySelector('main') || document.body;
const CONTENT = new Set(['P','PRE','TABLE','IMG','UL','OL','DL','BLOCKQUOTE','FIGURE','SVG','CANVAS','DETAILS',
                         'VIDEO','IFRAME','MJX-CONTAINER']);
const isContent = e => CONTENT.has(e.tagName.toUpperCase()) || e.classList.contains('MathJax_Display')
  || e.classList.contains('callout');
const all = [...root.querySelectorAll('*')];
const empty = [];
const title = h => [...h.childNodes].filter(n => !(n.classList && n.classList.contains('anchor')))
  .map(n => n.textContent).join('').trim().slice(0, 80);
let open = null;   // {el, level}
for (const e of all) {
  if (open && open.el.contains(e)) continue;
  const m = /^H([1-6])$/.exec(e.tagName.toUpperCase());
  if (m) {
    if (e.closest('nav, #TOC, .toc, #sidebar, header.navbar')) continue;
    const level = +m[1];
    if (open && level <= open.level) empty.push(title(open.el));
    open = {el: e, level};
  } else if (open && isContent(e) && e.getBoundingClientRect().height > 0) {
    open = null;
  }
}
if (open) empty.push(title(open.el));
return empty;
"""
# Images in the first screen: loaded, at least MIN_FIGURE in size, and at least partly above the fold.
JS_FIRST_SCREEN_IMAGES = r"""
const [minW, minH] = arguments;
window.scrollTo(0, 0);
return [...document.images].filter(i => {
  const r = i.getBoundingClientRect();
  return i.complete && i.naturalWidth > 0 && r.width >= minW && r.height >= minH && r.top < innerHeight
    && r.bottom > 0;
}).map(i => i.getAttribute('src'));
"""
JS_LINKS = r"""
return [...document.querySelectorAll('a[href]')].map(a => a.href);
"""
# Elements that stick out on the right of a narrow window (inside no scrolling or clipping box).
JS_OVERFLOW = r"""
const W = document.documentElement.clientWidth, over = document.documentElement.scrollWidth - W;
if (over <= 0) return {over, culprits: []};
const clips = e => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
  const o = getComputedStyle(a).overflowX; if (o !== 'visible') return true; } return false; };
const culprits = [];
for (const e of document.body.querySelectorAll('*')) {
  const r = e.getBoundingClientRect();
  if (r.right > W + 1 && r.width > 0 && !clips(e) && getComputedStyle(e).position !== 'fixed') {
    culprits.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                  (e.className && typeof e.className === 'string'
                   ? '.' + e.className.trim().split(/\s+/).join('.') : '') +
                  ' (right edge ' + Math.round(r.right) + ' px)');
    if (culprits.length >= 3) break; }
}
return {over, culprits};
"""
JS_SIDEBAR_STATE = r"""
const s = document.getElementById('sidebar'); if (!s) return null;
const r = s.getBoundingClientRect(), st = getComputedStyle(s);
return {visible: st.visibility !== 'hidden' && st.display !== 'none' && r.right > 0 && r.left < innerWidth
                 && r.width > 0};
"""
JS_SEARCH_RESULTS = r"""
return [...document.querySelectorAll('#search-results a.search-result')].map(a => a.href);
"""
JS_SIDEBAR = r"""
const links = document.querySelectorAll('#sidebar a.sidebar-link, #quarto-sidebar a.sidebar-link, nav.sidebar a');
return [...new Set([...links].map(a => a.href))];
"""


class Server:
    "http.server in a thread; remembers every request answered with an error status."
    def __init__(self, root: Path):
        errors, current = [], {"page": None}
        self.errors, self.current = errors, current

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, fmt, *args): pass
            def log_request(self, code="-", size="-"):
                if str(code).isdigit() and int(code) >= 400: errors.append((current["page"], int(code), self.path))
            def do_GET(self):
                if self.path != FAVICON: return super().do_GET()
                self.send_response(204); self.end_headers()

        class Quiet(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):   # the browser dropping a connection is no failure
                if not isinstance(sys.exc_info()[1], ConnectionError): super().handle_error(request, client_address)

        self.httpd = Quiet(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self): self.thread.start(); return self
    def __exit__(self, *a): self.httpd.shutdown(); self.httpd.server_close()


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


def make_driver(width: int, height: int, profile: str):
    os.environ.setdefault("SE_OFFLINE", "true")   # never let Selenium Manager look for drivers online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS: opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument(f"--window-size={width},{height}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)


def screenshot(driver, path: Path, width: int):
    import base64
    h = int(driver.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)"))
    h = max(1, min(h, MAX_SHOT_H))
    res = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": h, "scale": 1}})
    path.write_bytes(base64.b64decode(res["data"]))


def wait_for(probe, ok, seconds: float):
    "Call `probe` until `ok` holds of what it returns or `seconds` have passed; return its last answer."
    t0 = time.time()
    while True:
        got = probe()
        if ok(got) or time.time() - t0 > seconds: return got
        time.sleep(0.05)


@functools.cache
def page_ids(path: Path) -> frozenset:
    "The ids of the elements of a page of the site (as written by the build; the site's script adds none)."
    return frozenset(unquote(i) for i in RE_ID.findall(path.read_text(encoding="utf-8", errors="replace")))


def link_problem(href: str, base: str, docs: Path) -> str | None:
    "Why a link into the site resolves to nothing (None when it resolves; links elsewhere are not checked)."
    if not href.startswith(base): return None
    parts = urlsplit(href)
    rel = unquote(parts.path).lstrip("/")
    f = docs / rel
    if f.is_dir(): f = f / "index.html"
    if not f.is_file(): return f"broken link to {rel}"
    frag = unquote(parts.fragment)
    if frag and f.suffix == ".html" and frag not in page_ids(f):
        return f"broken link to {rel or 'index.html'}#{frag} (no such id on that page)"
    return None


def check_first_screen(driver, base: str, width: int, height: int) -> list[str]:
    "The home page's first screen, FIRST_SCREEN in size, shows an image (a figure, not an icon)."
    w, h = FIRST_SCREEN
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",   # exactly this viewport
                           {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False})
    try:
        driver.get(base + "index.html")
        found = wait_for(lambda: driver.execute_script(JS_FIRST_SCREEN_IMAGES, *MIN_FIGURE), bool,
                         SETTLE_S)   # images load after the page
        inner = driver.execute_script("return [innerWidth, innerHeight]")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.set_window_size(width, height)
    if found: return []
    return [f"the first screen of the home page ({inner[0]} x {inner[1]} px) shows no image of at least "
            f"{MIN_FIGURE[0]} x {MIN_FIGURE[1]} px"]


def check_home(driver, base: str, docs: Path, width: int, height: int, query: str, expect: str) -> list[str]:
    """Once: the first screen shows an image; the sidebar collapses at phone width and opens with its toggle;
    the search box finds `expect`."""
    probs = check_first_screen(driver, base, width, height)
    driver.get(base + "index.html")
    driver.set_window_size(PHONE, height)
    state = wait_for(lambda: driver.execute_script(JS_SIDEBAR_STATE), lambda st: st is None or not st["visible"],
                     LAYOUT_S)
    if state is None: probs.append("no sidebar (#sidebar)")
    elif state["visible"]: probs.append(f"the sidebar is not collapsed at {PHONE} px")
    else:
        btns = driver.find_elements("id", "sidebar-toggle")
        if not btns or not btns[0].is_displayed(): probs.append(f"no sidebar toggle at {PHONE} px")
        else:
            btns[0].click()
            if not wait_for(lambda: driver.execute_script(JS_SIDEBAR_STATE)["visible"], bool, LAYOUT_S):
                probs.append("the sidebar toggle does not show the sidebar")
    driver.set_window_size(width, height)
    driver.get(base + "index.html")
    boxes = driver.find_elements("id", "search-input")
    if not boxes: return probs + ["no search box (#search-input) in the navbar"]
    boxes[0].click()
    boxes[0].send_keys(query)
    hrefs, t0 = [], time.time()
    while not hrefs and time.time() - t0 < 15:
        time.sleep(0.1)
        hrefs = driver.execute_script(JS_SEARCH_RESULTS)
    if not hrefs: return probs + [f"search for {query!r} shows no results"]
    rels = [h[len(base):] if h.startswith(base) else h for h in hrefs]
    if not any(re.search(expect, r) for r in rels[:5]):
        probs.append(f"search for {query!r}: no result among the first 5 matches {expect!r}: {rels[:5]}")
    for h in hrefs:
        problem = link_problem(h, base, docs)
        if problem: probs.append(f"search result: {problem}")
    return probs


def check_page(driver, server: Server, base: str, url: str, docs: Path, shot: Path, width: int,
               height: int) -> list[str]:
    probs = []
    server.current["page"] = url
    driver.get(url)
    t0 = time.time()
    while driver.execute_script("return document.readyState") != "complete":
        if time.time() - t0 > 30: probs.append("page did not finish loading in 30 s"); break
        time.sleep(0.05)
    try:
        mj = driver.execute_async_script(JS_MATH_WAIT)
    except Exception as e:  # timeout
        mj = None
        probs.append(f"MathJax did not finish typesetting ({type(e).__name__})")
    # images: give late ones time (a loaded machine serves slowly), then report those that did not load
    bad = wait_for(lambda: driver.execute_script(JS_IMAGES), lambda b: not b, SETTLE_S)
    for src in bad: probs.append(f"image did not load: {src}")
    m = driver.execute_script(JS_MATH)
    if m["pandocMath"] and mj == "none": probs.append(f"{m['pandocMath']} math elements but no MathJax on the page")
    if m["scripts"] and not m["rendered"]: probs.append("math was not typeset (no MathJax output elements)")
    for tex in m["untypeset"][:5]: probs.append(f"math not typeset: {tex[:80]!r}")
    for err in m["errors"][:5]: probs.append(f"MathJax error: {err!r}")
    text = driver.execute_script(JS_TEXT)
    for needle, what in RAW_TEXT:
        i = text.find(needle)
        if i >= 0: probs.append(f"{what} in the visible text: ...{text[max(0, i - 40):i + 40]!r}...")
    mm = RE_DOLLAR_TEX.search(text)
    if mm: probs.append(f"raw dollar math in the visible text: ...{text[max(0, mm.start() - 30):mm.end() + 30]!r}...")
    shown = text + "\n" + driver.execute_script(JS_OUTPUT_TEXT)
    mt = RE_TABLE_RULE.search(shown)
    if mt:
        line = shown[:mt.start()].rsplit("\n", 2)[-2:]
        probs.append(f"a Markdown table shown as text: ...{' / '.join(line)[-60:] + mt.group(0)!r}...")
    for doc in BUILTIN_DOCS:
        if doc in shown: probs.append(f"a built-in type's docstring shows: {doc!r} (show_doc of a constant?)")
    for h in driver.execute_script(JS_EMPTY_HEADINGS)[:5]:
        probs.append(f"empty heading {h!r}: the next heading or the end of the page comes before any content")
    for href in dict.fromkeys(driver.execute_script(JS_LINKS)):
        problem = link_problem(href, base, docs)
        if problem: probs.append(problem)
    screenshot(driver, shot, width)
    # a phone: nothing may stick out on the right
    driver.set_window_size(PHONE, height)
    o = wait_for(lambda: driver.execute_script(JS_OVERFLOW), lambda o: o["over"] <= 0, LAYOUT_S)
    if o["over"] > 0:
        probs.append(f"scrolls sideways at {PHONE} px ({o['over']} px too wide): " + ", ".join(o["culprits"]))
    screenshot(driver, shot.with_name(shot.stem + f"__{PHONE}px.png"), PHONE)
    driver.set_window_size(width, height)
    time.sleep(0.1)
    for e in driver.get_log("browser"):
        if e.get("level") == "SEVERE": probs.append(f"console error: {e.get('message', '')[:300]}")
    for page, code, path in list(server.errors):
        if page == url: probs.append(f"HTTP {code} for {path}")
    return list(dict.fromkeys(probs))


@contextlib.contextmanager
def browser(docs: Path, width: int, height: int):
    "A headless Chromium with a profile of its own and a server of the site: (driver, server, base URL)"
    profile = tempfile.mkdtemp(prefix="browser_test_profile_")
    try:
        with Server(docs) as server:
            driver = make_driver(width, height, profile)
            try:
                driver.set_script_timeout(60)
                driver.set_page_load_timeout(60)
                yield driver, server, f"http://127.0.0.1:{server.port}/"
            finally:
                driver.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def check_pages(docs: Path, rels: list[str], shots: Path, width: int, height: int) -> dict[str, list[str]]:
    "The problems of each page `rels` names (its path in the site), checked in one browser of their own"
    with browser(docs, width, height) as (driver, server, base):
        return {rel: check_page(driver, server, base, base + rel, docs,
                                shots / (rel.replace("/", "__").removesuffix(".html") + ".png"), width, height)
                for rel in rels}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent, help="project root (for _quarto.yml)")
    ap.add_argument("--docs", type=Path, default=None, help="built site (default ROOT/_docs)")
    ap.add_argument("--shots", type=Path, default=None, help="screenshot folder (default ROOT/screenshots)")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--browsers", type=int, default=min(2, os.cpu_count() or 1), help="browsers checking pages at once")
    ap.add_argument("--search", default=SEARCH_QUERY, help="query typed into the search box")
    ap.add_argument("--expect", default=SEARCH_EXPECT,
                    help="regex that one of the first 5 results (page.html#id) must match")
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
        if want is not None and len(pages) < want:
            results["(sidebar)"] = [f"the home page's sidebar links {len(pages)} pages, _quarto.yml lists {want}"]
        n = max(1, min(a.browsers, len(pages)))   # the pages shared out, each browser with a server of its own
        with ThreadPoolExecutor(n) as ex:
            parts = [ex.submit(check_pages, docs, pages[i::n], shots, a.width, a.height) for i in range(n)]
            home = check_home(driver, base, docs, a.width, a.height, a.search, a.expect)   # meanwhile, in this one
            checked = {rel: probs for part in parts for rel, probs in part.result().items()}
    results |= {rel: checked[rel] for rel in pages} | {"(home: sidebar, search)": home}
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
