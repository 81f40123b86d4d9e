"""The benchmark script runs end to end on tiny settings and writes complete results, every section with the machine
it ran on (nothing about how fast anything is: speed is what the benchmark reports, not what a test asserts)."""
import importlib
import json
import math
import re
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from energy_transformer.classify import ClassifierConfig, ImageClassifier, Split, matched_transformer
from energy_transformer.core import EnergyTransformer, ETConfig, count_params, params_of
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig, MAEConfig, TransformerMAE, matched_mae
from energy_transformer.image_training import EXACT_PATHS, preset
from energy_transformer.language import CausalET, LMConfig
from energy_transformer.language_training import kjv_alphabet, lm_preset
from energy_transformer.train import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("roof", "descent", "training", "training_profile", "attention", "dense", "quality", "generation")  # timed


def numbers(x):
    "Every int/float in a nested JSON structure (bools excluded)."
    if isinstance(x, bool): return []
    if isinstance(x, (int, float)): return [x]
    if isinstance(x, dict): return [n for v in x.values() for n in numbers(v)]
    if isinstance(x, list): return [n for v in x for n in numbers(v)]
    return []


def test_quick_benchmark_end_to_end(tmp_path):
    p = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--out", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    r = json.loads((tmp_path / "bench.json").read_text())
    for s in SECTIONS:
        assert s in r, f"section {s!r} missing from bench.json"
        ns = numbers(r[s])
        assert ns, f"section {s!r} has no numbers"
        assert all(math.isfinite(n) for n in ns), f"section {s!r} has non-finite numbers"
    # the quantities the table reads are there and positive
    assert r["roof"]["roof_gflops"] > 0
    for d in r["descent"]["rows"]:
        assert d["closed_form"]["step_s"] > 0 and d["autograd"]["step_s"] > 0 and 0 < d["roof_fraction"]
        assert d["flops_breakdown_per_example"]["total"] == sum(v for k, v in d["flops_breakdown_per_example"].items()
                                                                 if k != "total")
    t = r["training"]
    assert t["naive"]["temp_bytes"] > 0 and t["project"]["temp_bytes"] > 0 and t["speedup"] > 0
    assert [m["T"] for m in t["memory_vs_T"]] == r["settings"]["train_Ts"]
    assert len(r["attention"]["rows"]) == len(r["settings"]["attn_Ns"])
    assert all(a["taylor_speedup"] > 0 for a in r["attention"]["rows"])
    c = r["context"]  # training step and cached generation of the causal ET against N, softmax and taylor
    assert [x["N"] for x in c["rows"]] == list(r["settings"]["context_Ns"])
    for x in c["rows"]:
        for k in ("softmax", "taylor"):
            assert x[k]["step_s"] > 0 and x[k]["peak_bytes"] > 0 and x[k]["generation_chars_per_s"] > 0
        assert x["batch"] * x["N"] == r["settings"]["context_chars"]  # the same characters per step at every N
    assert r["dense"]["time_s"] > 0 and r["dense"]["peak_bytes"] > 0
    assert r["quality"]["rows"], "no inpainting quality rows"
    for q in r["quality"]["rows"]: assert q["mask_ratio"] == 0.5 and q["model_mse"] > 0
    for k in ("load_start", "load_end", "date", "cpu"): assert k in r["machine"]
    # every timed section names its machine
    for s in SECTIONS:
        m = r[s]["machine"]
        for k in ("date", "cpu", "cores", "cores_used", "load_start", "load_end"): assert k in m, (s, k)
        assert m["cores"] >= m["cores_used"] >= 1
    assert "circulant" not in r
    # the roof: best of repeats over square products and the model's own dots, so no descent kernel exceeds it (the
    # descent steps run the same kind of dots, timed by the median; in quick mode the roof's 256 x 256 product is also
    # far larger than the small preset's dots)
    roof = r["roof"]
    assert {x["kind"] for x in roof["sizes"]} == {"square", "projection", "hopfield"}
    assert roof["roof_gflops"] == max(x["gflops"] for x in roof["sizes"])
    assert all(x["gflops"] >= x["gflops_median"] for x in roof["sizes"])  # best repeat vs median repeat
    # the training-step profile: four parts (differences of timings: no timing is asserted), per-step shares adding to 1
    p_ = r["training_profile"]
    assert len(p_["parts"]) == 4 and all(math.isfinite(v["s"]) for v in p_["parts"].values()), p_["parts"]
    assert set(p_["times_s"]) >= {"loss_T0", "loss", "value_and_grad"} and p_["step_s"] > 0
    assert set(p_["per_step"]) == {"attention_grad", "hopfield", "layer_norm"}
    assert all(v["s"] > 0 for v in p_["per_step"].values())
    assert abs(sum(v["share"] for v in p_["per_step"].values()) - 1) < 1e-9
    # the Markdown table: header, one row per measure, goals stated, every row's machine
    md = (tmp_path / "bench.md").read_text()
    lines = [l for l in md.splitlines() if l.startswith("|")]
    assert lines[0] == "| measure | value | goal | met? | measured on |" and lines[1].startswith("|---")
    assert len(lines) >= 2 + 12
    assert all(l.count("|") == 6 for l in lines)
    assert all(l.rstrip(" |").rsplit("|", 1)[1].strip() for l in lines[2:]), "a row without its machine"
    for phrase in ("matmul roof", "no measured kernel above the roof", "descent step", "training step profile",
                   "training step", "taylor", "dense exponential recall", "inpainting",
                   "causal ET training step, softmax vs taylor", "cached generation"):
        assert phrase in md, phrase
    assert "| no measured kernel above the roof" in md and "<= roof | yes |" in md


