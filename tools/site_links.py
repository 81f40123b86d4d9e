"""The links between the rendered pages and the API reference page (for tools/build_site.py): the API page written
against the ids of the pages rendered before it (tools/site_api.py), and links to a section that its page lacks
pointed at the API page's entry instead."""
from __future__ import annotations

import os
import re
from pathlib import Path

from tools.site_api import API_HTML, ApiPage, load_modidx
from tools.site_nav import API_SRC


def _ids(path: Path) -> set[str]: return set(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


def retarget_to_api(out: Path, htmls: list[str]) -> list[str]:
    """Point links to `page.html#name` whose page has no such id (nbdev links every backticked public name to its
    module's page, show_doc or not) at the API page's entry `api.html#name` when it has one. Returns them."""
    api_ids, ids, moved = _ids(out / API_HTML), {h: _ids(out / h) for h in htmls}, []
    for h in htmls:
        page = out / h
        def fix(m, h=h):
            href = m.group(1)
            path, _, frag = href.partition("#")
            target = (Path(h).parent / path).as_posix() if path else h
            target = os.path.normpath(target).replace(os.sep, "/")
            if not frag or "://" in path or target not in ids or frag in ids[target] or frag not in api_ids:
                return m.group(0)
            moved.append(f"{target}#{frag}")
            rel = os.path.relpath(API_HTML, Path(h).parent.as_posix() or ".").replace(os.sep, "/")
            return f'href="{rel}#{frag}"'
        text = page.read_text(encoding="utf-8")
        new = re.sub(r'href="([^"]*#[^"]*)"', fix, text)
        if new != text: page.write_text(new, encoding="utf-8")
    return sorted(set(moved))


def write_api_page(pages: dict, order: list[str], errors: dict, out: Path, cfg, notes: list[str]) -> dict:
    """The markdown of the API reference page, linked to the sections of the pages rendered in `out`.
    Returns {'documented': number of entries, 'unlinked': names without a show_doc section on their page}."""
    built = [s for s in order if s not in errors and s != API_SRC]
    ids = {pages[s]["html"]: _ids(out / pages[s]["html"]) for s in built}
    api = ApiPage(str(cfg.lib_name), Path(cfg.lib_path), load_modidx(Path(cfg.lib_path)), ids,
                  {pages[s]["html"]: pages[s]["title"] for s in built}, [pages[s]["html"] for s in built])
    pages[API_SRC]["src"].write_text(api.markdown(), encoding="utf-8")
    if api.errors: errors[API_SRC] = "modules left out of the API page:\n" + "\n".join(api.errors)
    for p in api.plain: notes.append(f"API page: show_doc cannot render {p}; signature shown as written")
    return {"documented": api.documented, "unlinked": [n.split(".", 2)[-1] for n in api.unlinked]}
