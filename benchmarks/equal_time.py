"""Training for a CPU-time budget: the shared recipe of the equal-time comparisons (jfb_quality, time_to_quality)."""
from __future__ import annotations

from dataclasses import replace


def train_for_seconds(train, tc, seconds: float):
    """`train(tc, stop_at=None) -> (model, log)` trains a fresh model with the package's `fit`. Measure its throughput
    on 40 steps, then train a fresh one with a full schedule of as many steps as fit in `seconds`, evaluated at eight
    points. Returns (model, log, steps_per_s)."""
    probe = replace(tc, steps=1000, eval_every=1000, log_every=10)  # stopped at step 40: no evaluation
    _, log = train(probe, stop_at=40)
    rate = log["history"][-1]["steps_per_s"]  # the last entry: compilation is behind it
    steps = max(16, int(seconds * rate))
    model, log = train(replace(tc, steps=steps, eval_every=max(1, steps // 8), log_every=max(1, steps // 40)))
    return model, log, rate