def _bench(name: str):
    "A module of the `benchmarks` package (beside the library, not installed with it)"
    return importlib.import_module(f"benchmarks.{name}")


def test_bench_md_is_the_shipped_bench_json():
    "bench.md is what run.py renders from bench.json (the site's benchmarks page renders its table from bench.json)"
    r = json.loads((ROOT / "benchmarks" / "results" / "bench.json").read_text())
    assert _bench("stamps").stamped_only(r) == r  # every section carries its machine
    md = _bench("report").markdown(r)
    assert (ROOT / "benchmarks" / "results" / "bench.md").read_text() == md
    for key in ("training", "training_profile", "generation"): assert key in r, key
    assert "speedup" in r["training"] and "speedup" in r["generation"]


def test_shipped_bench_json_renders_with_machines():
    """The shipped bench.json renders a table whose rows all name their machine"""
    stamps = _bench("stamps")
    r = json.loads((ROOT / "benchmarks" / "results" / "bench.json").read_text())
    assert "updates" not in r and "circulant" not in r
    for k in stamps.SECTIONS:
        if k in r: assert stamps.has_stamp(k, r[k]), k
    lines = _bench("report").table_markdown(r).splitlines()
    assert len(lines) > 10 and all(l.count("|") == 6 for l in lines)
    assert all(l.rstrip(" |").rsplit("|", 1)[1].strip() for l in lines[2:])


def _ttq_file(folder, task, method, seconds, valid, kind="ET", start=None, cores_used=1, metric="masked_mse", width=None,
              **kw):
    m = dict(date="2026-11-25 10:00 UTC", cpu="Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", cores=2, cores_used=cores_used,
             load_start=1.0, load_end=1.5, run_wall_s=300.0)
    row = dict(task=task, method=method, kind=kind, start=start, seconds=seconds, model="M", n_params=1000, steps=100,
               train_cpu_s=seconds,
               train_wall_s=seconds, metric=metric, lower_is_better=True, description=f"{method} run",
               steps_per_cpu_s=[2.0], valid=valid, test=valid * 1.1, curve=[dict(step=100, cpu_s=seconds, value=valid)],
               machine=m, **kw)
    D = f"__D{width}" if width else ""  # the file name `training_methods.result_path` gives a run at another width
    (folder / f"{task}__{method.replace(' ', '_').replace('=', '')}{D}__{seconds}.json").write_text(json.dumps(row))


