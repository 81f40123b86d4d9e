"""Training for a CPU-time budget: the shared recipe of the equal-time comparisons (training_methods, jfb_quality,
image_recipe, circulant)."""
from __future__ import annotations

import datetime as _dt
import os
import platform
from dataclasses import replace
from pathlib import Path

import jax


def cpu_rate(train, tc) -> float:
    """Steps per CPU second of `train(tc, stop_at=None) -> (model, log)` (a fresh model trained with the package's
    `fit`), from the CPU seconds `fit` logs between steps 10 and 40 of a probe run (compilation is before step 10)."""
    _, log = train(replace(tc, steps=1000, eval_every=1000, log_every=10), stop_at=40)  # stopped at step 40: no evaluation
    h = {e["step"]: e["cpu_s"] for e in log["history"]}
    return 30 / max(h[40] - h[10], 1e-9)


def train_for_seconds(train, tc, seconds: float, rate: float | None = None):
    """Train a fresh model with a full learning-rate schedule of as many steps as fit in `seconds` of CPU time (all
    threads of this process, as `time.process_time` counts them), evaluated at eight points. The throughput is
    measured by `cpu_rate` unless given. Returns (model, log, steps per CPU second)."""
    rate = cpu_rate(train, tc) if rate is None else rate
    steps = max(16, int(seconds * rate))
    model, log = train(replace(tc, steps=steps, eval_every=max(1, steps // 8), log_every=max(1, steps // 40)))
    return model, log, rate


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
