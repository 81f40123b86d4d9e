"""The site's offline search index (used by tools/build_site.py): one document per section (the text under
each heading with an id) of every rendered page, and a lunr index of them (Debian's `libjs-lunr`).

The index is built with node when it is installed (the browser then only loads it); without node the page
builds it from the same documents on the first search. Both are written as one script,
`site_libs/search_index.js` (`window.SITE_SEARCH = {docs, index}`), so that search works from file:// too."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

LUNR = Path("/usr/share/javascript/lunr")
HERE = Path(__file__).resolve().parent
BUILD_INDEX_JS = HERE / "site" / "build_index.js"
MAX_TEXT = 4000   # characters of a section kept for the index and the result snippets
SKIP = {"script", "style", "nav", "noscript", "svg", "button"}
HEADINGS = {"h1", "h2", "h3", "h4"}


def _tex(source: str) -> str:
    "The TeX of a math element without its delimiters: `\\(x^2\\)` -> `x^2`."
    s = source.strip()
    for a, b in (("\\(", "\\)"), ("\\[", "\\]"), ("$$", "$$"), ("$", "$")):
        if s.startswith(a) and s.endswith(b) and len(s) >= len(a) + len(b): return s[len(a):len(s) - len(b)].strip()
    return s


class _Sections(HTMLParser):
    """Text of <main>, cut at every heading that has an id; math (span.math) as its TeX source without the
    delimiters, so that a snippet reads `the energy at \\mathbf{g}` rather than a hole; navigation left out."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.in_main, self.skip, self.heading, self.math = False, [], None, None
        self.sections = [{"id": "", "title": None, "text": []}]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "main": self.in_main = True
        if not self.in_main: return
        if self.skip:
            if tag == self.skip[0]: self.skip.append(tag)
            return
        cls = (a.get("class") or "").split()
        if tag == "span" and "math" in cls: self.skip, self.math = [tag], []; return
        if tag in SKIP: self.skip = [tag]; return
        if tag in HEADINGS and a.get("id"):
            self.heading = tag
            self.sections.append({"id": a["id"], "title": [], "text": []})

    def handle_endtag(self, tag):
        if tag == "main": self.in_main = False
        if self.skip:
            if tag == self.skip[0]: self.skip.pop()
            if not self.skip and self.math is not None:
                tex, self.math = _tex("".join(self.math)), None
                self._add(f" {tex}")
            return
        if tag == self.heading: self.heading = None

    def handle_data(self, data):
        if not self.in_main: return
        if self.skip:
            if self.math is not None: self.math.append(data)
            return
        self._add(data)

    def _add(self, text):
        sec = self.sections[-1]
        (sec["title"] if self.heading else sec["text"]).append(text)


def _clean(parts) -> str: return re.sub(r"\s+", " ", "".join(parts)).strip()


def page_sections(html: str) -> list[dict]:
    "[{'id', 'title', 'text'}] of one page; the first one (id '') is the text before the first heading."
    p = _Sections()
    p.feed(html)
    out = []
    for s in p.sections:
        title = _clean(s["title"]) if s["title"] is not None else None
        text = _clean(s["text"])[:MAX_TEXT]
        if s["id"] == "" and not text: continue
        out.append({"id": s["id"], "title": title, "text": text})
    return out


def search_docs(out: Path, pages: list[tuple[str, str]], boost: dict[str, float] | None = None) -> list[dict]:
    """Search documents of the rendered pages [(html path, page title)] in the site folder `out`; `boost`
    weighs the documents of a page (the API page ranks below the tutorial sections that explain a name)."""
    docs = []
    for html, title in pages:
        for s in page_sections((out / html).read_text(encoding="utf-8")):
            docs.append({"id": str(len(docs)), "url": html + (f"#{s['id']}" if s["id"] else ""),
                         "title": s["title"] or title, "page": title, "text": s["text"],
                         "boost": (boost or {}).get(html, 1.0)})
    return docs


def write_search(out: Path, pages: list[tuple[str, str]], boost: dict[str, float] | None = None, log=print) -> dict:
    """Copy lunr into `out`/site_libs/lunr and write `out`/site_libs/search_index.js.
    Returns {'docs': n, 'prebuilt': bool}."""
    if not (LUNR / "lunr.min.js").exists():
        raise FileNotFoundError(f"lunr not found at {LUNR} (Debian package libjs-lunr)")
    (out / "site_libs" / "lunr").mkdir(parents=True, exist_ok=True)
    shutil.copy2(LUNR / "lunr.min.js", out / "site_libs" / "lunr" / "lunr.min.js")
    docs = search_docs(out, pages, boost)
    index = None
    node = shutil.which("node") or shutil.which("nodejs")
    if node:
        r = subprocess.run([node, str(BUILD_INDEX_JS), str(LUNR / "lunr.js")], input=json.dumps(docs),
                           capture_output=True, text=True)
        if r.returncode == 0: index = json.loads(r.stdout)
        else: log(f"note: node could not build the search index, the browser will: {r.stderr.strip()[:200]}")
    data = json.dumps({"docs": docs, "index": index}, ensure_ascii=False, separators=(",", ":"))
    (out / "site_libs" / "search_index.js").write_text(f"window.SITE_SEARCH = {data};\n", encoding="utf-8")
    return {"docs": len(docs), "prebuilt": index is not None}
