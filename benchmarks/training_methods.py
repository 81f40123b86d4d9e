#!/usr/bin/env python
"""Time to quality: held-out quality against CPU seconds of training, for each task, each way of training its ET and
the parameter-matched transformer. One run per call, so that runs can be pinned to cores (`taskset -c 0 ...`):

    python -m benchmarks.training_methods --task image --method exact --seconds 240
    python -m benchmarks.training_methods --list

Every run gets the same CPU time (seconds of `time.process_time`, all threads of the process): its throughput is
probed on a short run, then a fresh model is trained with a full learning-rate schedule of as many steps as fit in
the budget (`equal_time.train_for_seconds`), evaluated at eight points (evaluation time is not counted). A result also
records the kernel's share of those seconds (`train_sys_s`) and the minor page faults (`page_faults`): a large share
means the steps paid for fresh memory, not for arithmetic.
- image: Fashion-MNIST inpainting, the shipped `fashion_mnist` recipe; masked MSE at 50% masking on validation
  images (the last 5,000 training images: 500 during training, 2,000 at the end), and on 2,000 test images once.
- language: the King James Bible, the shipped `kjv_ar` recipe at D = 128 and, for "exact", T = 4 (`LANGUAGE_WIDTH`,
  `LANGUAGE_T`; masked_language: the shipped `kjv_mlm`); bits per character
  (masked: of 15% masked characters) on 60,000 characters of the validation books during training and of the test
  books at the end. `--width` changes the ET's width, `--run-dir` saves the run to ship it and resumes it.
  long_language: the shipped `kjv_taylor` recipe (context 1,024); at the end also the bits per character on all the
  test books, the bits by context depth there and the Taylor heads' half-lives (`long_context`).
- classification: Fashion-MNIST, the shipped classifier's recipe (`--width` changes its D, with M = 4 D); validation
  accuracy on 2,000 validation images during training, on the whole validation split (`valid_all`) and all 10,000
  test images at the end.
Writes results/ttq/<task>__<method>__<seconds>.json with the machine it ran on; `benchmarks/run.py` collects them.
`--steps N` (natural_image, classification, the language tasks) trains exactly N steps instead, whatever they cost, for a
comparison at equal steps: results/equal_steps/<task>__<method>__<N>steps.json, not part of the equal-time tables.

This module is the command and the file it writes; each task's methods and runs are in a module of their own
(`methods_image`, `methods_natural`, `methods_language`, `methods_classification`, sharing `methods_runs`).
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import time
from pathlib import Path

from benchmarks.equal_time import load, machine
from benchmarks.methods_classification import run_classification
from benchmarks.methods_image import image_methods, run_image
from benchmarks.methods_language import WINDOW_HEADS, run_language
from benchmarks.methods_natural import natural_methods, run_natural
from benchmarks.methods_runs import model_kind
from energy_transformer.core import count_params
from energy_transformer.image_training import preset

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "ttq"
EQUAL_STEPS = RESULTS.parent / "equal_steps"  # runs of given steps (`--steps`), outside the equal-time tables

TASKS = {"image": (run_image, lambda: list(image_methods(preset("fashion_mnist")[0]))),
         "language": (run_language, lambda: ["exact", "T=2", "matched transformer"]),
         "masked_language": (functools.partial(run_language, preset="kjv_mlm"), lambda: ["T=2", "matched transformer"]),
         "long_language": (functools.partial(run_language, preset="kjv_taylor"),
                           lambda: ["exact", *WINDOW_HEADS, "matched transformer"]),
         "natural_image": (run_natural, lambda: list(natural_methods(preset("natural")[0]))),
         "classification": (run_classification,
                            lambda: ["exact", "T=2", "T=1", "T=1 two-weight", "matched transformer", "cnn", "mlp"])}


def run_label(method: str, **options) -> str:
    """A run's name in its file and the tables: the method, and the options given that change its training
    (`run_label("warm T=1", lr=0.003, seed=None)` -> `warm T=1 (lr 0.003)`), so that such a run is not filed as the
    method's own. A starting model given as a path is named by its file name."""
    name = lambda v: f"{v:g}" if isinstance(v, float) else Path(str(v)).name
    given = ", ".join(f"{k} {name(v)}" for k, v in options.items() if v is not None)
    return f"{method} ({given})" if given else method

def result_path(task: str, method: str, seconds: float | None, out: Path = RESULTS, width: int | None = None,
                steps: int | None = None) -> Path:
    """results/<task>__<method>[__D<width>]__<seconds>.json, or __<steps>steps.json for a run of given steps; the method
    with spaces as underscores and without the characters a file name cannot hold on every system (`=`, `>`, ...)"""
    budget = f"{steps}steps" if steps else f"{int(seconds)}"
    name = re.sub(r'[=<>:"/\\|?*]', "", method.replace(" ", "_"))
    return out / f"{task}__{name}{f'__D{width}' if width else ''}__{budget}.json"