def test_time_to_quality_reader(tmp_path):
    "The time-to-quality sections read every run file of a folder, keep each run's machine, and compare like with like"
    tq, report = _bench("time_to_quality"), _bench("report")
    _ttq_file(tmp_path, "image", "exact", 240, 0.02, grad_cosine={}, phases=[[1.0, {}]])
    _ttq_file(tmp_path, "image", "matched transformer", 240, 0.025, "transformer", grad_cosine={}, phases=[[1.0, {}]])
    (tmp_path / "notes.txt").write_text("not a run")
    q = tq.bench_time_to_quality(tmp_path)
    assert list(q) == ["image"] and q["image"]["metric"] == "masked_mse" and q["image"]["lower_is_better"]
    rows = q["image"]["rows"]
    assert [x["method"] for x in rows] == ["exact", "matched transformer"]
    assert all(x["machine"]["cores_used"] == 1 and x["seconds"] == 240 for x in rows)
    assert set(tq.TTQ_KEYS) <= set(rows[0])
    (e,) = tq.ttq_summary(q["image"])
    assert e["best"]["method"] == "exact" and e["transformer"]["valid"] == 0.025 and e["compare"] == "0.80x"
    tm = tq.bench_training_methods(tmp_path)
    assert tm["seconds"] == 240 and tm["best"] == "exact" and len(tm["rows"]) == 2
    r = dict(time_to_quality=q, training_methods=tm)
    md = report.table_markdown(r)
    assert "time to quality, image, validation masked MSE after 240 CPU s each (one core per run)" in md
    assert "ET exact 0.0200 vs matched transformer 0.0250 (0.80x)" in md
    assert "Intel Xeon Gold 6338, 1 of 2 cores each, load 1.0–1.5, 2026-11-25" in md
    assert "training method, image, 240 CPU s: exact (best ET)" in md
    assert all(l.count("|") == 6 for l in md.splitlines())


def test_time_to_quality_widths(tmp_path):
    "A run at another width than the recipe's (`__D<width>` in its file name) is another method, compared like with like"
    tq, folder = _bench("time_to_quality"), tmp_path / "ttq"
    folder.mkdir()
    for method, width, bpc, kind in (("T=2", None, 2.0, "ET"), ("T=2", 192, 1.9, "ET"),
                                     ("matched transformer", None, 1.95, "transformer")):
        _ttq_file(folder, "language", method, 300, bpc, kind, metric="bpc", width=width)
    q = tq.bench_time_to_quality(folder)["language"]
    assert [(x["method"], x.get("width")) for x in q["rows"]] == [("T=2", None), ("T=2 (D = 192)", 192),
                                                                  ("matched transformer", None)]
    assert q["rows"][1]["source"] == "benchmarks/results/ttq/language__T2__D192__300.json"
    (e,) = tq.ttq_summary(q)  # no transformer at D = 192: the recipe's matched transformer
    assert (e["best"]["method"], e["transformer"]["method"], e["n_et"], e["compare"]) == ("T=2 (D = 192)",
                                                                                        "matched transformer", 2, "-0.050 bits")
    _ttq_file(folder, "language", "matched transformer", 300, 1.8, "transformer", metric="bpc", width=192)
    (e,) = tq.ttq_summary(tq.bench_time_to_quality(folder)["language"])  # a transformer of the best ET's width
    assert (e["transformer"]["method"], e["n_et"], e["compare"]) == ("matched transformer (D = 192)", 2, "+0.100 bits")
    md = _bench("report").table_markdown(dict(time_to_quality=dict(language=tq.bench_time_to_quality(folder)["language"])))
    assert "ET T=2 (D = 192) 1.900 (best of 2 ET methods) vs matched transformer (D = 192) 1.800 (+0.100 bits)" in md


def test_only_merges_into_the_shipped_bench_json(tmp_path):
    """`run.py --only time_to_quality` (a section read from files: nothing timed) replaces that section in an earlier
    bench.json and keeps the others as they were"""
    run = _bench("run")
    shipped = json.loads((ROOT / "benchmarks" / "results" / "bench.json").read_text())
    (tmp_path / "bench.json").write_text(json.dumps(shipped))
    run.main(["--only", "time_to_quality", "--out", str(tmp_path)])
    r = json.loads((tmp_path / "bench.json").read_text())
    tq = _bench("time_to_quality")
    assert r["time_to_quality"] == tq.bench_time_to_quality(ROOT / "benchmarks" / "results" / "ttq")
    for k in _bench("stamps").SECTIONS:
        if k != "time_to_quality": assert r.get(k) == shipped.get(k), k
    assert (tmp_path / "bench.md").read_text() == _bench("report").markdown(r)
    image = r["time_to_quality"]["image"]
    assert [e["seconds"] for e in tq.ttq_summary(image)] == sorted({x["seconds"] for x in image["rows"]})


