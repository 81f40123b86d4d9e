"""Training for a CPU-time budget: the shared recipe of the equal-time comparisons (training_methods, image_recipe,
circulant)."""
from __future__ import annotations

import datetime as _dt
import os
import platform
from dataclasses import replace
from pathlib import Path

import jax


def cpu_rate(train, tc, seconds: float = 10.0) -> float:
    """Steps per CPU second of `train(tc, stop_at=None) -> (model, log)` (a fresh model trained with the package's
    `fit`), from the CPU seconds `fit` logs. A first probe of 40 steps gives a rough rate; where steps are fast, a
    second probe runs about `seconds` of them, synchronising as rarely as a real run (every 1/10 of the probe), so that
    the per-step cost of the rough probe's frequent synchronisation does not count. Compilation is before the first
    logged step of each probe and does not count."""
    def probe(n, every):
        _, log = train(replace(tc, steps=max(1000, n), eval_every=max(1000, n), log_every=every), stop_at=n)  # no evaluation
        h = log["history"]
        return (h[-1]["step"] - h[0]["step"]) / max(h[-1]["cpu_s"] - h[0]["cpu_s"], 1e-9)
    rate = probe(40, 10)
    if rate * seconds < 80: return rate  # slow steps: synchronising every 10 of them costs nothing that matters
    n = int(min(rate * seconds, 4000))
    return probe(n, max(10, n // 10))


def train_for_seconds(train, tc, seconds: float, rate: float | None = None, evals: int = 8, steps: int | None = None,
                      **final):
    """Train a fresh model with a full learning-rate schedule of as many steps as fit in `seconds` of CPU time (all
    threads of this process, as `time.process_time` counts them), evaluated at `evals` points. The throughput is
    measured by `cpu_rate` unless given. `steps` given: exactly that many steps instead, whatever they cost (an
    equal-steps comparison; no throughput probe). `final` goes to the training call only, not to the probes (for
    example `out=..., resume=True`: a run that saves and resumes). Returns (model, log, steps per CPU second; for a
    run of given `steps`, as its training measured it)."""
    if steps is None:
        rate = cpu_rate(train, tc) if rate is None else rate
        steps = max(16, int(seconds * rate))
    model, log = train(replace(tc, steps=steps, eval_every=max(1, steps // evals), log_every=max(1, steps // 40)), **final)
    return model, log, rate or steps / log["train_cpu_s"]


def load() -> float:
    "1-minute load average of the machine."
    return round(os.getloadavg()[0], 2)


def machine() -> dict:
    "Where a measurement was made: date, CPU model, cores of the machine and cores this process may use, versions, load."
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"): cpu = line.split(":", 1)[1].strip(); break
    except OSError: pass
    return dict(date=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), cpu=cpu, cores=os.cpu_count(),
                cores_used=len(os.sched_getaffinity(0)), platform=f"{platform.system()} {platform.machine()}",
                python=platform.python_version(), jax=jax.__version__, devices=[str(d) for d in jax.devices()],
                load_start=load())
