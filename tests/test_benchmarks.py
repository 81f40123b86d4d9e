"""The benchmark script runs end to end on tiny settings and writes complete results, every section with the machine
it ran on (nothing about how fast anything is: speed is what the benchmark reports, not what a test asserts)."""
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

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
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--out", str(tmp_path)],
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
                   "training step", "taylor", "dense exponential recall", "inpainting"):
        assert phrase in md, phrase
    assert "| no measured kernel above the roof" in md and "<= roof | yes |" in md


def _run_module():
    "benchmarks/run.py as a module (it is a script, not part of the package)"
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_md_is_the_shipped_bench_json():
    "bench.md is what run.py renders from bench.json (the site's benchmarks page renders its table from bench.json)"
    run = _run_module()
    r = json.loads((ROOT / "benchmarks" / "results" / "bench.json").read_text())
    assert run.stamped_only(r) == r  # every section carries its machine
    md = run.markdown(r)
    assert (ROOT / "benchmarks" / "results" / "bench.md").read_text() == md
    for key in ("training", "training_profile", "generation"): assert key in r, key
    assert "speedup" in r["training"] and "speedup" in r["generation"]


def test_shipped_bench_json_renders_with_machines():
    """The shipped bench.json renders a table whose rows all name their machine"""
    run = _run_module()
    r = json.loads((ROOT / "benchmarks" / "results" / "bench.json").read_text())
    assert "updates" not in r and "circulant" not in r
    for k in run.SECTIONS:
        if k in r: assert run.has_stamp(k, r[k]), k
    lines = run.table_markdown(r).splitlines()
    assert len(lines) > 10 and all(l.count("|") == 6 for l in lines)
    assert all(l.rstrip(" |").rsplit("|", 1)[1].strip() for l in lines[2:])


def _ttq_file(folder, task, method, seconds, valid, cores_used=1, **kw):
    m = dict(date="2026-11-25 10:00 UTC", cpu="Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", cores=2, cores_used=cores_used,
             load_start=1.0, load_end=1.5, run_wall_s=300.0)
    row = dict(task=task, method=method, seconds=seconds, model="M", n_params=1000, steps=100, train_cpu_s=seconds,
               train_wall_s=seconds, metric="masked_mse", lower_is_better=True, description=f"{method} run",
               steps_per_cpu_s=[2.0], valid=valid, test=valid * 1.1, curve=[dict(step=100, cpu_s=seconds, value=valid)],
               machine=m, **kw)
    (folder / f"{task}__{method.replace(' ', '_')}__{seconds}.json").write_text(json.dumps(row))


def test_time_to_quality_reader(tmp_path):
    "The time-to-quality sections read every run file of a folder, keep each run's machine, and compare like with like"
    run = _run_module()
    _ttq_file(tmp_path, "image", "exact", 240, 0.02, grad_cosine={}, phases=[[1.0, {}]])
    _ttq_file(tmp_path, "image", "matched transformer", 240, 0.025, grad_cosine={}, phases=[[1.0, {}]])
    (tmp_path / "notes.txt").write_text("not a run")
    q = run.bench_time_to_quality(tmp_path)
    assert list(q) == ["image"] and q["image"]["metric"] == "masked_mse" and q["image"]["lower_is_better"]
    rows = q["image"]["rows"]
    assert [x["method"] for x in rows] == ["exact", "matched transformer"]
    assert all(x["machine"]["cores_used"] == 1 and x["seconds"] == 240 for x in rows)
    assert set(run.TTQ_KEYS) <= set(rows[0])
    (e,) = run.ttq_summary(q["image"])
    assert e["best"]["method"] == "exact" and e["transformer"]["valid"] == 0.025 and e["compare"] == "0.80x"
    tm = run.bench_training_methods(tmp_path)
    assert tm["seconds"] == 240 and tm["best"] == "exact" and len(tm["rows"]) == 2
    r = dict(time_to_quality=q, training_methods=tm)
    md = run.table_markdown(r)
    assert "time to quality, image, validation masked MSE after 240 CPU s each (one core per run)" in md
    assert "ET exact 0.0200 vs matched transformer 0.0250 (0.80x)" in md
    assert "Intel Xeon Gold 6338, 1 of 2 cores each, load 1.0–1.5, 2026-11-25" in md
    assert "training method, image, 240 CPU s: exact (best ET)" in md
    assert all(l.count("|") == 6 for l in md.splitlines())


def test_merge_keeps_stamped_sections_only():
    "An --only refresh replaces whole sections; the earlier file's sections without a machine stamp are dropped"
    run = _run_module()
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
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import numpy as np

    from energy_transformer.core import EnergyTransformer, ETConfig
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_variants", ROOT / "benchmarks" / "variants.py")
    var = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(var)
    with jax.enable_x64(True):
        et = EnergyTransformer(ETConfig(D=16, H=2, Y=4, M=24), key=jax.random.key(0))
        et = jax.tree.map(lambda a: a.astype(jnp.float64) if eqx.is_inexact_array(a) else a, et)
        g = jax.random.normal(jax.random.key(1), (7, 16), jnp.float64)
        v = jax.random.normal(jax.random.key(2), (7, 16), jnp.float64)
        for grad in (var.fused_grad, var.custom_vjp_grad):
            np.testing.assert_allclose(grad(et, g), et.grad(g), atol=1e-12)
            ref = eqx.filter_grad(lambda et, g: jnp.sum(et.grad(g) * v))(et, g)  # d<dE/dg, v> by autodiff
            got = eqx.filter_grad(lambda et, g, grad=grad: jnp.sum(grad(et, g) * v))(et, g)
            for name in ("Wq", "Wk", "Xi", "beta"):
                np.testing.assert_allclose(getattr(got, name), getattr(ref, name), atol=1e-10, err_msg=name)
            dg = lambda G: jax.grad(lambda g: jnp.sum(G(g) * v))(g)
            np.testing.assert_allclose(dg(lambda g, grad=grad: grad(et, g)), dg(et.grad), atol=1e-10)


def test_circulant_projection_is_a_circular_correlation():
    "benchmarks/circulant.py: its dense columns are circulant, and the FFT projection equals the dense one"
    import jax
    import jax.numpy as jnp
    import numpy as np
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_circulant", ROOT / "benchmarks" / "circulant.py")
    circ = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # registered: it defines a dataclass
    spec.loader.exec_module(circ)
    with jax.enable_x64(True):
        c = jax.random.normal(jax.random.key(0), (3, 8), jnp.float64)
        g = jax.random.normal(jax.random.key(1), (5, 8), jnp.float64)
        W = np.asarray(circ.circulant_columns(c, 4))
        assert W.shape == (3, 8, 4) and np.array_equal(W[:, :, 0], np.asarray(c))  # column 0 is c itself
        np.testing.assert_array_equal(W[:, 1:, 1:], W[:, :-1, :-1])  # constant along diagonals ...
        np.testing.assert_array_equal(W[:, 0, 1:], W[:, -1, :-1])  # ... wrapping around
        expect = np.einsum("nd,hdy->hny", np.asarray(g), W)
        np.testing.assert_allclose(circ.circulant_project(g, c, 4), expect, atol=1e-12)
