#!/usr/bin/env python
"""Classification at equal CPU seconds, three seeds: the ET classifier, its parameter-matched transformer (ViT), a
parameter-matched convolutional network and MLP, on Fashion-MNIST.

    python -m benchmarks.classification_seeds [--seconds 600] [--seeds 0 1 2] [--methods ...] [--collect]

Each run is made on one thread of one core, so that CPU seconds count the work of the step and not the spinning of
threads that wait for each other when the machine is busy (two calls side by side, one per core:
`XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" taskset -c 0 python ...`).

Each run is `python -m benchmarks.training_methods --task classification --method M --seconds S --seed K` (the
shipped classifier's recipe: AdamW, peak learning rate 2e-3, warm-up and cosine decay, batch 128, random flips; as many
steps as fit in S CPU seconds; `seed` seeds the initialisation and the data order), written to
results/classification_seeds/; runs already
there are kept. Then (or with --collect only) the section `equal_cpu` of
energy_transformer/checkpoints/classification_quality.json: per method, each seed's steps, CPU seconds, accuracy on the
whole validation split and on the 10,000 test images.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.training_methods import main as run_one
from benchmarks.training_methods import result_path, run_label
from energy_transformer.checkpoint import checkpoint_dir, write_json

OUT = Path(__file__).resolve().parent / "results" / "classification_seeds"
METHODS = ("exact", "T=1", "matched transformer", "cnn", "mlp")
NAMES = {"exact": "Energy Transformer", "T=1": "Energy Transformer, T = 1", "matched transformer": "matched transformer (ViT)",
         "cnn": "CNN", "mlp": "MLP"}


def collect(seconds: float, seeds: list[int]) -> dict:
    "The `equal_cpu` section from the result files of the runs that exist"
    rows = {}
    for m in METHODS:
        runs = [(s, p) for s in seeds if (p := result_path("classification", run_label(m, seed=s), seconds, OUT)).is_file()]
        if not runs: continue
        rs = [json.loads(p.read_text()) for _, p in runs]
        rows[NAMES[m]] = dict(method=m, model=rs[0]["model"], n_params=rs[0]["n_params"], seeds=[s for s, _ in runs],
                              steps=[r["steps"] for r in rs], train_cpu_s=[r["train_cpu_s"] for r in rs],
                              valid=[r["valid_all"] for r in rs], test=[r["test"] for r in rs],
                              load=[[r["machine"]["load_start"], r["machine"]["load_end"]] for r in rs])
    return dict(seconds=seconds, data="fashion_mnist", recipe="the shipped classifier's: AdamW 2e-3, warm-up and cosine "
                "decay, batch 128, random flips; steps: as many as fit in the CPU seconds", rows=rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS, help="the runs to make (all are gathered)")
    ap.add_argument("--collect", action="store_true", help="only gather the runs that exist into the quality file")
    a = ap.parse_args()
    if not a.collect:
        for s in a.seeds:
            for m in a.methods:
                if not result_path("classification", run_label(m, seed=s), a.seconds, OUT).is_file():
                    run_one(["--task", "classification", "--method", m, "--seconds", str(a.seconds), "--seed", str(s),
                             "--out", str(OUT)])
    path = checkpoint_dir() / "classification_quality.json"
    section = collect(a.seconds, a.seeds)
    write_json({**json.loads(path.read_text()), "equal_cpu": section}, path)
    print(json.dumps({k: {x: v[x] for x in ("steps", "valid", "test")} for k, v in section["rows"].items()}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
