"""Training with two processes on 127.0.0.1: the same losses as one process over the same global batches, one checkpoint,
resuming in two processes, and a lost process that ends the run with one line instead of a hang."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import equinox as eqx
import jax
import numpy as np

from energy_transformer.distributed import free_port
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.image_training import image_batches, masked_image_loss
from energy_transformer.patches import keep_count, mask_count
from energy_transformer.train import TrainConfig, fit, make_mesh

TC = TrainConfig(steps=24, batch_size=8, lr=3e-3, warmup=0.25, eval_every=1000, log_every=4, seed=3)


class Line(eqx.Module):  # the smallest model `fit` trains: y = w x + b
    w: jax.Array
    b: jax.Array
    config: TrainConfig = eqx.field(static=True)  # any config with to_dict will do


def line_loss(model, batch, key): return ((model.w * batch[:, 0] + model.b - batch[:, 1]) ** 2).mean()


def problem(tc: TrainConfig = TC, image_et: bool = True):
    "(model, loss, batches) of a tiny image ET on fixed random images (else of a line): the same in every process"
    if not image_et:  # the line y = 3 x - 1: the cheapest model to compile
        rng = np.random.default_rng(jax.process_index())
        def batches(start):
            while True:
                x = rng.normal(size=(tc.batch_size // jax.process_count(), 1)).astype(np.float32)
                yield np.hstack([x, 3 * x - 1])
        return Line(np.zeros((), np.float32), np.zeros((), np.float32), tc), line_loss, batches
    mc = ImageETConfig.tiny(T=2)
    images = np.random.default_rng(0).random((64, *mc.image_shape), dtype=np.float32)
    n_chosen = mask_count(mc.N, 0.5)
    model = eqx.filter_jit(lambda k: ImageEnergyTransformer(mc, key=k))(jax.random.PRNGKey(tc.seed))  # one compilation
    return model, masked_image_loss(n_chosen, keep_count(n_chosen, 0.1)), image_batches(images, tc.batch_size, tc.seed)


# one process of a run: joins it, trains with `fit` up to `stop_at` (process 0 writes <out>/m.npz), then, if asked, resumes
# from that file to the end; writes its logs to <out>/../log_<i>_<stop_at>.json and a file `running_<i>` once it trains
PROCESS = """
import json, sys
from pathlib import Path
from dataclasses import replace
from energy_transformer.distributed import exit_now, join_processes
coordinator, pid, out, stop_at, resume = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
join_processes(coordinator, 2, pid, heartbeat_s=20)
from energy_transformer.train import ProcessLost, fit
from test_distributed import TC, problem
tc = TC if stop_at <= TC.steps else replace(TC, steps=stop_at, log_every=1)
model, loss_fn, batches = problem(tc, image_et=stop_at <= TC.steps)
def marked(start):
    for s, b in enumerate(batches(start), start):
        if s == start + 2: (out.parent / f"running_{pid}").touch()
        yield b
try:
    for last in (stop_at, tc.steps) if resume else (stop_at,):
        _, log = fit(model, loss_fn, marked, tc, out=out, name="m", stop_at=last, resume=last != stop_at, progress=False)
        (out.parent / f"log_{pid}_{last}.json").write_text(json.dumps(log))
except ProcessLost as e: print(f"error: {e}", file=sys.stderr); exit_now(1)
"""


def start(tmp_path, flags, stop_at, resume=False):
    "The two processes of a run, started (not waited for)"
    port = free_port()
    env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    return [subprocess.Popen([sys.executable, "-c", PROCESS, f"127.0.0.1:{port}", str(i), str(tmp_path / "out"), str(stop_at),
                              str(int(resume))], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for i in range(2)]


def test_two_processes_train_as_one(tmp_path, one_device_flags):
    procs = start(tmp_path, one_device_flags, stop_at=12, resume=True)
    _, ref = fit(*problem(), TC, progress=False, mesh=make_mesh(jax.devices()[:1]))  # meanwhile: one process, one device
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
    logs = {(i, s): json.loads((tmp_path / f"log_{i}_{s}.json").read_text()) for i in range(2) for s in (12, TC.steps)}
    half, full = logs[0, 12], logs[0, TC.steps]
    assert half["processes"] == 2 and len(half["devices"]) == 2
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["m.json", "m.npz"]  # process 0's checkpoint, no other
    losses = lambda log: [(h["step"], h["loss"]) for h in log["history"]]
    assert losses(logs[1, 12]) == losses(half) and losses(logs[1, TC.steps]) == losses(full)  # the same in both processes
    assert losses(full)[:3] == losses(half)  # resumed from the file: continued, not redone
    assert [s for s, _ in losses(full)] == [h["step"] for h in ref["history"]] == list(range(4, 25, 4))
    np.testing.assert_allclose([v for _, v in losses(full)], [h["loss"] for h in ref["history"]], rtol=2e-5)
    assert json.loads((tmp_path / "out" / "m.json").read_text())["history"] == full["history"]


def test_lost_process_ends_the_run(tmp_path, one_device_flags):
    procs = start(tmp_path, one_device_flags, stop_at=100_000)  # would train for a long time
    t0 = time.monotonic()
    while not all((tmp_path / f"running_{i}").exists() for i in range(2)):
        assert time.monotonic() - t0 < 240 and all(p.poll() is None for p in procs), procs[0].stderr.read()[-3000:]
        time.sleep(0.1)
    procs[1].send_signal(signal.SIGKILL)
    t_kill = time.monotonic()
    _, err = procs[0].communicate(timeout=120)
    waited = time.monotonic() - t_kill
    procs[1].communicate()
    lines = err.strip().splitlines()
    assert procs[0].returncode == 1 and len(lines) == 1, err[-3000:]
    assert lines[0].startswith("error: process 0 of 2: another process stopped or cannot be reached"), lines
    assert waited < 30, waited
