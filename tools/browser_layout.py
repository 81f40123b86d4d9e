"""The layout rules of tools/browser_test.py: what its pages must keep so, measured in each page at the desktop width
(1280 px) and at 390 px (the page loaded anew at that width, as MathJax breaks lines for the width it typesets at) by
tools/browser_js.py's JS_LAYOUT, and once for the site (navbar, sidebar, home page).

* equation_width: a display equation (MathJax's display box) is no wider than the content box of the block that holds
  it: the widest of its display box's scrollWidth, its typeset frame's width and min-width;
* code_width: a code block (`div.sourceCode`, or a `pre` outside one) does not scroll sideways: its scrollWidth, or
  that of a `pre` in it, is at most its clientWidth;
* table_width: a table is no wider than its parent's content box (its scrollWidth: the site's tables scroll by
  themselves), except, at 390 px only, a table in a scrolling wrapper (it, or a box around it, has overflow-x auto or
  scroll);
  these three apply to the pages of the sidebar sections WIDTH_SECTIONS (tutorials, how-to guides), at both widths;
* figure_caption: every figure has a caption. A figure is a shown <img> in the content at least MIN_FIGURE in natural
  size; its caption is the non-empty <figcaption> of its <figure>, or the paragraph right after its cell (else after
  its figure or paragraph) when all of that paragraph's text is italic (a `*caption*` Markdown cell, the project's
  convention);
* page_height: no page is taller than MAX_HEIGHT px at the desktop width;
* unrendered: no `$`, `\\(` or `__` in the visible text (code left out), at the desktop width; a `__` of a Python
  name (`__call__`, a show_doc heading) is rendered text;
* nav_order: a navbar link named as a sidebar section leads to that section's first page, the navbar's links follow
  the sidebar's order, and the home page's list of tutorials (the links of its section whose heading names the
  tutorials, when it has one) names every page of the sidebar's "Tutorials" section in the sidebar's order;
* home_order: every page of the sidebar that the home page's list of tutorials links is in the sidebar's order.

Each rule is measured on every page and written by `--report FILE.json`; a normal run fails on the rules that are not
in REPORT_ONLY (those every page passed when they were written; take one out of REPORT_ONLY to make it fail the run).
"""
from __future__ import annotations

import re

from tools.browser_js import JS_LAYOUT, JS_TEXT

DESKTOP, PHONE = 1280, 390
MAX_HEIGHT = 40_000                             # px, at the desktop width
MIN_FIGURE = (120, 60)                          # natural size of an image that is a figure (not an icon)
WIDTH_SECTIONS = ("Tutorials", "How-to guides")   # the sidebar sections whose pages the width rules cover
TUTORIALS = "Tutorials"
RULES = {
    "equation_width": "display equation wider than its container",
    "code_width": "code block scrolls sideways",
    "table_width": "table wider than its container",
    "figure_caption": "figure without a caption",
    "page_height": f"page taller than {MAX_HEIGHT:,} px",
    "unrendered": "unrendered '$', '\\(' or '__' in the visible text",
    "nav_order": "navbar, sidebar and the home page's tutorials disagree",
    "home_order": "the home page's list of tutorials is out of the sidebar's order",
}
WIDTH_RULES = ("equation_width", "code_width", "table_width")
# Measured and reported, but not failing the run (yet): the rules (a width rule at one width: "rule@width") that some
# page broke when this was written. Take one out to make it fail the run.
REPORT_ONLY: frozenset[str] = frozenset()  # every rule fails the run
RE_UNRENDERED = re.compile(r"\$|\\\(|__")
RE_DUNDER = re.compile(r"(?<![A-Za-z0-9])__[A-Za-z][A-Za-z0-9_]*?__(?![A-Za-z0-9])")   # `__call__`: rendered
EXAMPLES = 5                                    # offending elements named per rule, page and width


def measure(driver, text: str | None = None) -> dict:
    "The layout of the page as loaded, at the window's width: counts and a few offending elements of each rule"
    m = driver.execute_script(JS_LAYOUT, *MIN_FIGURE)
    text = driver.execute_script(JS_TEXT) if text is None else text
    dunders = [x.span() for x in RE_DUNDER.finditer(text)]
    raw = [re.sub(r"\s+", " ", text[max(0, x.start() - 30):x.end() + 30]) for x in RE_UNRENDERED.finditer(text)
           if not any(a <= x.start() < b for a, b in dunders)]
    lists = {"equations": m["equations"], "code": m["code"], "tables": m["tables"],
             "tables_scrolled": m["tablesScrolled"], "uncaptioned": m["uncaptioned"], "unrendered": raw}
    return {"width": m["width"], "height": m["height"], "figures": m["figures"],
            "counts": {k: len(v) for k, v in lists.items()}, "examples": {k: v[:EXAMPLES] for k, v in lists.items() if v}}


