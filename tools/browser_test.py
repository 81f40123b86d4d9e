#!/usr/bin/env python
"""Load every page of the built site (`_docs/`) in headless Chromium and fail on what a reader would see.

The site is served on 127.0.0.1 (a free port, a threaded http.server in this process). The pages are the
sidebar links of the home page, which must cover every page that `_quarto.yml`'s sidebar lists. For each
page: wait for MathJax to finish, save a full-page screenshot, and report a failure when
* an <img> did not load (naturalWidth 0) or the server answered 404 to any request of the page,
* math is left raw (TeX delimiters or commands in the visible text, math that MathJax did not typeset, or
  a MathJax error),
* `:::` or `$$` leaks into the visible text (code blocks excepted),
* a link to another file of the site points at nothing,
* the browser console shows a SEVERE message.

Usage: python tools/browser_test.py [--docs _docs] [--shots _docs/_screenshots] [--width 1400]
Needs Debian's chromium and chromium-driver (`make setup` installs them) and selenium.
"""
from __future__ import annotations

import argparse, functools, http.server, os, re, shutil, sys, tempfile, threading, time
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

HERE = Path(__file__).resolve().parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1"]
RAW_TEXT = [(":::", "a fenced-div marker ':::'"), ("$$", "raw display math '$$'"),
            ("\\(", "raw inline math '\\('"), ("\\[", "raw display math '\\['"),
            ("\\begin{", "a raw LaTeX environment '\\begin{'"), ("\\frac", "raw TeX '\\frac'")]
RE_DOLLAR_TEX = re.compile(r"\$\s*\\[A-Za-z]+")          # "$\alpha" : dollar math that was never parsed
MAX_SHOT_H = 30000

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
  .map(e => e.textContent.slice(0, 80));
return {scripts: scripts.length, untypeset, pandocMath, rendered, errors};
"""
JS_IMAGES = r"""
return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
"""
JS_LINKS = r"""
return [...document.querySelectorAll('a[href]')].map(a => a.href);
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

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self): self.thread.start(); return self
    def __exit__(self, *a): self.httpd.shutdown(); self.httpd.server_close()


def expected_pages(root: Path) -> int | None:
    "How many pages the sidebar of _quarto.yml lists (None when there is no _quarto.yml)."
    sys.path.insert(0, str(HERE))
    import build_site
    try:
        from nbdev.config import get_config
        nbs = Path(get_config(root).nbs_path)
    except Exception:
        nbs = root / "nbs"
    qy = build_site.load_quarto_yml(root, nbs)
    if not qy: return None
    sb = (qy.get("website") or {}).get("sidebar") or {}
    if isinstance(sb, list): sb = next((s for s in sb if s.get("contents")), sb[0] if sb else {})
    return len(build_site.tree_pages(build_site.sidebar_tree(sb.get("contents") or ["auto"], nbs)))


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


def check_page(driver, server: Server, base: str, url: str, docs: Path, shot: Path, width: int) -> list[str]:
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
    # images: give late ones a moment, then report those that did not load
    for _ in range(40):
        bad = driver.execute_script(JS_IMAGES)
        if not bad: break
        time.sleep(0.05)
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
    for href in driver.execute_script(JS_LINKS):
        if not href.startswith(base): continue
        rel = unquote(urlsplit(href).path).lstrip("/")
        f = docs / rel
        if rel and not (f.is_file() or (f.is_dir() and (f / "index.html").exists())):
            probs.append(f"broken link to {rel}")
    screenshot(driver, shot, width)
    time.sleep(0.1)
    for e in driver.get_log("browser"):
        if e.get("level") == "SEVERE": probs.append(f"console error: {e.get('message', '')[:300]}")
    for page, code, path in list(server.errors):
        if page == url: probs.append(f"HTTP {code} for {path}")
    return list(dict.fromkeys(probs))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent, help="project root (for _quarto.yml)")
    ap.add_argument("--docs", type=Path, default=None, help="built site (default ROOT/_docs)")
    ap.add_argument("--shots", type=Path, default=None, help="screenshot folder (default DOCS/_screenshots)")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=1000)
    a = ap.parse_args(argv)
    root = a.root.resolve()
    docs = (a.docs or root / "_docs").resolve()
    shots = (a.shots or docs / "_screenshots").resolve()
    if not (docs / "index.html").exists():
        print(f"browser test: FAILED: no site at {docs} (run `make site` first)", file=sys.stderr); return 1
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not Path(exe).exists():
            print(f"browser test: FAILED: {exe} missing (`make setup` installs chromium and chromium-driver)",
                  file=sys.stderr); return 1
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    want = expected_pages(root)
    profile = tempfile.mkdtemp(prefix="browser_test_profile_")
    results, t0 = {}, time.time()
    try:
        with Server(docs) as server:
            base = f"http://127.0.0.1:{server.port}/"
            driver = make_driver(a.width, a.height, profile)
            try:
                driver.set_script_timeout(60)
                driver.set_page_load_timeout(60)
                driver.get(base + "index.html")
                pages = [u for u in driver.execute_script(JS_SIDEBAR) if u.startswith(base)]
                pages = [base + "index.html"] + [u for u in pages if u.split("#")[0] != base + "index.html"]
                pages = list(dict.fromkeys(u.split("#")[0] for u in pages))
                driver.get_log("browser")   # drop what the first load logged; index is checked again below
                server.errors.clear()
                if want is not None and len(pages) < want:
                    results["(sidebar)"] = [f"the home page's sidebar links {len(pages)} pages, _quarto.yml lists {want}"]
                for url in pages:
                    rel = url[len(base):]
                    shot = shots / (rel.replace("/", "__").removesuffix(".html") + ".png")
                    results[rel] = check_page(driver, server, base, url, docs, shot, a.width)
            finally:
                driver.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    failed = {k: v for k, v in results.items() if v}
    for page, probs in results.items():
        if page == "(sidebar)": continue
        print(f"  {'FAIL' if probs else 'ok  '} {page}")
    for page, probs in failed.items():
        for p in probs: print(f"browser test: {page}: {p}", file=sys.stderr)
    n = len([k for k in results if k != "(sidebar)"])
    print(f"browser test: {n} pages, {len(failed)} failed ({time.time() - t0:.1f} s); screenshots in {shots}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