def test_merge_keeps_stamped_sections_only():
    "An --only refresh replaces whole sections; the earlier file's sections without a machine stamp are dropped"
    run = _bench("stamps")
    m = dict(date="2026-11-20 10:00 UTC", cpu="X", cores=2, cores_used=2, load_start=1.0, load_end=1.0)
    old = dict(quick=False, machine=dict(m, jax="0", platform="p"), dense=dict(time_s=1.0, machine=m),
               attention=dict(rows=[], machine=m), training_candidates=dict(rows=[]), circulant=dict(steps=1))
    new = dict(quick=False, machine=dict(m, date="2026-11-25 10:00 UTC"),
               attention=dict(rows=[1], machine=dict(m, date="2026-11-25 10:00 UTC")))
    r = run.merge(new, old)
    assert r["attention"]["rows"] == [1] and r["dense"]["time_s"] == 1.0
    assert "training_candidates" not in r and "circulant" not in r
    assert run.merge(dict(new, quick=True), old) == dict(new, quick=True)


def test_training_gradient_candidates_are_exact():
    "The fused and the hand-derived (custom_vjp) energy gradients of benchmarks/variants.py: value and VJP == autodiff"
    var = _bench("variants")
    with jax.enable_x64(True):
        et = EnergyTransformer(ETConfig(D=16, H=2, Y=4, M=24), key=jax.random.key(0))
        et = jax.tree.map(lambda a: a.astype(jnp.float64) if eqx.is_inexact_array(a) else a, et)
        g = jax.random.normal(jax.random.key(1), (7, 16), jnp.float64)
        v = jax.random.normal(jax.random.key(2), (7, 16), jnp.float64)
        for grad in (var.fused_grad, var.custom_vjp_grad):
            np.testing.assert_allclose(grad(et, g), et.grad(g), atol=1e-12)
            ref = eqx.filter_grad(lambda et, g: jnp.sum(et.grad(g) * v))(et, g)  # d<dE/dg, v> by autodiff
            got = eqx.filter_grad(lambda et, g, grad=grad: jnp.sum(grad(et, g) * v))(et, g)
            parts = dict(Wq=lambda m: m.Wq, Wk=lambda m: m.Wk, Xi=lambda m: m.memory.Xi, beta=lambda m: m.beta)
            for name, part in parts.items():
                np.testing.assert_allclose(part(got), part(ref), atol=1e-10, err_msg=name)
            dg = lambda G: jax.grad(lambda g: jnp.sum(G(g) * v))(g)
            np.testing.assert_allclose(dg(lambda g, grad=grad: grad(et, g)), dg(et.grad), atol=1e-10)


def test_circulant_projection_is_a_circular_correlation():
    "benchmarks/circulant.py: its dense columns are circulant, and the FFT projection equals the dense one"
    circ = _bench("circulant")
    with jax.enable_x64(True):
        c = jax.random.normal(jax.random.key(0), (3, 8), jnp.float64)
        g = jax.random.normal(jax.random.key(1), (5, 8), jnp.float64)
        W = np.asarray(circ.circulant_columns(c, 4))
        assert W.shape == (3, 8, 4) and np.array_equal(W[:, :, 0], np.asarray(c))  # column 0 is c itself
        np.testing.assert_array_equal(W[:, 1:, 1:], W[:, :-1, :-1])  # constant along diagonals ...
        np.testing.assert_array_equal(W[:, 0, 1:], W[:, -1, :-1])  # ... wrapping around
        expect = np.einsum("nd,hdy->hny", np.asarray(g), W)
        np.testing.assert_allclose(circ.circulant_project(g, c, 4), expect, atol=1e-12)


