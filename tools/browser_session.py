"""A headless Chromium on the built site (for tools/browser_test.py): the site served on 127.0.0.1 by a threaded
http.server in this process that remembers each request answered with an error status, a Chromium with a profile of
its own, full-page screenshots, and waiting for a page to reach a state."""
from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--force-device-scale-factor=1"]
MAX_SHOT_H = 30000   # pixels: a screenshot of a longer page is cut there
FAVICON = "/favicon.ico"   # a new browser asks for it once, whatever icon the page names: answered "no content"


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
