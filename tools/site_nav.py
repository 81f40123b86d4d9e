"""The site's structure from `_quarto.yml` (used by tools/build_site.py and tools/browser_test.py): the
sidebar as a tree of pages, sections and links, and the HTML of the navbar, the sidebar and the
previous/next links of a page."""
from __future__ import annotations

import fnmatch
import html
from pathlib import Path

import yaml

from tools.site_api import API_HTML, API_TITLE

API_SRC = "(api)"   # the key of the generated API reference page among the page sources


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


def prune_tree(tree, gone: set) -> list[dict]:
    "The sidebar tree without the pages in `gone` (and without sections left empty)."
    out = []
    for t in tree:
        if "page" in t and t["page"] in gone: continue
        if "section" in t:
            t = {**t, "href": None if t.get("href") in gone else t.get("href"), "items": prune_tree(t["items"], gone)}
            if not t["items"] and not t["href"]: continue
        out.append(t)
    return out


def use_api_page(tree) -> tuple[list[dict], str | None]:
    "The sidebar tree with its link to api.html turned into the generated API page, and that link's text."
    found, out = None, []
    for t in tree:
        if t.get("link") == API_HTML:
            found = t.get("text") if t.get("text") != API_HTML else API_TITLE
            t = {"page": API_SRC, "text": found}
        elif "section" in t:
            items, f = use_api_page(t["items"])
            t, found = {**t, "items": items}, found or f
        out.append(t)
    return out, found


def tree_pages(tree) -> list[str]:
    out = []
    for t in tree:
        if "page" in t: out.append(t["page"])
        elif "section" in t:
            if t.get("href"): out.append(t["href"])
            out += tree_pages(t["items"])
    return list(dict.fromkeys(out))

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
