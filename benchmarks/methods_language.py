"""The language tasks of `benchmarks.training_methods` (language, masked_language, long_language): the King James
Bible under a shipped recipe (`kjv_ar`, `kjv_mlm`, `kjv_taylor`), one run of a way of training its ET (exact
gradient, fewer descent steps, window heads) or of a parameter-matched transformer; a long-context run also reports
what its model makes of its context."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from benchmarks.equal_time import train_for_seconds
from benchmarks.methods_runs import model_kind, resumable
from energy_transformer.checkpoint import read_log, resolve_checkpoint
from energy_transformer.language import CausalTransformer, MaskedTransformer
from energy_transformer.language import matched_transformer as matched_lm
from energy_transformer.language_training import context_profile, fit_language_model, kjv_alphabet, lm_evaluator, lm_preset
from energy_transformer.pretrained import load_pretrained
from energy_transformer.text import kjv_splits

# long_language methods: how many softmax heads over the last 64 characters, and a floor on the taylor heads' half-lives
WINDOW_HEADS = {"window heads": (2, 0), "window heads 3": (3, 0), "window heads 3, half-lives >= 64": (3, 64),
                "window heads 3, half-lives >= 256": (3, 256)}


# The causal time-to-quality runs (`--task language`): kjv_ar's recipe at width D = 128 unless `--width` is given, with
# T = 4 descent steps for "exact" and kjv_ar's own T = 2 for "T=2", alpha T kept (alpha 1 and 2)
LANGUAGE_WIDTH, LANGUAGE_T = 128, {"exact": 4, "T=2": 2}


def language_config(method: str, width: int | None = None, preset: str = "kjv_ar"):
    """(model class, model configuration, training configuration) of a language method: the shipped recipe `preset`
    (`kjv_ar` causal, `kjv_mlm` masked), at width D = `width` (H = D / 32 heads of 32, M = 4 D memories) when given;
    the causal recipe at `LANGUAGE_WIDTH` otherwise, with the descent steps of `LANGUAGE_T`; "T=2" halves the descent
    steps of a recipe with T = 4 and doubles alpha (the masked recipe has T = 2 already); "window heads" makes the first
    two heads of a taylor recipe softmax heads over the last 64 characters ("window heads 3": the first three;
    "half-lives >= f": the taylor heads' decays floored); the matched transformer has the ET's parameter count"""
    cls, mc, tc = lm_preset(preset, kjv_alphabet())
    if preset == "kjv_ar": width, T = width or LANGUAGE_WIDTH, LANGUAGE_T.get(method)
    else: T = 2 if method == "T=2" else None
    if width: mc = replace(mc, et=replace(mc.et, D=width, H=width // 32, Y=32, M=4 * width))
    if T is not None and mc.T != T: mc = replace(mc, T=T, alpha=mc.alpha * mc.T / T)
    if method in WINDOW_HEADS:
        w, f = WINDOW_HEADS[method]  # the window of the shipped kjv_window recipe ("window heads 3" is that recipe)
        mc = replace(mc, et=replace(mc.et, window_heads=w, rel_pos=lm_preset("kjv_window", mc.chars)[1].et.rel_pos,
                                    min_half_life=f))
    if method == "matched transformer":
        cls, mc = (CausalTransformer if mc.objective == "ar" else MaskedTransformer), matched_lm(mc, L=1)
    return cls, mc, tc


def run_language(method: str, seconds: float, chars: int = 60_000, width: int | None = None,
                 run_dir: Path | None = None, evals: int = 8, preset: str = "kjv_ar", init: str | None = None,
                 lr: float | None = None, seed: int | None = None, steps: int | None = None) -> dict:
    """One language run (as many steps as fit in `seconds`, or exactly `steps`). With `run_dir`, the run saves its state
    there (`run.npz`, `run.json`) at each evaluation and resumes from it when started again with the same arguments (the
    probed rate is kept in `rate.json`), so the trained model stays there to be shipped (`tools/ship_checkpoint.py`).
    With `init` (a shipped name or a checkpoint of this method's model) the run continues that model under a new
    schedule (peak `lr`, data order `seed`); its log keeps the earlier run's in `meta.previous`."""
    splits = kjv_splits()
    cls, mc, tc = language_config(method, width, preset)
    tc = replace(tc, **{k: v for k, v in dict(lr=lr, seed=seed).items() if v is not None})
    start, meta = None, None
    if init is not None:
        start = load_pretrained(init)
        if type(start) is not cls:
            raise SystemExit(f"--init {init} holds a {type(start).__name__}, not this method's {cls.__name__}")
        previous = {k: v for k, v in read_log(resolve_checkpoint(init)).items() if k != "meta"}
        mc, meta = start.config, dict(previous=previous, init=str(init))
    methods = {"exact": f"ET, T = {mc.T}, exact gradient", "T=2": f"ET, T = 2, alpha {mc.alpha:g}",
               **{m: f"ET, T = {mc.T}, heads 0-{w - 1} softmax over the last 64 characters, the others taylor"
                     + (f" with half-lives >= {f}" if f else "") for m, (w, f) in WINDOW_HEADS.items()},
               "matched transformer": "1 transformer block, the same parameter count"}
    train = lambda tc, **k: fit_language_model(cls, mc, tc, progress=False, valid_chars=chars, test_chars=chars,
                                               init=start, meta=meta, **k)
    rate, final = resumable(train, tc, run_dir, seconds, steps)
    model, log, rate = train_for_seconds(train, tc, seconds, rate, evals=evals, steps=steps, **final)
    return dict(metric="bpc", lower_is_better=True, description=methods[method] + (f", D = {width}" if width else ""),
                steps_per_cpu_s=[round(rate, 3)], log=log, valid=log["evals"][-1]["bpc"],
                test=lm_evaluator(splits["test"], mc, chars)(model)["bpc"],
                curve=[dict(step=e["step"], cpu_s=e["cpu_s"], value=e["bpc"], test=e["test_bpc"]) for e in log["evals"]],
                model=model, **(long_context(model, splits["test"]) if preset == "kjv_taylor" else {}))


def long_context(model, test: str) -> dict:
    """What a long-context run's model makes of its context (page 09 compares them with the shipped `kjv_window`): its bits
    per character on all of `test`, its bits by context depth there (`context_profile`) and its Taylor heads' half-lives
    (None for a transformer)"""
    taylor = getattr(model.et.attention, "far", model.et.attention) if model_kind(model) == "ET" else None  # window heads beside
    t = None if taylor is None else taylor.half_lives  # a transformer has no decay
    return dict(all_test_bpc=round(lm_evaluator(test, model.config)(model)["bpc"], 4), context=context_profile(model, test),
                half_lives=None if t is None else [round(float(x), 1) for x in t])