def test_methods_share_the_shipped_recipes():
    """The benchmark's window-head methods are the shipped kjv_window recipe (floors aside); its natural-photo ETs all
    have the parameter count its matched transformers are matched to, the energy blocks' extra layer norms and inverse
    temperatures aside"""
    lang, natural = _bench("methods_language"), _bench("methods_natural")
    shipped = lm_preset("kjv_window", kjv_alphabet())[1]
    assert lang.language_config("window heads 3", None, "kjv_taylor")[1] == shipped
    floored = lang.language_config("window heads 3, half-lives >= 64", None, "kjv_taylor")[1]
    assert floored == replace(shipped, et=replace(shipped.et, min_half_life=64))
    assert lang.language_config("window heads", None, "kjv_taylor")[1].et.window_heads == 2
    target = params_of(ImageEnergyTransformer, preset("natural")[0])
    ets = {k: m(0) for k, (_, m) in natural.natural_methods(preset("natural")[0]).items() if "transformer" not in k}
    assert ets["warm T=2, 8 heads, 128 memories"].config.et.H == 8
    extra = lambda c: (c.blocks - 1) * (c.et.D + 2)  # each further block's layer norm (gain and D biases) and beta
    assert ets["warm, 4 energy blocks"].config.blocks == 4
    two_weight = ets.pop("warm, 4 two-weight energy blocks")  # 31 hidden units a block: 1.1% fewer parameters
    c, stack = two_weight.config, ets["warm, 4 energy blocks"].config
    fewer = c.blocks * (stack.et.M * c.et.D - (2 * c.et.M * c.et.D + c.et.M))  # a block's memory: M D against 2 M D + M
    assert fewer == 4 * (64 * 64 - (2 * 31 * 64 + 31)) == 388  # 1.1% of the 35,385
    assert params_of(ImageEnergyTransformer, c) == target + extra(c) - fewer
    assert all(params_of(ImageEnergyTransformer, m.config) == target + extra(m.config) for m in ets.values())


def test_recorded_language_runs_are_what_their_commands_build():
    """Every causal time-to-quality run on file is what its command builds today: the method and the width in the file's
    name give a model with the recorded parameter count and descent steps, so a fresh run trains what the pages report"""
    tm, lang = _bench("training_methods"), _bench("methods_language")
    files = sorted(tm.RESULTS.glob("language__*.json"))
    assert len(files) >= 6
    for f in files:
        r, width = json.loads(f.read_text()), re.search(r"__D(\d+)__", f.name)
        cls, mc, _ = lang.language_config(r["method"], width and int(width.group(1)))
        assert params_of(cls, mc) == r["n_params"], (f.name, params_of(cls, mc), r["n_params"])
        assert r["kind"] == "transformer" or f"T = {mc.T}," in r["description"], (f.name, mc.T, r["description"])


def test_a_run_file_says_what_it_ran(tmp_path):
    """A run file records whether its model is an ET or a transformer baseline, read from the model itself (a classifier
    whose token mixer is a transformer stack is a transformer); a stamped file without that is refused by name"""
    runs, tq = _bench("methods_runs"), _bench("time_to_quality")
    mc, key = preset("fashion_mnist")[0], jax.random.PRNGKey(0)
    cc = ClassifierConfig(patch_size=7, et=ETConfig(D=32, H=2, Y=8, M=512), T=2)
    assert runs.model_kind(ImageEnergyTransformer(mc, key=key)) == runs.model_kind(ImageClassifier(cc, key=key)) == "ET"
    assert runs.model_kind(TransformerMAE(matched_mae(mc), key=key)) == "transformer"
    assert runs.model_kind(ImageClassifier(matched_transformer(cc), key=key)) == "transformer"
    _ttq_file(tmp_path, "image", "exact", 240, 0.02, kind=None)
    with pytest.raises(ValueError, match=r"image__exact__240\.json: 'kind' is None"): tq.read_runs(tmp_path)


def test_a_run_resumes_only_with_its_own_budget(tmp_path):
    "A saved run is resumed with the rate it probed and only with the budget its step count was planned for"
    runs = _bench("methods_runs")
    (tmp_path / "rate.json").write_text(json.dumps(dict(steps_per_cpu_s=12.5, seconds=900)))
    probe = lambda *a, **k: pytest.fail("a saved run's rate is not probed again")
    assert runs.resumable(probe, None, tmp_path, 900) == (12.5, dict(out=tmp_path, name="run", resume=True))
    with pytest.raises(SystemExit, match="planned for 900 CPU seconds; resume it with --seconds 900"):
        runs.resumable(probe, None, tmp_path, 5049)
    with pytest.raises(SystemExit, match="planned for 900 CPU seconds"):
        runs.resumable(probe, None, tmp_path, 900, steps=1000)


