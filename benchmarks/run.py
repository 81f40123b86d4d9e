#!/usr/bin/env python
"""Headline benchmarks of `energy_transformer`, in one process: medians of several timed repeats after a warm-up.

    python -m benchmarks.run                     # full settings; writes benchmarks/results/bench.{json,md}
    python -m benchmarks.run --quick --out DIR   # tiny settings (seconds): checks that everything runs
    python -m benchmarks.run --only descent ...  # measure some sections again; they replace theirs in bench.json
    python -m benchmarks.run --recompute-quality # re-evaluate the shipped checkpoints instead of reading their logs

Sections: (1) float32 matmul roof (best of repeats over square products and the products the model runs),
(2) ET descent step (analytic FLOPs, fraction of the roof, closed form vs autograd), (3) training step (naive
autograd-of-autograd vs closed form + remat: time and memory, memory vs T), and every candidate for a faster training
gradient, read from the file `benchmarks/variants.py` writes (`make bench` runs it first), (4) where the time of the
shipped image recipe's training step goes, (5) softmax vs taylor attention per descent step, (6) batched dense
exponential recall, (7) inpainting quality at 50% masking, (8) cached vs recomputed text generation, (9) the causal ET
against its context length, softmax vs taylor (training step, memory, cached generation), (10) time to quality and
training methods against CPU seconds, read from the files `benchmarks/training_methods.py` writes.
Every section records the machine it ran on (CPU, cores, load average before and after, date): machines are shared
and noisy, ratios measured side by side are more telling than absolutes. Sections read from files carry those
files' own stamps; a file without one is left out.

Each section is measured in its own file next to this one (`descent.py`: roof, descent step, attention kinds;
`training_step.py`; `recall_generation.py`: dense recall, generation; `context.py`; `inpainting_quality.py`;
`time_to_quality.py`),
rendered by `report.py`; this module runs them and merges their results.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from benchmarks.context import bench_context
from benchmarks.descent import bench_attention, bench_descent, bench_roof
from benchmarks.equal_time import load, machine
from benchmarks.inpainting_quality import bench_quality
from benchmarks.recall_generation import bench_dense, bench_generation
from benchmarks.report import GOALS, _mib, markdown
from benchmarks.stamps import SECTIONS, merge
from benchmarks.time_to_quality import bench_time_to_quality, bench_training_methods
from benchmarks.timing import MIN_TIME, stamped
from benchmarks.training_step import bench_training, bench_training_candidates, bench_training_profile

ROOT = Path(__file__).resolve().parents[1]

FULL = dict(
    roof_sizes=(256, 512, 1024, 2048, 4096), roof_repeats=7,
    descent=(("medium", 64, 65), ("full", 8, 197)), descent_T=12, repeats=5,
    train_image="fashion_mnist", train_batch=64, train_T=12, train_Ts=(12, 24, 48), train_repeats=5, train_all=True,
    attn_Ns=(256, 1024, 4096), attn_T=3, attn_repeats=5,
    dense=dict(B=100, K=1024, D=1024, sweeps=2, beta=0.05, flip=0.2), dense_repeats=5,
    quality_n=None,  # recompute on as many test images as the shipped log's final evaluation
    profile_preset="fashion_mnist", profile_repeats=9, profile_min_time=0.2,
    context_Ns=(256, 1024, 4096), context_chars=4096, context_new=64, context_repeats=3, quick=False,
)
QUICK = dict(
    roof_sizes=(256,), roof_repeats=3,
    descent=(("small", 4, 17),), descent_T=2, repeats=3,
    train_image="tiny", train_batch=4, train_T=2, train_Ts=(2, 3), train_repeats=2, train_all=False,
    attn_Ns=(64, 128), attn_T=1, attn_repeats=2,
    dense=dict(B=8, K=64, D=64, sweeps=1, beta=0.2, flip=0.1), dense_repeats=2,
    quality_n=32,
    profile_preset="tiny", profile_repeats=3, profile_min_time=0.03,
    context_Ns=(16, 32), context_chars=32, context_new=4, context_repeats=1, quick=True,
)
TTQ_DIR = ROOT / "benchmarks" / "results" / "ttq"


def _finite(x, path="") -> list[str]:
    "Paths of non-finite floats in a nested structure."
    if isinstance(x, float): return [] if math.isfinite(x) else [path]
    if isinstance(x, dict): return [p for k, v in x.items() for p in _finite(v, f"{path}.{k}")]
    if isinstance(x, (list, tuple)): return [p for i, v in enumerate(x) for p in _finite(v, f"{path}[{i}]")]
    return []


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny settings (checks the script end to end in seconds)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), help="folder for bench.json and bench.md")
    p.add_argument("--recompute-quality", action="store_true", help="re-evaluate the shipped checkpoints")
    p.add_argument("--only", nargs="*", choices=SECTIONS,
                   help="run only these sections; they replace theirs in an earlier run's bench.json in --out")
    a = p.parse_args(argv)
    s = QUICK if a.quick else FULL
    if a.quick: MIN_TIME[0] = 0.005
    only = set(a.only or SECTIONS)
    r = dict(quick=a.quick, settings={k: v for k, v in s.items()}, goals=GOALS, machine=machine())
    t_start = time.perf_counter()
    log = lambda msg: print(f"[{time.perf_counter() - t_start:7.1f} s, load {load():5.2f}] {msg}", flush=True)
    if "roof" in only or "descent" in only:
        log("roof"); r["roof"] = stamped(bench_roof, s)
        for x in r["roof"]["sizes"]: log(f"  {x['product']:58s} {x['gflops']:7.1f} GFLOP/s (median {x['gflops_median']:.1f})")
    if "descent" in only:
        log("descent"); r["descent"] = stamped(bench_descent, s, r["roof"]["roof_gflops"])
        for d in r["descent"]["rows"]:
            log(f"  {d['preset']}: {d['closed_form']['gflops']:.0f} GFLOP/s ({d['roof_fraction']:.0%}), "
                f"autograd {d['autograd_over_closed_form']:.2f}x")
        for k, v in r["descent"]["breakdown"].items():
            if isinstance(v, dict) and "s" in v: log(f"    {k:16s} {v['s'] * 1e3:8.3f} ms {v['gflops']:7.1f} GFLOP/s")
    if "training" in only:
        log("training"); r["training"] = stamped(bench_training, s)
        t = r["training"]
        log(f"  speedup {t['speedup']:.2f}x, memory {t['temp_memory_ratio']:.1f}x, flat {t['project_flatness']:.2f}x")
    if "training_profile" in only:
        log("training profile"); r["training_profile"] = stamped(bench_training_profile, s)
        p_ = r["training_profile"]
        log(f"  step {p_['step_s'] * 1e3:.1f} ms: " + ", ".join(f"{k} {v['s'] * 1e3:.2f} ms ({v['share']:.0%})"
                                                             for k, v in p_["parts"].items()))
        log("  per descent step: " + ", ".join(f"{k} {v['share']:.0%}" for k, v in p_["per_step"].items()))
    if "training_candidates" in only:
        c = bench_training_candidates(ROOT / "benchmarks" / "results")
        if c: r["training_candidates"] = c
        else: log("variants.json missing or without a machine stamp: training_candidates left out")
    if "attention" in only:
        log("attention"); r["attention"] = stamped(bench_attention, s)
        for a_ in r["attention"]["rows"]: log(f"  N = {a_['N']}: taylor {a_['taylor_speedup']:.2f}x")
    if "dense" in only:
        log("dense"); r["dense"] = stamped(bench_dense, s)
        log(f"  {r['dense']['time_s'] * 1e3:.0f} ms, peak {_mib(r['dense']['peak_bytes'])}")
    if "quality" in only:
        log("quality"); r["quality"] = stamped(bench_quality, s, a.recompute_quality, a.quick)
    if "generation" in only:
        log("generation"); r["generation"] = stamped(bench_generation, a.quick)
        log(f"  cached / recomputed: {r['generation']['speedup']:.1f}x")
    if "context" in only:
        log("context"); r["context"] = stamped(bench_context, s)
        for x in r["context"]["rows"]:
            log(f"  N = {x['N']}: taylor step {x['taylor_step_speedup']:.2f}x, generation {x['taylor_generation_speedup']:.2f}x")
    if "time_to_quality" in only:
        q = bench_time_to_quality(TTQ_DIR)
        if q: r["time_to_quality"] = q
        log(f"time to quality: {sum(len(t['rows']) for t in q.values())} runs in {TTQ_DIR}")
    if "training_methods" in only:
        tm = bench_training_methods(TTQ_DIR)
        if tm: r["training_methods"] = tm
    r["machine"]["load_end"] = load()
    r["wall_s"] = time.perf_counter() - t_start
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    prev = out / "bench.json"
    if only != set(SECTIONS) and prev.is_file(): r = merge(r, json.loads(prev.read_text()))
    bad = _finite(r)
    if bad: print(f"warning: non-finite values at {bad}", file=sys.stderr)
    (out / "bench.json").write_text(json.dumps(r, indent=1, default=float) + "\n")
    md = markdown(r)
    (out / "bench.md").write_text(md)
    print(md)
    log(f"wrote {out / 'bench.json'} and {out / 'bench.md'}")


if __name__ == "__main__":
    main()
