#!/usr/bin/env python
"""The shipped causal models read with dynamic evaluation, into the shipped table.

    python -m benchmarks.dynamic_evaluation [--models kjv_ar kjv_ar_transformer] [--cost-only]

For each model (`dynamic.dynamic_quality`): the step and the pull of dynamic evaluation chosen on the validation books
(every pair of `dynamic.DYNAMIC_GRID`, each book read from the trained weights), then bits per character on the test
books and the out-of-domain texts, static and dynamic, with the CPU seconds per character of each. Writes the section
`dynamic` of energy_transformer/checkpoints/language_quality.json (other models' entries are kept). With --cost-only,
only the CPU cost per character (`dynamic.scoring_cost`) of the models already there is measured again.
"""
from __future__ import annotations

import argparse
import json
import time

from energy_transformer.checkpoint import checkpoint_dir
from energy_transformer.dynamic import dynamic_quality, gradient_rms, scoring_cost
from energy_transformer.language_training import kjv_alphabet
from energy_transformer.pretrained import load_pretrained
from energy_transformer.text import TEST_BOOKS, CharVocab, kjv_books, kjv_splits


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["kjv_ar", "kjv_ar_transformer"])
    ap.add_argument("--cost-only", action="store_true", help="measure only the CPU cost per character again")
    args = ap.parse_args()
    path = checkpoint_dir() / "language_quality.json"
    start = time.process_time()
    if args.cost_only:
        known = json.loads(path.read_text())["dynamic"]
        ids, first_book = CharVocab(kjv_alphabet()).encode(kjv_splits()["train"]), kjv_books(TEST_BOOKS[:1])[TEST_BOOKS[0]]
        result = {}
        for name in args.models:
            model, r = load_pretrained(name), dict(known[name])
            r["cpu_us_per_char"] = scoring_cost(model, first_book, gradient_rms(model, ids), r["lr"], r["decay"])
            for t in ("test", "gpl3", "literature"): r[t].pop("cpu_us_per_char", None)
            result[name] = r
    else:
        result = dynamic_quality({name: load_pretrained(name) for name in args.models})
    quality = json.loads(path.read_text())
    quality["dynamic"] = {**quality.get("dynamic", {}), **result}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(quality, indent=1) + "\n"); tmp.replace(path)
    for name, r in result.items():
        print(f"{name}: lr {r['lr']:g} decay {r['decay']:g}; " + "; ".join(
            f"{k} {r[k]['static']:.4f} -> {r[k]['dynamic']:.4f}" for k in ("test", "gpl3", "literature"))
              + f"; CPU us per character {r['cpu_us_per_char']}")
    print(f"{time.process_time() - start:,.0f} CPU s")


if __name__ == "__main__":
    main()