def test_a_run_of_given_steps_trains_exactly_them(tmp_path):
    """`--steps`: no throughput probe, exactly that many steps, its rate as its training measured it; its plan is
    saved, and neither a run of given steps nor a run of given seconds resumes under the other's plan"""
    tm, runs, eq = _bench("training_methods"), _bench("methods_runs"), _bench("equal_time")
    probe = lambda *a, **k: pytest.fail("a run of given steps probes no throughput")
    seen = []
    train = lambda tc, **k: (seen.append((tc.steps, k)), ("model", dict(train_cpu_s=4.0)))[1]
    model, log, rate = eq.train_for_seconds(train, TrainConfig(steps=3), 900, evals=4, steps=1000, resume=True)
    assert seen == [(1000, dict(resume=True))] and rate == 250.0
    assert runs.resumable(probe, None, tmp_path, 900, steps=1000) == (None, dict(out=tmp_path, name="run", resume=True))
    assert json.loads((tmp_path / "rate.json").read_text()) == dict(steps_per_cpu_s=None, steps=1000)
    assert runs.resumable(probe, None, tmp_path, 240, steps=1000)[0] is None          # seconds do not matter to it
    with pytest.raises(SystemExit, match="planned for 1000 steps; resume it with --steps 1000"):
        runs.resumable(probe, None, tmp_path, 900, steps=2000)
    with pytest.raises(SystemExit, match="planned for 1000 steps"):
        runs.resumable(probe, None, tmp_path, 900)
    assert tm.result_path("natural_image", "warm T=2", None, Path("/r"), steps=1000).name == \
        "natural_image__warm_T2__1000steps.json"


def test_run_files_are_read_with_their_own_folder(tmp_path):
    "Equal-steps runs are read by the same reader as the equal-time ones, each named by its own folder"
    tq, folder = _bench("time_to_quality"), tmp_path / "equal_steps"
    folder.mkdir()
    _ttq_file(folder, "natural_image", "matched transformer warm", None, 0.00126, "transformer", "harmonic")
    name = "natural_image__matched_transformer_warm__45622steps.json"   # as `training_methods.result_path` names it
    (folder / "natural_image__matched_transformer_warm__None.json").rename(folder / name)
    (r,) = tq.read_runs(folder)
    assert (r["method"], r["seconds"], r["valid"]) == ("matched transformer warm", None, 0.00126)
    assert r["source"] == f"benchmarks/results/equal_steps/{name}"


def test_classification_width_keeps_the_recipe_and_matches_the_transformer():
    "`--width 64`: the classifier recipe at D = 64 with M = 4 D (51,805 parameters), its transformer within 1% of that"
    cl = _bench("methods_classification")
    (de, et), (dt, tf) = cl.classification_config("exact", 64), cl.classification_config("matched transformer", 64)
    assert (et.et.D, et.et.M, et.et.H, et.et.Y, et.T, et.stem, et.patch_size) == (64, 256, 4, 16, 4, 8, 7)
    n_et, n_tf = (count_params(ImageClassifier(c, key=jax.random.key(0))) for c in (et, tf))
    assert n_et == 51_805 and abs(n_tf / n_et - 1) < 0.01
    assert de.endswith(", D = 64") and dt.endswith(", D = 64") and cl.classification_config("exact")[1].et.D == 96
    bare = cl.classification_config("exact", 64, stem=0)[1]  # no stem: the patches' pixels embedded directly
    assert bare.stem == 0 and 29_000 < count_params(ImageClassifier(bare, key=jax.random.key(0))) < 31_000
    small = cl.classification_config("exact", 64, patch=4)[1]  # `--patch 4`: 7 x 7 = 49 patches of 4 x 4 pixels
    assert (small.patch_size, small.patcher.N, small.stem, small.et.D) == (4, 49, 8, 64)


def test_natural_runs_train_an_et_on_the_path_et_train_would_choose(monkeypatch):
    "An image ET gets the path `fastest_exact_path` times fastest for its configuration and batch (as in et-train)"
    natural, asked, fast = _bench("methods_natural"), [], "autograd, no remat"
    timed = lambda mc, batch_size, iters: asked.append((mc, batch_size)) or (fast, EXACT_PATHS[fast], {})
    monkeypatch.setattr(natural, "fastest_exact_path", timed)  # the timing itself is page 03's
    mc = ImageETConfig.tiny(start="harmonic", residual=True)
    got = natural.exact_path(ImageEnergyTransformer(mc, key=jax.random.PRNGKey(0)), 8)
    assert got == (fast, (("autograd", True), ("remat", False)))
    assert asked == [(mc, 8)]
    assert natural.exact_path(TransformerMAE(MAEConfig.like(mc), key=jax.random.PRNGKey(0)), 8) == (None, ())


