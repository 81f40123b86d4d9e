"""Training for a CPU-time budget: the shared recipe of the equal-time comparisons (jfb_quality, time_to_quality)."""
from __future__ import annotations

from dataclasses import replace

from energy_transformer.image_training import train_inpainting


def train_for_seconds(make_model, task, tc, seconds: float, **kw):
    """Measure a model's training throughput on 40 steps, then train a fresh one with a full schedule of as many
    steps as fit in `seconds`. Returns (model, log, steps_per_s); `kw` goes to `train_inpainting`."""
    probe = replace(tc, steps=1000, eval_every=1000, log_every=10)  # stopped at step 40: no evaluation
    _, log = train_inpainting(make_model(), task, probe, progress=False, stop_at=40, **kw)
    rate = log["history"][-1]["steps_per_s"]  # the last entry: compilation is behind it
    steps = max(16, int(seconds * rate))
    tc = replace(tc, steps=steps, eval_every=max(1, steps // 8), log_every=max(1, steps // 40))
    model, log = train_inpainting(make_model(), task, tc, progress=False, **kw)
    return model, log, rate
