"""How the benchmarks time and size compiled programs, and stamp each section with the machine it ran on."""
from __future__ import annotations

import math
import statistics
import time

import jax

from benchmarks.equal_time import load, machine

STAMP = ("date", "cpu", "cores", "cores_used", "load_start", "load_end")


def stamped(fn, *args, **kw) -> dict:
    """`fn(*args, **kw)` (a dict) with the machine it ran on: date, CPU, cores of the machine and cores this process
    may use, load average at the start and at the end (`equal_time.machine`)."""
    m = machine()
    out = fn(*args, **kw)
    out["machine"] = {k: m[k] for k in STAMP if k in m} | dict(load_end=load())
    return out


MIN_TIME = [0.05]  # seconds per timed repeat (smaller with --quick)


def timeit(fn, *args, repeats: int = 5, min_time: float | None = None) -> dict:
    """Median seconds per call of a compiled `fn(*args)`: one warm-up call, then `repeats` timed repeats of
    `inner` calls each, `inner` chosen so that a repeat lasts at least `min_time` (short calls are noisy)."""
    min_time = MIN_TIME[0] if min_time is None else min(min_time, 4 * MIN_TIME[0])
    jax.block_until_ready(fn(*args))  # warm-up (and compilation, when `fn` is not compiled yet)
    t0 = time.perf_counter(); jax.block_until_ready(fn(*args)); t1 = time.perf_counter() - t0
    inner = max(1, int(math.ceil(min_time / max(t1, 1e-9))))
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner): r = fn(*args)
        jax.block_until_ready(r)
        ts.append((time.perf_counter() - t0) / inner)
    return dict(median_s=statistics.median(ts), min_s=min(ts), max_s=max(ts), repeats=repeats, inner=inner)


def timeit_interleaved(programs: dict, repeats: int, min_time: float) -> dict:
    """Best (shortest) seconds per call of each compiled `fn(*args)` in `programs` ({name: (fn, args)}), their repeats
    taken in turn (a, b, c, a, b, c, ...) so that a change of load on a shared machine touches them all alike: for
    differences of times. Each: one warm-up call, `inner` calls per repeat lasting at least `min_time`."""
    inner = {}
    for name, (fn, args) in programs.items():
        jax.block_until_ready(fn(*args))
        t0 = time.perf_counter(); jax.block_until_ready(fn(*args)); t1 = time.perf_counter() - t0
        inner[name] = max(1, int(math.ceil(min_time / max(t1, 1e-9))))
    best = dict.fromkeys(programs, math.inf)
    for _ in range(repeats):
        for name, (fn, args) in programs.items():
            t0 = time.perf_counter()
            for _ in range(inner[name]): out = fn(*args)
            jax.block_until_ready(out)
            best[name] = min(best[name], (time.perf_counter() - t0) / inner[name])
    return best


def memory(compiled) -> dict:
    "XLA's memory analysis of a compiled program (bytes): temporaries, arguments, outputs and their sum."
    c = getattr(compiled, "compiled", compiled)  # eqx.filter_jit wraps the jax Compiled object
    m = c.memory_analysis()
    out = dict(temp_bytes=int(m.temp_size_in_bytes), argument_bytes=int(m.argument_size_in_bytes),
               output_bytes=int(m.output_size_in_bytes), alias_bytes=int(m.alias_size_in_bytes))
    out["peak_bytes"] = out["temp_bytes"] + out["argument_bytes"] + out["output_bytes"] - out["alias_bytes"]
    return out


def compile_jit(f, *args):
    "`jax.jit(f)` lowered and compiled for `args`, with the compile time."
    t0 = time.perf_counter()
    c = jax.jit(f).lower(*args).compile()
    return c, time.perf_counter() - t0
