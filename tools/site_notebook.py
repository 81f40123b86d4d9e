"""The notebooks as pandoc reads them (for tools/build_site.py): nbdev's processing of the notebooks into `_proc/`
(frontmatter, hidden cells, show_doc, doc links), then Quarto's cell options applied to each processed notebook
(`include`, `output`, `echo`, `code-fold`, markdown outputs, printed Markdown tables)."""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import yaml


def _cell_options(src: str) -> tuple[dict, str]:
    "Quarto cell options (`#| key: value` lines opening a code cell) and the remaining source."
    lines, opts, i = src.splitlines(), {}, 0
    while i < len(lines) and lines[i].lstrip().startswith("#|"):
        text = lines[i].lstrip()[2:].strip()
        i += 1
        if not text: continue
        try: val = yaml.safe_load(text)
        except yaml.YAMLError: val = None
        if isinstance(val, dict): opts.update(val)
        elif ":" in text:
            k, v = text.split(":", 1)
            opts[k.strip()] = v.strip()
        else: opts[text] = True
    return opts, "\n".join(lines[i:])


def src_text(x) -> str: return "".join(x) if isinstance(x, list) else (x or "")


def md_cell(text: str) -> dict: return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code_cell(source: str, outputs: list, meta: dict) -> dict:
    return {"cell_type": "code", "metadata": meta, "execution_count": None, "source": source, "outputs": outputs}


def _markdown_output(o: dict, asis: bool) -> str | None:
    "The markdown that Quarto would splice into the page for output `o` (None: a regular output)."
    data = o.get("data", {})
    if o.get("output_type") in ("display_data", "execute_result"):
        if any(k.startswith("image/") or k == "text/html" for k in data): return None
        if "text/markdown" in data: return src_text(data["text/markdown"])
        if asis and "text/plain" in data: return src_text(data["text/plain"])
    if asis and o.get("output_type") == "stream" and o.get("name") == "stdout": return src_text(o.get("text"))
    return None


RE_TABLE_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")   # |---|:--:|---:|


def split_printed_tables(text: str) -> list[tuple[str, str]]:
    """Printed text cut into ('text', ...) and ('markdown', ...) parts: each run of lines that opens with `|`
    and has a rule line (`|---|---:|`) second is a Markdown table that a cell printed, which the page shows as
    a table rather than as its source."""
    lines, parts, i = text.splitlines(keepends=True), [], 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].lstrip().startswith("|"): j += 1
        if j - i >= 2 and RE_TABLE_RULE.match(lines[i + 1].strip()):
            parts.append(("markdown", "".join(lines[i:j])))
            i = j
            continue
        if parts and parts[-1][0] == "text": parts[-1] = ("text", parts[-1][1] + lines[i])
        else: parts.append(("text", lines[i]))
        i += 1
    return [(k, t) for k, t in parts if t.strip()]


def _printed_outputs(o: dict) -> list:
    "A stdout output whose text holds printed Markdown tables, as [output | markdown text, ...]; else [o]."
    if o.get("output_type") != "stream" or o.get("name") != "stdout": return [o]
    parts = split_printed_tables(src_text(o.get("text")))
    if not any(k == "markdown" for k, _ in parts): return [o]
    return [t if k == "markdown" else {**o, "text": t} for k, t in parts]


