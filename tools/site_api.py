"""The API reference page of the site (written by tools/site_links.py): every public name of every module of the
package (its `__all__`), and every public method of each class, as nbdev's `show_doc` renders it (heading,
source link, signature, documentation), each with a link to its section on the tutorial page that defines it.

The links come from nbdev's module index (`_modidx.py`); a link is written only to an anchor that exists in
the built page (else to the class's section, else to the page), so every link of the API page resolves."""
from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections import Counter
from pathlib import Path

API_HTML = "api.html"
API_TITLE = "API reference"
DUNDERS = ("__call__",)   # special methods that are public API
# The top-level names, grouped by the stage of the pipeline their module belongs to (data -> model -> train ->
# tasks); a module not listed here puts its names under "More".
STAGE_GROUPS = (("Data and checkpoints", ("checks", "checkpoint", "data", "crops", "patches", "text", "evaluate")),
                ("Models", ("descent", "core", "dense", "image", "language", "generation", "classify", "paper",
                            "pretrained")),
                ("Training", ("train", "image_training", "language_training", "classify_training")),
                ("Tasks", ("inpaint", "inpaint_files", "novelty", "dynamic", "own_text", "own_images", "cli")))


def public_methods(cls) -> list[str]:
    "Names of the public methods, properties, class- and static methods defined by `cls` itself, in order."
    out = []
    for name, v in vars(cls).items():
        if name.startswith("_") and name not in DUNDERS: continue
        if isinstance(v, (classmethod, staticmethod, property)) or inspect.isfunction(v): out.append(name)
    return out


def _target(v):
    "The function that show_doc documents for a class attribute."
    if isinstance(v, (classmethod, staticmethod)): return v.__func__
    if isinstance(v, property): return v.fget
    return v


_LINK = re.compile(r"(!?\[[^\[\]]*\]\([^()\s]*\))")  # [text](url) and ![alt](url), kept by re.split


def escape_brackets(md: str) -> str:
    """`md` with every `[` and `]` that is not part of a link escaped, outside code blocks and inline code: a docstring's
    "[0, V)" or "(0, 1]" must not pair with a bracket elsewhere on the page into a link that swallows what lies between"""
    def esc(text): return "".join(p if k % 2 else re.sub(r"(?<!\\)([\[\]])", r"\\\1", p)
                                   for k, p in enumerate(_LINK.split(text)))
    out, fenced = [], False
    for line in md.split("\n"):
        if line.startswith("```"): fenced = not fenced
        elif not fenced:  # odd parts of a line split at backticks are inline code
            line = "`".join(esc(p) if i % 2 == 0 else p for i, p in enumerate(line.split("`")))
        out.append(line)
    return "\n".join(out)


