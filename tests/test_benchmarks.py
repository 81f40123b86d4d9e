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


def test_readme_table_is_the_shipped_bench_json():
    "bench.md and the index notebook's table (the README's and the home page's) are what run.py renders from bench.json"
    run = _run_module()
    r = json.loads((ROOT / "benchmarks" / "results" / "bench.json").read_text())
    md = run.markdown(r)
    assert (ROOT / "benchmarks" / "results" / "bench.md").read_text() == md
    nb = json.loads((ROOT / "nbs" / "index.ipynb").read_text())
    cells = ["".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith(run.INDEX_MARK)]
    assert cells == [run.index_table(md)]
    for key in ("training", "generation", "time_to_quality"): assert key in r, key
    assert "speedup" in r["training"] and "speedup" in r["generation"]