def prepare_notebook(nb: dict) -> tuple[dict, dict]:
    """Apply Quarto's cell options to a processed notebook so that pandoc's ipynb reader renders what Quarto
    would: returns (frontmatter, notebook). `include: false` drops a cell; `output: false` its outputs;
    markdown outputs (show_doc, `IPython.display.Markdown`, `output: asis`) and Markdown tables printed to
    stdout become markdown cells; `echo`, `code-fold`, `code-summary`
    and `fig-cap` go into cell metadata for the Lua filter."""
    front, cells = {}, []
    for cell in nb.get("cells", []):
        ctype, src = cell.get("cell_type"), src_text(cell.get("source"))
        if ctype == "raw":
            s = src.strip()
            if not front and s.startswith("---"):
                try: front = yaml.safe_load(s.strip("-\n ")) or {}
                except yaml.YAMLError: front = {}
                continue
            cells.append(cell); continue
        if ctype != "code":
            cells.append({"cell_type": ctype, "metadata": {}, "source": src, **({"attachments": cell["attachments"]}
                                                                                 if "attachments" in cell else {})})
            continue
        opts, code = _cell_options(src)
        if opts.get("include") is False: continue
        meta = {}
        for k in ("echo", "code-fold", "code-summary", "fig-cap"):
            if k in opts: meta[k] = str(opts[k]).lower() if isinstance(opts[k], bool) else str(opts[k])
        outputs = [] if opts.get("output") is False else list(cell.get("outputs", []))
        asis = opts.get("output") == "asis"
        # split the outputs at each markdown output: [outputs, markdown, outputs, markdown, ..., outputs]
        segments, run_ = [], []
        for o in (x for out in outputs for x in ([out] if asis else _printed_outputs(out))):
            if isinstance(o, str): segments += [run_, o]; run_ = []; continue   # a printed Markdown table
            o = {k: v for k, v in o.items() if k != "execution_count"}
            if o.get("output_type") == "execute_result":  # pandoc reads one only with a number: shown the same way
                o["output_type"] = "display_data"
            md = _markdown_output(o, asis)
            if md is None: run_.append(o)
            else: segments += [run_, md]; run_ = []
        segments.append(run_)
        for i, seg in enumerate(segments):
            if isinstance(seg, str): cells.append(md_cell(seg))
            elif i == 0 and meta.get("echo") != "false": cells.append(_code_cell(code, seg, meta))
            elif seg: cells.append(_code_cell("", seg, {**meta, "echo": "false"}))   # outputs only
    nb = {**nb, "cells": cells}
    return front, nb



HINT_IMPORTS = ("nbdev runs each notebook's import, export and show_doc cells to render the API docs; a cell "
                "that mixes imports with other code is run too, and fails without the cells before it: give the "
                "imports a cell of their own.")


def process_notebooks(root: Path, nbs: Path, srcs: list[str], workers: int, notes: list[str]) -> tuple[Path, dict]:
    """nbdev's processing of the notebooks into _proc/ (cached by modification time, as nbdev does).
    Returns the folder and {page: error message} for the notebooks that nbdev could not process; what nbdev
    warns about goes to `notes`."""
    from nbdev.serve import proc_nbs
    if workers > 0:
        try: return Path(proc_nbs(str(nbs), n_workers=workers)), {}
        except Exception: pass   # find out which notebooks fail, one at a time
    errors = {}   # one notebook at a time, to name every one that fails and still render the others
    for s in srcs:
        if not s.endswith(".ipynb"): continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try: proc_nbs(str(nbs), n_workers=0, file_glob=Path(s).name)
            except Exception as e:  # nbdev's message names the notebook and the cell; the traceback adds nothing
                msg = str(e)
                if "import" in msg: msg += "\n" + HINT_IMPORTS
                errors[s] = msg
        for w in caught:
            msg = str(w.message)
            if "Found cells containing imports" in msg:
                code = [l for l in msg.split("---", 1)[-1].strip("-\n ").splitlines() if l and not l.startswith("#|")]
                notes.append(f"{s}: a cell mixes imports with other code, so nbdev runs it while building the "
                             f"docs (give the imports a cell of their own): {code[0] if code else ''!r} ...")
            elif issubclass(w.category, (UserWarning, RuntimeWarning)):
                notes.append(f"nbdev warning: {s}: {msg.splitlines()[0] if msg else w.category.__name__}")
    return root / "_proc", errors


def raw_title(path: Path) -> str | None:
    "The `# Title` opening a notebook's first markdown cell."
    try: cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except Exception: return None
    for c in cells:
        if c.get("cell_type") == "markdown":
            line = src_text(c.get("source")).strip().splitlines()[:1]
            return line[0].lstrip("#").strip() if line and line[0].startswith("# ") else None
    return None