def page_problems(section: str, layout: dict) -> dict[str, list[str]]:
    """What each per-page rule finds in a page's `layout` ({width: measure(...)}), by rule; the width rules by rule
    and width ("code_width@390"), on the pages of WIDTH_SECTIONS only"""
    out = {}
    for w, m in layout.items():
        ex, w = m["examples"], PHONE if int(w) == PHONE else DESKTOP
        if section in WIDTH_SECTIONS:
            wide = ex.get("tables", []) + (ex.get("tables_scrolled", []) if w != PHONE else [])
            for r, found in zip(WIDTH_RULES, (ex.get("equations", []), ex.get("code", []), wide), strict=True):
                out[f"{r}@{w}"] = found
        if w == PHONE: continue
        out["figure_caption"] = ex.get("uncaptioned", [])
        out["page_height"] = [f"{m['height']:,} px at {w} px"] if m["height"] > MAX_HEIGHT else []
        out["unrendered"] = [repr(e) for e in ex.get("unrendered", [])]
    return out


def rule_keys() -> list[str]:
    "Every rule, the width rules once per width"
    return [k for r in RULES for k in ([f"{r}@{DESKTOP}", f"{r}@{PHONE}"] if r in WIDTH_RULES else [r])]


def report_only(key: str) -> bool: return key in REPORT_ONLY or key.split("@")[0] in REPORT_ONLY


def _page(href: str) -> str: return href.split("#")[0]


def order_problems(nav: dict, base: str) -> dict[str, list[str]]:
    "What nav_order and home_order find in JS_NAV_ORDER's answer on the home page"
    rel = lambda h: _page(h)[len(base):] if h.startswith(base) else None
    order, sections = [], {}
    for s in nav["sidebar"]:
        p = rel(s["href"])
        if p and p not in order: order.append(p); sections.setdefault(s["section"], []).append(p)
    nav_probs, home_probs = [], []
    if TUTORIALS not in sections: nav_probs.append(f"the sidebar has no section {TUTORIALS!r}")
    for a in nav["navbar"]:
        first = next((v[0] for k, v in sections.items() if k and k.lower() == a["text"].lower()), None)
        if first and rel(a["href"]) != first:
            nav_probs.append(f"the navbar's {a['text']!r} leads to {rel(a['href']) or a['href']}, "
                             f"the sidebar's section starts with {first}")
    def out_of_order(pages, what, probs):
        for x, y in zip(pages, pages[1:], strict=False):
            if order.index(x) > order.index(y): probs.append(f"{what}: {x} before {y}, the sidebar has {y} first")
    navbar = list(dict.fromkeys(p for a in nav["navbar"] if (p := rel(a["href"])) in order))
    out_of_order(navbar, "the navbar", nav_probs)
    home = list(dict.fromkeys(p for h in nav["home"] if (p := rel(h)) in order))
    if home:
        tut = [p for p in home if p in sections.get(TUTORIALS, [])]
        missing = [p for p in sections.get(TUTORIALS, []) if p not in tut]
        if missing: nav_probs.append(f"the home page's list of tutorials leaves out {', '.join(missing)}")
        out_of_order(tut, "the home page's tutorials", nav_probs)
        out_of_order(home, "the home page's list of tutorials", home_probs)
    return {"nav_order": nav_probs, "home_order": home_probs}


def failing(problems: dict[str, list[str]]) -> list[str]:
    "The problems of the rules that fail the run, each named by its rule (and width)"
    name = lambda k: RULES[k.split("@")[0]] + (f" at {k.split('@')[1]} px" if "@" in k else "")
    return [f"{name(k)}: {p}" for k, ps in problems.items() if not report_only(k) for p in ps]


def summary(report: dict) -> str:
    "A table of the report: per page, its section and the counts of each rule at each width"
    cols = [("eq", "equations"), ("code", "code"), ("table", "tables"), ("t-scr", "tables_scrolled"),
            ("nocap", "uncaptioned"), ("raw", "unrendered")]
    head = f"{'page':32} {'section':14}" + "".join(
        f" | {w}: " + " ".join(f"{c:>5}" for c, _ in cols) + ("   height" if w == str(DESKTOP) else "")
        for w in report["widths"])
    lines = [head, "-" * len(head)]
    for page, p in report["pages"].items():
        row = f"{page:32} {p['section'][:14]:14}"
        for w in report["widths"]:
            m = p["layout"].get(w)
            if m is None: row += f" | {w}: (not measured)"; continue
            row += f" | {w}: " + " ".join(f"{m['counts'][k]:>5}" for c, k in cols)
            if w == str(DESKTOP): row += f" {m['height']:>8,}"
        lines.append(row)
    for r, ps in report["site"].items():
        lines.append(f"(site) {r}: " + ("; ".join(ps) if ps else "ok"))
    lines.append("rules failing the run: " + ", ".join(report["failing_rules"]) +
                 "; report-only: " + ", ".join(report["report_only"]))
    return "\n".join(lines)
