#!/usr/bin/env python
"""Held-out bits per character against CPU minutes on Debian's licence texts: the text presets and their neighbours.

    python -m benchmarks.own_text [--minutes 20] [--candidates small,small_d96,...] [--quick]

The text is every file of /usr/share/common-licenses (symbolic links read once), split as `et-train --text` splits
it: the last 10% of each file held out. Each candidate is the small preset (`own_text.text_preset`) with one setting
changed; it trains with `fit_language_model` for as many steps as `--minutes` CPU minutes allow at its rate measured
over steps 10 to 40 of a probe (compilation not counted), evaluated 20 times on the held-out tails, beside the tuned
Kneser-Ney on the same characters (`own_text.kneser_ney_line`). The curve of each (bpc against CPU minutes, from
the log's `cpu_s`) is the basis for choosing the preset: the fastest drop in the first 20 CPU minutes. --quick: 20
steps of the small preset.

Writes results/own_text.json (own_text_5min.json with --minutes 5, own_text_quick.json with --quick).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from energy_transformer.language_training import fit_language_model
from energy_transformer.own_text import kneser_ney_line, read_text_file, split_text, text_preset
from energy_transformer.text import CharVocab

ROOT = Path(__file__).resolve().parents[1]

LICENCES = Path("/usr/share/common-licenses")
CANDIDATES = {  # name -> (model changes, training changes) to the small preset
    "small": ({}, {}),
    "small_d96": (dict(D=96, Y=24, M=384), {}),
    "small_d192": (dict(D=192, H=6, M=768), {}),
    "small_n64": (dict(N=64), {}),
    "small_t1": (dict(T=1), {}),
    "small_lr3e-3": ({}, dict(lr=3e-3)),
    "small_batch32": ({}, dict(batch_size=32)),
}


def candidate(name: str, chars: str):
    "The small preset with one candidate's changes"
    cls, mc, tc, n_valid = text_preset("small", chars)
    model_kw, train_kw = CANDIDATES[name]
    et_kw = {k: v for k, v in model_kw.items() if k in ("D", "H", "Y", "M")}
    if "N" in model_kw: mc, et_kw = replace(mc, N=model_kw["N"]), {**et_kw, "rel_pos": model_kw["N"] - 1}
    if "T" in model_kw: mc = replace(mc, T=model_kw["T"])
    return cls, replace(mc, et=replace(mc.et, **et_kw)), replace(tc, **train_kw), n_valid


def run(name: str, splits: dict, chars: str, minutes: float, quick: bool) -> dict:
    cls, mc, tc, n_valid = candidate(name, chars)
    _, probe = fit_language_model(cls, mc, replace(tc, steps=40, eval_every=10**6, log_every=10), texts=splits,
                                  progress=False)
    h = probe["history"]  # steps per CPU second between the first and the last log, compilation not counted
    rate = (h[-1]["step"] - h[0]["step"]) / (h[-1]["cpu_s"] - h[0]["cpu_s"])
    steps = 20 if quick else max(20, int(minutes * 60 * rate))
    tc = replace(tc, steps=steps, eval_every=max(1, steps // 20), log_every=max(1, steps // 100))
    _, log = fit_language_model(cls, mc, tc, texts=splits, valid_chars=n_valid, progress=False)
    return dict(name=name, steps=steps, batch_size=tc.batch_size, N=mc.N, D=mc.et.D, T=mc.T, lr=tc.lr,
                n_params=log["n_params"], curve=[dict(cpu_min=round(e["cpu_s"] / 60, 3), step=e["step"],
                                                      bpc=round(e["bpc"], 4)) for e in log["evals"]])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=20.0, help="CPU minutes of training per candidate")
    ap.add_argument("--candidates", default=",".join(CANDIDATES), help=f"comma-separated, of {', '.join(CANDIDATES)}")
    ap.add_argument("--quick", action="store_true", help="20 steps of the small preset (a check that it runs)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    names = ["small"] if a.quick else a.candidates.split(",")
    if unknown := sorted(set(names) - set(CANDIDATES)): sys.exit(f"own_text.py: unknown candidates {unknown}")
    files = sorted({p.resolve() for p in LICENCES.iterdir() if p.is_file()})
    if not files: sys.exit(f"own_text.py: no licence texts in {LICENCES} (Debian's base-files)")
    splits = split_text([read_text_file(f) for f in files])
    chars = CharVocab.from_text(splits["train"] + splits["valid"]).chars
    line = kneser_ney_line(splits, text_preset("small", chars)[1], text_preset("small", chars)[3])
    print(f"{len(files)} files, {len(splits['train']):,} + {len(splits['valid']):,} characters; tuned Kneser-Ney "
          f"{line['bpc']:.4f} bpc (order {line['order']}, {line['discount']})", flush=True)
    rows = []
    for name in names:
        rows.append(run(name, splits, chars, a.minutes, a.quick))
        last = rows[-1]["curve"][-1]
        print(f"{name}: {rows[-1]['steps']:,} steps, {last['cpu_min']:.1f} CPU min, held-out bpc {last['bpc']:.4f}", flush=True)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    result = dict(files=[str(f) for f in files], chars=dict(train=len(splits["train"]), valid=len(splits["valid"])),
                  kneser_ney=line, minutes=a.minutes, rows=rows)
    name = "own_text_quick" if a.quick else "own_text" if a.minutes == 20 else f"own_text_{a.minutes:g}min"
    (out / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
