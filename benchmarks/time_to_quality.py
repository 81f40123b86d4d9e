"""Sections 9 and 10 of `run.py`: held-out quality after equal CPU time, read from the files `benchmarks/training_methods.py`
writes (`results/ttq/<task>__<method>[__D<width>]__<seconds>.json`, one run each with its machine stamp), and their
summary per task and budget (the best ET way of training against the matched transformer)."""
from __future__ import annotations

import json
import re
from pathlib import Path

TTQ_KEYS = ("method", "kind", "start", "seconds", "description", "n_params", "steps", "steps_per_cpu_s", "train_cpu_s",
            "valid", "test", "curve", "machine")
KINDS = ("ET", "transformer")  # a run file's `kind`: its model holds an Energy Transformer block, or is a transformer baseline


def run_width(f: Path) -> int | None:
    "The model width D in a run file's name (`language__T2__D192__5400.json` -> 192), None for the recipe's own width."
    parts = Path(f).stem.split("__")
    return int(parts[2][1:]) if len(parts) == 4 and re.fullmatch(r"D\d+", parts[2]) else None


def method_label(method: str, width: int | None) -> str:
    "A method's name in the tables: a run at another width than the recipe's is another method (`T=2 (D = 192)`)."
    return f"{method} (D = {width})" if width else method


def read_runs(folder: Path, keys: tuple = TTQ_KEYS) -> list[dict]:
    """Every stamped run file of `folder` (files without a machine stamp are left out): its `task`, `metric`,
    `lower_is_better` and `keys`, the method named with its width when the file name gives one, and its source.
    A stamped file whose `kind` is not one of `KINDS` is an error."""
    out = []
    for f in sorted(Path(folder).glob("*.json")):
        r = json.loads(f.read_text())
        if "machine" not in r: continue
        if r.get("kind") not in KINDS: raise ValueError(f"{f}: 'kind' is {r.get('kind')!r}, not one of {KINDS}")
        w = run_width(f)
        out.append({k: r.get(k) for k in ("task", "metric", "lower_is_better", *keys)}
                   | dict(method=method_label(r["method"], w), source=f"benchmarks/results/{Path(folder).name}/{f.name}")
                   | (dict(width=w) if w else {}))
    return out


class RunsByMethod(dict):
    """Run rows of one task by method, for the pages: a method with no run is a one-line error that names it and the
    `python -m benchmarks.training_methods` command that makes it (`how`: the budget options, e.g. "--seconds 900")"""
    def __init__(self, rows: list[dict], task: str, how: str):
        super().__init__((r["method"], r) for r in rows)
        self.task, self.how = task, how

    @classmethod
    def at(cls, rows: list[dict], task: str, seconds: float) -> "RunsByMethod":
        "The runs among `rows` trained for `seconds` CPU seconds, by method"
        return cls([r for r in rows if r["seconds"] == seconds], task, f"--seconds {seconds:g}")

    @classmethod
    def after_steps(cls, rows: list[dict], task: str, steps: int) -> "RunsByMethod":
        "The runs among `rows` trained for exactly `steps` optimizer steps (`--steps`), by method"
        return cls([r for r in rows if r["seconds"] is None and r["steps"] == steps], task, f"--steps {steps}")

    def __missing__(self, label):
        raise FileNotFoundError(f"no {self.task} run {label!r} among the benchmark results; make it with python -m "
                                f"benchmarks.training_methods --task {self.task} {label_options(label)} {self.how}")


def label_options(label: str) -> str:
    """The command-line options that give a run its label, `run_label`'s inverse:
    `warm T=1 (lr 0.003, seed 1)` -> `--method 'warm T=1' --lr 0.003 --seed 1`"""
    m = re.fullmatch(r"(.+) \(((?:[a-z_]+ [^,()]+)(?:, [a-z_]+ [^,()]+)*)\)", label)
    if not m: return f"--method {label!r}"
    opts = (o.split(" ", 1) for o in m[2].split(", "))
    return " ".join([f"--method {m[1]!r}", *(f"--{k.replace('_', '-')} {v}" for k, v in opts)])


