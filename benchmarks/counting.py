#!/usr/bin/env python
"""The counting baselines of the language models, each chosen on the validation books, into the shipped table.

    python -m benchmarks.counting

Fits unigram, Kneser-Ney (order 5, and at its validation-chosen order and discount, next character and the two-sided
fill), PPMd, xz and zstd (each at its validation-chosen setting) to the training books of the King James Bible, scores
the test books and the out-of-domain texts (`counting.counting_baselines`), and writes them into
energy_transformer/checkpoints/language_quality.json in place of the counting rows there, with the validation scores
of every setting tried (`counting_tuning`); the trained models' rows are kept as they are.
"""
from __future__ import annotations

import json
import time

from energy_transformer.checkpoint import checkpoint_dir
from energy_transformer.counting import counting_baselines
from energy_transformer.language_training import OUT_OF_DOMAIN, kjv_alphabet, out_of_domain_text
from energy_transformer.text import kjv_splits

COUNTING = ("UnigramLM", "KneserNeyLM")  # the classes of the counting rows (and every adaptive coder's row)


def main():
    path = checkpoint_dir() / "language_quality.json"
    quality = json.loads(path.read_text())
    chars, start = kjv_alphabet(), time.process_time()
    base = counting_baselines(kjv_splits(), {k: out_of_domain_text(k, chars) for k in OUT_OF_DOMAIN}, chars)
    models = [r for r in quality["rows"] if r["cls"] not in COUNTING and not r.get("adaptive")]
    quality.update(rows=base["rows"] + models, curve_baselines=base["curve"], counting_tuning=base["tuning"])
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(quality, indent=1) + "\n"); tmp.replace(path)
    for r in base["rows"]:
        print(f"{r['model']:16s} {r.get('setting', '')!s:42s} test {r['bpc']:.4f}  " + "  ".join(
            f"{k} {v:.4f}" for k, v in r["out_of_domain"].items()))
    print(f"{time.process_time() - start:,.0f} CPU s")


if __name__ == "__main__":
    main()