def top_level_names(init: Path, lib_name: str) -> tuple[str | None, list[tuple[str, str]]]:
    """From a package's `__init__.py`: the alias its docstring suggests (`import pkg as alias`) and its top-level
    names as (module, name) pairs, in the order of its `from .module import ...` lines."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    alias = re.search(r"`import \w+ as (\w+)`", ast.get_docstring(tree) or "")
    pairs = [(n.module.split(".")[-1], a.asname or a.name) for n in tree.body if isinstance(n, ast.ImportFrom) and n.module
             and (n.level or n.module.startswith(f"{lib_name}.")) for a in n.names if not (a.asname or a.name).startswith("_")]
    return (alias.group(1) if alias else None), pairs


def _first_line(obj) -> str:
    doc = (inspect.getdoc(obj) or "").strip().splitlines()
    return escape_brackets(doc[0]) if doc else ""


def _show_doc(obj, name: str, level: int) -> str:
    from nbdev.showdoc import show_doc
    md = show_doc(obj, name=name, title_level=level)._repr_markdown_()
    return escape_brackets(re.sub(r"#LNone\)", ")", md).replace("\n---\n", "\n", 1).strip())


def _plain_doc(obj, name: str, level: int) -> str:
    "Heading, signature as written (annotations not evaluated) and docstring: for what show_doc cannot render."
    try: sig = str(inspect.signature(obj))
    except (TypeError, ValueError): sig = "(...)"
    doc = inspect.getdoc(obj) or ""
    head = f"{'#' * level} {name}\n\n```python\n{name.split('.')[-1]}{sig}\n```"
    return head + (f"\n\n*{escape_brackets(doc)}*" if doc else "")


def _constant_doc(name: str, obj, level: int) -> str:
    text = repr(obj)
    if len(text) > 200: text = text[:200] + " ..."
    return f"{'#' * level} {name}\n\n`{type(obj).__name__}` constant:\n\n```python\n{name} = {text}\n```"


class ApiPage:
    "The markdown of the API page for the package at `lib_path`, with links checked against the built pages."
    def __init__(self, lib_name: str, lib_path: Path, modidx: dict, page_ids: dict[str, set[str]],
                 page_titles: dict[str, str], page_order: list[str]):
        self.lib_name, self.lib_path, self.modidx = lib_name, Path(lib_path), modidx
        self.page_ids, self.page_titles, self.page_order = page_ids, page_titles, page_order
        self.unlinked: list[str] = []   # public names without a section of their own on a tutorial page
        self.errors: list[str] = []     # modules that could not be imported (and so are not documented)
        self.plain: list[str] = []      # names that show_doc could not render (documented without it)
        self.documented = 0             # entries written: public names and public methods
        self._seen: Counter = Counter()  # ids of the headings written so far (pandoc numbers repeats)

    def modules(self) -> list[str]:
        names = [p.stem for p in sorted(self.lib_path.glob("*.py")) if not p.stem.startswith("_")]
        order = {h: i for i, h in enumerate(self.page_order)}
        def page_rank(m):
            syms = self.modidx.get("syms", {}).get(f"{self.lib_name}.{m}", {})
            pages = [v[0].split("#")[0] for v in syms.values()]
            return min((order.get(p, len(order)) for p in pages), default=len(order))
        return sorted(names, key=lambda m: (page_rank(m), m))

    def link(self, qualname: str, fallback: str | None = None) -> str | None:
        "A resolving link to the section of `qualname` (module.Name[.method]) on its tutorial page."
        syms = self.modidx.get("syms", {})
        mod = ".".join(qualname.split(".")[:2])
        entry = syms.get(mod, {}).get(qualname)
        if entry is None: return fallback
        page, _, anchor = entry[0].partition("#")
        if page not in self.page_ids: return fallback
        if anchor in self.page_ids[page]: return f"{page}#{anchor}"
        self.unlinked.append(qualname)
        return fallback or page

    def _heading(self, name: str) -> str:
        "The id the page's next heading `name` gets (pandoc: lower case, `-1`, `-2` ... for repeats)"
        base = re.sub(r"[^\w.-]", "", name.lower())
        n = self._seen[base]; self._seen[base] += 1
        return base if n == 0 else f"{base}-{n}"

    def _seen_next(self, name: str) -> str:
        "The id `_heading(name)` will give, without counting it"
        base = re.sub(r"[^\w.-]", "", name.lower())
        n = self._seen[base]
        return base if n == 0 else f"{base}-{n}"

    def top_level(self, entry_ids: dict[tuple[str, str], str]) -> str:
        "The index of the top-level names by pipeline stage, one line each with a link to its entry below"
        alias, pairs = top_level_names(self.lib_path / "__init__.py", self.lib_name)
        if not pairs: return ""
        prefix = f"{alias or self.lib_name}."
        groups = {label: [] for label, _ in STAGE_GROUPS} | {"More": []}
        stage = {m: label for label, mods in STAGE_GROUPS for m in mods}
        for mod, name in pairs:
            obj = getattr(importlib.import_module(f"{self.lib_name}.{mod}"), name, None)
            anchor = entry_ids.get((mod, name)) or next((a for (_, n), a in entry_ids.items() if n == name), None)
            ref = f"[`{prefix}{name}`](#{anchor})" if anchor else f"`{prefix}{name}`"
            groups[stage.get(mod, "More")].append(f"- {ref}" + (f": {_first_line(obj)}" if _first_line(obj) else ""))
        head = (f"## The top level\n\n`import {self.lib_name}" + (f" as {alias}" if alias else "") +
                "` gives these names, by the stage of the pipeline they belong to; every module's full list follows.")
        return "\n\n".join([head] + [f"**{label}**\n\n" + "\n".join(lines) for label, lines in groups.items() if lines])

    def _link_line(self, href: str | None) -> str:
        if not href: return ""
        page, _, anchor = href.partition("#")
        return f"\n\nIn the tutorial: [{self.page_titles.get(page, page)}]({href})"

    def _doc(self, obj, name: str, level: int) -> str:
        self._heading(name)
        self.documented += 1
        try: return _show_doc(obj, name, level)
        except Exception as e:  # e.g. an annotation naming something the module does not import
            self.plain.append(f"{name} ({type(e).__name__}: {e})")
            return _plain_doc(obj, name, level)

    def markdown(self) -> str:
        parts = [f"Every public name of `{self.lib_name}`, module by module (each module's `__all__`), and every "
                 "public method of its classes: signature, documentation, and a link to the section of the "
                 "tutorial page that introduces it, with the motivation, the equations and the tests."]
        toc, entry_ids = [], {}
        self._seen = Counter()
        for m in self.modules():
            modname = f"{self.lib_name}.{m}"
            try: mod = importlib.import_module(modname)
            except Exception as e:
                self.errors.append(f"{modname} does not import: {type(e).__name__}: {e}")
                continue
            names = list(getattr(mod, "__all__", []))
            if not names: continue
            toc.append(f"[`{modname}`](#{self._heading(modname)}) ({len(names)})")
            doc = (mod.__doc__ or "").strip().splitlines()
            parts.append(f"## {modname}" + (f"\n\n{doc[0]}" if doc else ""))
            # each module's entries folded, so that the page is an index a reader opens where needed; a link to an
            # entry opens its fold (site.js)
            parts.append(f'<details class="api-module"><summary>{len(names)} entries: signatures and '
                         "documentation</summary>")
            for name in names:
                obj = getattr(mod, name)
                href = self.link(f"{modname}.{name}")
                entry_ids[m, name] = self._seen_next(name)
                if inspect.isclass(obj) or callable(obj):
                    parts.append(self._doc(obj, name, 3) + self._link_line(href))
                else:
                    self._heading(name)
                    self.documented += 1
                    parts.append(_constant_doc(name, obj, 3) + self._link_line(href))
                if not inspect.isclass(obj): continue
                for meth in public_methods(obj):
                    target = _target(vars(obj)[meth])
                    mhref = self.link(f"{modname}.{name}.{meth}", fallback=href)
                    parts.append(self._doc(target, f"{name}.{meth}", 4) + self._link_line(mhref))
            parts.append("</details>")
        parts.insert(1, "Modules: " + " · ".join(toc))
        if index := self.top_level(entry_ids): parts.insert(2, index)
        return "\n\n".join(parts) + "\n"


def load_modidx(lib_path: Path) -> dict:
    "nbdev's module index (`_modidx.py` holds one assignment `d = {...}`), read without importing it."
    p = Path(lib_path) / "_modidx.py"
    if not p.exists(): return {}
    ns: dict = {}
    exec(compile(p.read_text(encoding="utf-8"), str(p), "exec"), {}, ns)
    return ns.get("d", {})