def bench_time_to_quality(folder: Path) -> dict:
    """Held-out quality after equal CPU time for each task and training method: every file that
    `benchmarks/training_methods.py` wrote to `folder` (one run each, minutes of training, pinned to a core), as
    {task: {metric, lower_is_better, rows}}, rows sorted by budget then method, each with its run's machine stamp.
    Files without a stamp are left out."""
    out = {}
    for r in read_runs(folder):
        t = out.setdefault(r.pop("task"), dict(metric=r.pop("metric"), lower_is_better=r.pop("lower_is_better"), rows=[]))
        t["rows"].append(r)
    for t in out.values(): t["rows"].sort(key=lambda x: (x["seconds"], x["method"]))
    return out


def is_transformer(x: dict) -> bool:
    "Whether a row's model is a transformer baseline (its file's `kind`), not an ET"
    return x["kind"] == "transformer"


def _best(rows: list[dict], lower_is_better: bool) -> dict | None:
    "The ET row (not a transformer baseline) with the best validation value."
    ets = [x for x in rows if not is_transformer(x)]
    if not ets: return None
    return (min if lower_is_better else max)(ets, key=lambda x: x["valid"])


def bench_training_methods(folder: Path) -> dict | None:
    """The ways of training the image ET (and its transformer baselines) at the smallest budget of the files in
    `folder`: quality, steps per CPU second of each phase, the cosine of approximate gradients to the exact one, and
    the best ET method by validation masked MSE."""
    runs = [r for r in read_runs(folder, TTQ_KEYS + ("grad_cosine", "phases", "baselines")) if r["task"] == "image"]
    if not runs: return None
    seconds = min(r["seconds"] for r in runs)
    drop = ("task", "metric", "lower_is_better", "source")
    rows = sorted(({k: v for k, v in r.items() if k not in drop} for r in runs if r["seconds"] == seconds),
                  key=lambda x: x["method"])
    best = _best(rows, runs[0]["lower_is_better"])
    return dict(task="image", metric=runs[0]["metric"], lower_is_better=runs[0]["lower_is_better"], seconds=seconds,
                rows=rows, best=best["method"] if best else None)


METRIC = dict(masked_mse="validation masked MSE", bpc="validation bits per character", accuracy="validation accuracy")


def _value(metric: str, v: float) -> str:
    return f"{v:.1%}" if metric == "accuracy" else f"{v:.3f}" if metric == "bpc" else f"{v:.4f}"


def _compare(metric: str, et: float, tf: float) -> str:
    "ET against the transformer: a ratio of MSEs, a difference of bits per character or of accuracy points."
    if metric == "bpc": return f"{et - tf:+.3f} bits"
    if metric == "accuracy": return f"{(et - tf) * 100:+.1f} points"
    return f"{et / tf:.2f}x"


def _matched(rows: list[dict], best: dict | None, lower_is_better: bool) -> dict | None:
    """The matched transformer the best ET row is compared with: the best transformer baseline whose hidden tokens
    started as the ET's did (`start`: the MASK token or a classical fill, on images) at its width, else at the recipe's
    width"""
    if best is None: return None
    tfs = [x for x in rows if is_transformer(x) and x.get("start") == best.get("start")]
    same = [x for x in tfs if x.get("width") == best.get("width")] or [x for x in tfs if x.get("width") is None]
    return (min if lower_is_better else max)(same, key=lambda x: x["valid"]) if same else None


def ttq_summary(q: dict) -> list[dict]:
    """One entry per budget of a time-to-quality task (`bench.json`'s `time_to_quality[task]`): the budget, the best
    ET row, the matched transformer's row (`_matched`; None if there is none), the comparison, and the machine stamps of
    all its runs."""
    out = []
    for sec in sorted({x["seconds"] for x in q["rows"]}):
        rows = [x for x in q["rows"] if x["seconds"] == sec]
        best = _best(rows, q["lower_is_better"])
        tf = _matched(rows, best, q["lower_is_better"])
        out.append(dict(seconds=sec, best=best, transformer=tf, n_et=sum(not is_transformer(x) for x in rows),
                        compare=_compare(q["metric"], best["valid"], tf["valid"]) if best and tf else None,
                        cores_used=sorted({x["machine"].get("cores_used", x["machine"]["cores"]) for x in rows}),
                        machines=[x["machine"] for x in rows]))
    return out
