"""What the tasks of `benchmarks.training_methods` share about a run: resuming it from its folder only under the
budget it was planned for (`resumable`), and whether the model it trained is an ET or a transformer (`model_kind`)."""
from __future__ import annotations

import json
from pathlib import Path

import jax

from benchmarks.equal_time import cpu_rate
from energy_transformer.core import EnergyTransformer


def resumable(train, tc, run_dir: Path | None, seconds: float, steps: int | None = None) -> tuple[float | None, dict]:
    """(rate, keywords of the final training call) of a run of `seconds` CPU seconds (or of `steps` steps) saved in
    `run_dir` and resumed from it when started again: the probed rate (none for a run of given steps) and the budget
    are kept in `rate.json`, the run in `run.npz`/`run.json` (None: a run that saves nothing). A run is resumed only
    with the budget its step count was planned for."""
    if run_dir is None: return None, {}
    run_dir.mkdir(parents=True, exist_ok=True)
    rate_file, plan = run_dir / "rate.json", dict(seconds=seconds) if steps is None else dict(steps=steps)
    if rate_file.is_file():
        saved = json.loads(rate_file.read_text())
        was = dict(steps=saved["steps"]) if "steps" in saved else dict(seconds=saved.get("seconds", seconds))
        if was != plan:
            (k, v), = was.items()
            raise SystemExit(f"{run_dir} holds a run planned for {v:g} {'CPU seconds' if k == 'seconds' else k}; resume "
                             f"it with --{k} {v:g}, or give another --run-dir")
        rate = saved.get("steps_per_cpu_s")
    else:
        rate = cpu_rate(train, tc) if steps is None else None
        rate_file.write_text(json.dumps(dict(steps_per_cpu_s=rate, **plan)))
    return rate, dict(out=run_dir, name="run", resume=True)


def model_kind(model) -> str:
    "`ET` if the model holds an Energy Transformer block (its descent is the token mixer), else `transformer`"
    is_et = lambda m: isinstance(m, EnergyTransformer)
    return "ET" if any(map(is_et, jax.tree_util.tree_leaves(model, is_leaf=is_et))) else "transformer"
