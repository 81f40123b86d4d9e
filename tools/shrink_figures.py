#!/usr/bin/env python
"""Re-encode the PNG figures stored in notebook outputs as palette PNGs (at most 256 colours), keeping each one
only where it is smaller, and drop the plain-text stand-in of an output that has a picture or Markdown (`<Figure
size ...>`, a `show_doc` signature printed twice): Jupyter and the site show the richer one. Line plots and image grids
lose nothing visible; the notebooks stay light.

    python -m tools.shrink_figures nbs/02_image_inpainting.ipynb ...   (default: every notebook in nbs/)
"""
from __future__ import annotations

import base64
import io
import json
import sys
from pathlib import Path

from PIL import Image


def shrink_png(b64: str) -> str:
    "The same picture as a palette PNG when that is smaller, else the original (base64 in, base64 out)"
    raw = base64.b64decode(b64)
    im = Image.open(io.BytesIO(raw))
    rgb = im.convert("RGBA" if "A" in im.mode else "RGB")
    q = rgb.quantize(256, method=Image.Quantize.FASTOCTREE) if rgb.mode == "RGBA" else rgb.quantize(256)
    buf = io.BytesIO(); q.save(buf, "PNG", optimize=True)
    return base64.b64encode(buf.getvalue()).decode() if buf.tell() < len(raw) else b64


def shrink_notebook(path: Path) -> tuple[int, int]:
    "Shrink every PNG output of one notebook and drop plain-text stand-ins, in place; returns (bytes before, bytes after)"
    text = path.read_text(); nb = json.loads(text)
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/plain" in data and any(k.startswith("image/") or k == "text/markdown" for k in data):
                del data["text/plain"]
            if "image/png" in data:
                png = data["image/png"]
                data["image/png"] = shrink_png("".join(png) if isinstance(png, list) else png)
    new = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    path.write_text(new)
    return len(text.encode()), len(new.encode())


def main(argv=None):
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or sorted(Path("nbs").glob("*.ipynb"))
    for p in paths:
        a, b = shrink_notebook(p)
        print(f"{p}: {a / 1e3:.0f} kB -> {b / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