TASK_OPTIONS = {"language": {"width", "run_dir", "evals", "init", "lr", "seed", "steps"},
                "natural_image": {"run_dir", "evals", "lr", "seed", "steps", "weight_decay"},
                "classification": {"width", "run_dir", "evals", "steps", "smoothing", "shift", "stem", "patch", "seed"}}


def parser() -> argparse.ArgumentParser:
    "The command line: a task, a method and its options"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=sorted(TASKS))
    ap.add_argument("--method", help="see --list")
    ap.add_argument("--seconds", type=float, default=240, help="CPU seconds of training")
    ap.add_argument("--out", help="folder of the result file (default results/ttq/, results/equal_steps/ with --steps)")
    ap.add_argument("--list", action="store_true", help="print the methods of each task")
    ap.add_argument("--width", type=int, help="language: the ET's width D (H = D / 32, M = 4 D); classification: D (M = 4 D)")
    ap.add_argument("--run-dir", type=Path, help="language, natural_image, classification: save the run there, resume it "
                                                 "when started again")
    ap.add_argument("--evals", type=int, default=8, help="language, natural_image, classification: evaluations during training")
    ap.add_argument("--init", help="language only: continue this shipped model or checkpoint under a new schedule")
    ap.add_argument("--lr", type=float, help="language, natural_image: peak learning rate (default: the recipe's)")
    ap.add_argument("--seed", type=int, help="language, natural_image, classification: seed of the data order "
                                                "(natural_image, classification: and of the initialisation)")
    ap.add_argument("--weight-decay", type=float, help="natural_image only: AdamW's weight decay (default: the recipe's)")
    ap.add_argument("--smoothing", type=float, help="classification only: label smoothing of the loss (fit_classifier)")
    ap.add_argument("--shift", type=int, help="classification only: random translations of up to this many pixels")
    ap.add_argument("--stem", type=int, help="classification only: feature maps of the stem (0: none; default the recipe's 8)")
    ap.add_argument("--patch", type=int, help="classification only: patch side in pixels (default the recipe's 7)")
    ap.add_argument("--steps", type=int, help="natural_image, classification, language tasks: train exactly this many steps, "
                                              "not as many as fit in --seconds (an equal-steps comparison; written to "
                                              "results/equal_steps/)")
    return ap


def main(argv=None):
    ap = parser()
    a = ap.parse_args(argv)
    if a.list:
        for t, (_, names) in TASKS.items(): print(t, ":", ", ".join(names()))
        return
    run, names = TASKS[a.task]
    if a.steps is not None and a.steps < 1: ap.error(f"--steps must be at least 1, got {a.steps}")
    if a.method not in names(): ap.error(f"unknown method {a.method!r} for {a.task}; choose from {names()}")
    stamp, t0 = machine(), time.time()
    opts = TASK_OPTIONS.get("language" if a.task.endswith("language") else a.task, set())
    if wrong := sorted(k for k in set().union(*TASK_OPTIONS.values()) - opts if getattr(a, k) != ap.get_default(k)):
        ap.error(f"--task {a.task} has no option {', '.join('--' + k.replace('_', '-') for k in wrong)}")
    r = run(a.method, a.seconds, **{k: getattr(a, k) for k in opts})
    model, log = r.pop("model"), r.pop("log")
    named = ("lr", "seed", "weight_decay", "init", "smoothing", "shift", "stem", "patch")  # the options that name a run
    label = run_label(a.method, **{k: getattr(a, k) for k in named if k in opts})
    seconds = None if a.steps else a.seconds   # a run of given steps has no CPU budget
    row = dict(task=a.task, method=label, kind=model_kind(model), start=getattr(model.config, "start", None),
               seconds=seconds, model=type(model).__name__, n_params=count_params(model),
               steps=log["train_config"]["steps"], train_cpu_s=round(log["train_cpu_s"], 1),
               train_sys_s=round(log["train_sys_s"], 1), page_faults=log["page_faults"],  # of train_cpu_s: the kernel's
               train_wall_s=round(log["train_time_s"], 1), **r,
               machine=dict(stamp, load_end=load(), run_wall_s=round(time.time() - t0, 1)))
    out = Path(a.out) if a.out else EQUAL_STEPS if a.steps else RESULTS
    path = result_path(a.task, label, seconds, out, a.width, a.steps)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(row, indent=1) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k not in ("curve", "machine")}), flush=True)


if __name__ == "__main__":
    main()
