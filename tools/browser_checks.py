"""What tools/browser_test.py checks in a page of the built site, loaded in a headless Chromium
(tools/browser_session.py), at the desktop width and at 390 px (a phone), saving a full-page screenshot at each.
A page fails when
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
toggle shows it; the search box finds the expected section for a query.
"""
from __future__ import annotations

import functools
import re
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tools.browser_js import (
    JS_EMPTY_HEADINGS,
    JS_FIRST_SCREEN_IMAGES,
    JS_IMAGES,
    JS_LINKS,
    JS_MATH,
    JS_MATH_WAIT,
    JS_OUTPUT_TEXT,
    JS_OVERFLOW,
    JS_SEARCH_RESULTS,
    JS_SIDEBAR_STATE,
    JS_TEXT,
)
from tools.browser_layout import MIN_FIGURE, PHONE, measure
from tools.browser_session import Server, browser, screenshot, wait_for

RAW_TEXT = [(":::", "a fenced-div marker ':::'"), ("$$", "raw display math '$$'"),
            ("\\(", "raw inline math '\\('"), ("\\[", "raw display math '\\['"),
            ("\\begin{", "a raw LaTeX environment '\\begin{'"), ("\\frac", "raw TeX '\\frac'")]
RE_DOLLAR_TEX = re.compile(r"\$\s*\\[A-Za-z]+")          # "$\alpha" : dollar math that was never parsed
RE_TABLE_RULE = re.compile(r"\|\s*:?-{3,}:?\s*\|")         # "|---|", "| ---: |": a Markdown table left as text
# docstrings of built-in types that show_doc prints for a constant (a tuple, a dict ...) instead of its own
BUILTIN_DOCS = ["Built-in immutable sequence", "Built-in mutable sequence", "dict() -> new empty dictionary",
                "str(object='') -> str", "int([x]) -> integer"]
FIRST_SCREEN = (1280, 800)   # the home page's first screen must show an image (a figure, not an icon)
SETTLE_S, LAYOUT_S = 10.0, 3.0   # how long late images, and the layout after a resize, may take
RE_ID = re.compile(r"""\bid=["']([^"']+)["']""")


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


def load(driver, url: str, probs: list[str]) -> tuple[str | None, list[str]]:
    "Load a page and wait for it, its math (which MathJax breaks into lines for the window's width) and its images"
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
    # images: give late ones time (a loaded machine serves slowly); those that did not load
    return mj, wait_for(lambda: driver.execute_script(JS_IMAGES), lambda b: not b, SETTLE_S)


def check_page(driver, server: Server, base: str, url: str, docs: Path, shot: Path, width: int,
               height: int, layout: dict | None = None) -> list[str]:
    "The problems of a page; `layout`, when given, gets tools/browser_layout.py's measures at each width."
    probs = []
    server.current["page"] = url
    mj, bad = load(driver, url, probs)
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
    if layout is not None: layout[str(width)] = measure(driver, text)
    screenshot(driver, shot, width)
    # a phone: nothing may stick out on the right
    driver.set_window_size(PHONE, height)
    o = wait_for(lambda: driver.execute_script(JS_OVERFLOW), lambda o: o["over"] <= 0, LAYOUT_S)
    if o["over"] > 0:
        probs.append(f"scrolls sideways at {PHONE} px ({o['over']} px too wide): " + ", ".join(o["culprits"]))
    screenshot(driver, shot.with_name(shot.stem + f"__{PHONE}px.png"), PHONE)
    if layout is not None:   # as a phone loads it: MathJax breaks its lines for the width it typesets at
        load(driver, url, probs)
        layout[str(PHONE)] = measure(driver)
    driver.set_window_size(width, height)
    time.sleep(0.1)
    for e in driver.get_log("browser"):
        if e.get("level") == "SEVERE": probs.append(f"console error: {e.get('message', '')[:300]}")
    for page, code, path in list(server.errors):
        if page == url: probs.append(f"HTTP {code} for {path}")
    return list(dict.fromkeys(probs))


def check_pages(docs: Path, rels: list[str], shots: Path, width: int, height: int) -> dict[str, tuple]:
    """The problems of each page `rels` names (its path in the site), checked in one browser of their own, and its
    layout ({width: tools.browser_layout.measure(...)})"""
    out = {}
    with browser(docs, width, height) as (driver, server, base):
        for rel in rels:
            layout = {}
            probs = check_page(driver, server, base, base + rel, docs,
                               shots / (rel.replace("/", "__").removesuffix(".html") + ".png"), width, height, layout)
            out[rel] = (probs, layout)
    return out