def test_long_context_reports_the_taylor_heads_half_lives():
    "A long-context run's report: bits on the text, by depth 1..N, and each Taylor head's half-life t (gamma^t = 1/2)"
    lang = _bench("methods_language")
    chars = kjv_alphabet()
    et = ETConfig(D=32, H=2, Y=16, M=64, attention="taylor", decay=True, min_half_life=4)
    model = CausalET(LMConfig(chars=chars, N=32, et=et, T=1), key=jax.random.key(0))
    text = "In the beginning God created the heaven and the earth. " * 6
    r = lang.long_context(model, text)
    t = np.asarray(r["half_lives"])
    assert t.shape == (2,) and (t > 4).all() and np.allclose(np.asarray(model.et.attention.gamma) ** t, 0.5, atol=1e-3)
    assert len(r["context"]["by_depth"]) == 32 and 0 < r["all_test_bpc"] < 2 * math.log2(len(chars))


def test_energy_and_error_reads_the_descent_of_an_et_classifier():
    "Fifths of equal size: their mean error is the error rate on the images; one mean energy per class"
    cl = _bench("methods_classification")
    model = ImageClassifier(ClassifierConfig(patch_size=7, et=ETConfig.small(), T=2), key=jax.random.key(0))
    rng = np.random.default_rng(0)
    split = Split(rng.random((20, 1, 28, 28), dtype=np.float32), np.repeat(np.arange(10), 2))
    r = cl.energy_and_error(model, split)
    wrong = 1 - np.mean(model.predict(split.images) == split.labels)
    assert len(r["error_by_energy_fifth"]) == 5 and math.isclose(np.mean(r["error_by_energy_fifth"]), wrong, abs_tol=1e-4)
    assert list(r["class_energy"]) == list(model.config.classes) and all(map(math.isfinite, r["class_energy"].values()))


def test_steps_is_checked_before_any_training(capsys):
    "`--steps` below 1, or for a task without it, stops with one line naming it"
    tm = _bench("training_methods")
    for argv, says in ((["--task", "natural_image", "--method", "warm", "--steps", "0"], "--steps must be at least 1, got 0"),
                       (["--task", "image", "--method", "exact", "--steps", "5"], "--task image has no option --steps")):
        with pytest.raises(SystemExit):
            tm.main(argv)
        assert says in capsys.readouterr().err


def test_run_options_name_their_file():
    "A run with its own learning rate, seed or starting model is filed apart from the method's run, and named so"
    tm = _bench("training_methods")
    assert tm.run_label("warm T=1", lr=None, seed=None, init=None) == "warm T=1"
    label = tm.run_label("warm T=1", lr=0.003, seed=None)
    assert label == "warm T=1 (lr 0.003)"
    assert tm.result_path("natural_image", label, 900) != tm.result_path("natural_image", "warm T=1", 900)
    assert tm.run_label("T=2", lr=None, seed=3, init="kjv_ar") == "T=2 (seed 3, init kjv_ar)"
    path = tm.result_path("language", tm.run_label("T=2", init="/tmp/runs/run.npz"), 900, Path("/r"))
    assert path.parent == Path("/r") and path.name == "language__T2_(init_run.npz)__900.json"
    floor = tm.result_path("long_language", "window heads 3, half-lives >= 64", None, steps=6719)
    assert floor.name == "long_language__window_heads_3,_half-lives__64__6719steps.json"  # no '>': a name for any system


def test_result_files_have_portable_names():
    "Every committed result file can be checked out on any system: no character a Windows file name cannot hold"
    files = [p.name for p in (ROOT / "benchmarks" / "results").rglob("*") if p.is_file()]
    assert len(files) > 20 and not [f for f in files if re.search(r'[<>:"\\|?*=]', f)]


