"""Sections 6 and 8 of `run.py`: batched recall of a dense exponential memory, and text generation with the descent
cache against recomputation (the library's `generation_speed`)."""
from __future__ import annotations

import jax
import numpy as np

from benchmarks.equal_time import load
from benchmarks.timing import compile_jit, memory, timeit
from energy_transformer.core import ETConfig
from energy_transformer.dense import ExponentialMemory, recall_batch
from energy_transformer.generation import generation_speed, masked_generation_speed
from energy_transformer.language import CausalET, LMConfig
from energy_transformer.patterns import flip_bits, random_patterns
from energy_transformer.pretrained import load_pretrained
from energy_transformer.text import CharVocab


def bench_dense(s: dict) -> dict:
    "Batched asynchronous recall of an exponential dense associative memory: time and XLA memory."
    d = s["dense"]
    Xi = random_patterns(jax.random.PRNGKey(40), d["K"], d["D"])
    mem = ExponentialMemory(Xi, beta=d["beta"])
    cues = flip_bits(jax.random.PRNGKey(41), Xi[:d["B"]], d["flip"])
    f = lambda mem, cues: recall_batch(mem, cues, sweeps=d["sweeps"])[0]
    comp, ct = compile_jit(f, mem, cues)
    t = timeit(comp, mem, cues, repeats=s["dense_repeats"])
    final = np.asarray(comp(mem, cues))
    exact = float(np.mean(np.all(final == np.asarray(Xi[:d["B"]]), axis=1)))
    return dict(**d, compile_s=ct, time_s=t["median_s"], exact_recall=exact, **memory(comp), timing=t, load=load())


def bench_generation(quick: bool) -> dict:
    """Characters per second of the shipped causal ET (`kjv_ar`, context 256) generating up to a full context, with the
    descent cache and by recomputation (`language_training.generation_speed`), and of the masked ET (`kjv_mlm`) writing
    by unmasking; --quick: a small random causal model."""
    if quick:
        c = LMConfig(CharVocab.from_text("abcdefgh ").chars, N=32, et=ETConfig(D=32, H=2, Y=16, M=64, exclude_self=False), T=2)
        return dict(model="random (quick)", **generation_speed(CausalET(c, key=jax.random.PRNGKey(0)), prompt="abc", repeats=1))
    return dict(model="kjv_ar", **generation_speed(load_pretrained("kjv_ar"), repeats=3),
                masked=dict(model="kjv_mlm", **masked_generation_speed(load_pretrained("kjv_mlm"), repeats=3)))
