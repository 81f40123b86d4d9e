"""The benchmark script runs end to end on tiny settings and writes complete results (no timing assertions)."""
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("roof", "descent", "training", "attention", "dense", "quality")


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
    # the Markdown table: header, one row per measure, goals stated
    md = (tmp_path / "bench.md").read_text()
    lines = [l for l in md.splitlines() if l.startswith("|")]
    assert lines[0] == "| measure | value | goal | met? |" and lines[1].startswith("|---")
    assert len(lines) >= 2 + 10
    assert all(l.count("|") == 5 for l in lines)
    for phrase in ("matmul roof", "descent step", "training step", "taylor", "dense exponential recall", "inpainting"):
        assert phrase in md, phrase


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
    md = run.markdown(r)
    assert (ROOT / "benchmarks" / "results" / "bench.md").read_text() == md
    for key in ("training", "generation", "time_to_quality"): assert key in r, key
    assert "speedup" in r["training"] and "speedup" in r["generation"]


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