@pytest.mark.parametrize("method,options", [("warm T=1", {}), ("warm, 4 energy blocks", dict(lr=0.002, seed=1)),
                                            ("T=2", dict(seed=3, init="kjv_ar")), ("exact", dict(smoothing=0.1, shift=2)),
                                            ("exact", dict(stem=0)), ("exact", dict(patch=4)),
                                            ("matched transformer warm", dict(weight_decay=0.0))])
def test_a_run_label_gives_back_its_command_line(method, options):
    "label_options inverts run_label: the label's options parse back, through the script's own parser, to the run's"
    tm, tq = _bench("training_methods"), _bench("time_to_quality")
    argv = shlex.split(tq.label_options(tm.run_label(method, **options)))
    got = vars(tm.parser().parse_args(argv))
    assert got["method"] == method and {k: got[k] for k in options} == options


def test_time_to_quality_warm_start(tmp_path):
    """A warm-started ET is compared with the best warm-started matched transformer, a cold one with the cold
    transformer: what a run is and how it started are its file's `kind` and `start`, whatever its name says"""
    tq = _bench("time_to_quality")
    for method, mse, kind, start in (("warm T=1", 0.0016, "ET", "harmonic"), ("from the fill", 0.0017, "ET", "harmonic"),
                                     ("matched transformer warm", 0.0014, "transformer", "harmonic"),
                                     ("matched transformer", 0.0012, "transformer", "mask")):
        _ttq_file(tmp_path, "natural_image", method, 900, mse, kind, start)
    q = tq.bench_time_to_quality(tmp_path)["natural_image"]
    (e,) = tq.ttq_summary(q)  # the cold transformer's better number is not the warm ET's comparison
    assert (e["best"]["method"], e["transformer"]["method"], e["n_et"], e["compare"]) == (
        "warm T=1", "matched transformer warm", 2, "1.14x")
    _ttq_file(tmp_path, "natural_image", "wide transformer", 900, 0.0013, "transformer", "harmonic")  # the best of its kind
    (e,) = tq.ttq_summary(tq.bench_time_to_quality(tmp_path)["natural_image"])
    assert (e["transformer"]["method"], e["n_et"], e["compare"]) == ("wide transformer", 2, "1.23x")
    _ttq_file(tmp_path, "natural_image", "cold", 900, 0.0011, "ET", "mask")
    (e,) = tq.ttq_summary(tq.bench_time_to_quality(tmp_path)["natural_image"])
    assert (e["best"]["method"], e["transformer"]["method"], e["n_et"]) == ("cold", "matched transformer", 3)


def test_runs_by_method_name_a_missing_run_and_its_command():
    "The pages look runs up by method; a missing one is one line naming the run and the command that makes it"
    runs = _bench("time_to_quality").RunsByMethod([{"method": "warm T=2", "valid": 0.00136}], "natural_image", "--seconds 900")
    assert runs["warm T=2"]["valid"] == 0.00136
    with pytest.raises(FileNotFoundError) as e:
        runs["warm T=9"]
    assert str(e.value) == ("no natural_image run 'warm T=9' among the benchmark results; make it with python -m "
                            "benchmarks.training_methods --task natural_image --method 'warm T=9' --seconds 900")
    rows = [{"method": "warm T=2", "seconds": 900.0, "valid": 1.0}, {"method": "warm T=2", "seconds": 5049.0, "valid": 2.0}]
    full = _bench("time_to_quality").RunsByMethod.at(rows, "natural_image", 5049.0)  # one budget's runs
    assert list(full) == ["warm T=2"] and full["warm T=2"]["valid"] == 2.0
    with pytest.raises(FileNotFoundError, match=r"--method 'cold' --seconds 5049$"):
        full["cold"]
    steps = [{"method": "warm T=2", "seconds": None, "steps": n, "valid": v} for n, v in ((45622, 3.0), (136866, 4.0))]
    longer = _bench("time_to_quality").RunsByMethod.after_steps(rows + steps, "natural_image", 136866)  # one step count's
    assert list(longer) == ["warm T=2"] and longer["warm T=2"]["valid"] == 4.0
    with pytest.raises(FileNotFoundError, match=r"--method 'cold' --steps 136866$"):
        longer["cold"]
    with pytest.raises(FileNotFoundError, match=r"--method 'warm, 4 energy blocks' --lr 0.002 --seed 1 --steps 136866$"):
        longer["warm, 4 energy blocks (lr 0.002, seed 1)"]  # a run label names its options (training_methods.run_label)
