"""The package's layout: no import cycle between its modules (imports inside functions included) and no
module over 400 lines; importing the package loads no heavy library that only some functions use; `benchmarks` and
`tools` are packages beside it, and no notebook loads a script by path."""
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "energy_transformer"
SKIP = {"__init__", "_modidx"}  # the package's re-exports and nbdev's index are not modules of the graph


def modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PKG.glob("*.py")) if p.stem not in SKIP}


def imports(path: Path, names: set[str]) -> set[str]:
    "Package modules imported anywhere in the file (top level, functions, classes), relative or absolute."
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1 or base == "energy_transformer" or base.startswith("energy_transformer."):
                parts = base.split(".")
                mod = parts[0] if node.level == 1 else (parts[1] if len(parts) > 1 else "")
                if mod: found.add(mod)
                else: found |= {a.name for a in node.names}  # `from . import x` / `from energy_transformer import x`
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "energy_transformer" and len(parts) > 1: found.add(parts[1])
    return found & names


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(m):
        state[m] = "open"; stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open": return stack[stack.index(n):] + [n]
            if n not in state and (c := visit(n)): return c
        state[m] = "done"; stack.pop()
        return None

    for m in sorted(graph):
        if m not in state and (c := visit(m)): return c
    return None


def test_cycle_finder_finds_cycles():  # the checker itself can fail
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    mods = modules()
    graph = {m: imports(p, set(mods)) - {m} for m, p in mods.items()}
    assert graph["train"] and "train" in graph["image_training"]  # the parser sees the package's imports
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_modules_at_most_400_lines():
    long = {m: n for m, p in modules().items() if (n := len(p.read_text().splitlines())) > 400}
    assert not long, f"modules over 400 lines: {long}"


def test_benchmark_and_tool_files_at_most_400_lines():
    root = PKG.parent
    long = {str(p.relative_to(root)): n for d in ("benchmarks", "tools") for p in sorted((root / d).glob("*.py"))
            if (n := len(p.read_text().splitlines())) > 400}
    assert not long, f"files over 400 lines: {long}"


def test_package_import_leaves_heavy_libraries_unloaded():
    "Every command and notebook starts by importing the package: plotting, SciPy, scikit-image and OpenCV load on first use"
    code = ("import sys, energy_transformer; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib', 'scipy', 'skimage', 'cv2', 'sklearn'}))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", f"importing energy_transformer loads {p.stdout.strip()}"


def test_the_package_page_lists_every_module():
    "The module table of the package page names each module of the package once, and no other"
    nb = json.loads((PKG.parent / "nbs" / "17_package.ipynb").read_text())
    table = next("".join(c["source"]) for c in nb["cells"] if c.get("id") == "apimd001")
    listed = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert sorted(listed) == sorted(modules()), (sorted(set(listed) ^ set(modules())), len(listed))


def test_benchmarks_and_tools_are_packages_without_path_edits():
    """`benchmarks` and `tools` are packages run as `python -m benchmarks.<section>` / `python -m tools.<name>` from the
    repository root: each has its `__init__.py`, no file edits `sys.path`, and a module imports its neighbours through
    the package (`from benchmarks.timing import ...`), never by bare name"""
    root = PKG.parent
    for pkg in ("benchmarks", "tools"):
        files = sorted((root / pkg).glob("*.py"))
        assert (root / pkg / "__init__.py").is_file(), pkg
        names = {p.stem for p in files}
        for p in files:
            tree = ast.parse(p.read_text())
            path_edits = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "path"
                          and isinstance(n.value, ast.Name) and n.value.id == "sys"]
            assert not path_edits, f"{pkg}/{p.name} uses sys.path (lines {path_edits})"
            bare = [n.lineno for n in ast.walk(tree)
                    if (isinstance(n, ast.ImportFrom) and n.level == 0 and n.module in names)
                    or (isinstance(n, ast.Import) and any(a.name in names for a in n.names))]
            assert not bare, f"{pkg}/{p.name} imports a neighbour by bare name (lines {bare})"


def test_notebooks_load_no_script_by_path():
    "The pages import what they need (the package, or a benchmarks module by its name) and read results: no file is run"
    known = {"18_checks.ipynb"}  # runs tests/adversarial_cases.py for its table of cases (tests/ is not a package)
    found = []
    for nb in sorted((PKG.parent / "nbs").glob("*.ipynb")):
        if nb.name in known: continue
        for c in json.loads(nb.read_text())["cells"]:
            src = "".join(c["source"])
            if c["cell_type"] == "code" and re.search(r"spec_from_file_location|sys\.path|runpy|exec\(open", src):
                found.append(f"{nb.name} (cell {c.get('id')})")
    assert not found, f"notebooks loading code by path: {found}"


STAGES = {  # the package's pipeline: each module once, at its stage; a module imports only from its own stage or earlier
    1: "checks data crops text patches patterns checkpoint distributed counting evaluate novelty capacity",  # data, metrics
    2: "attention_ops kernel memory cosine_attention softplus_attention attention transformer heads descent",  # energy pieces
    3: "core dense",  # the Energy Transformer and the dense associative memories
    4: "image_parts image language generation classify convnet paper pretrained",  # models: embed -> ET -> head, and loading them
    5: "train image_training language_training classify_training",  # training
    6: "inpaint inpaint_files dynamic own_text own_images plots",  # tasks
    7: "cli",  # the console commands (`__init__`, which re-exports the package's names, is outside the graph)
}
MAX_STAGES, MAX_CHAIN = 7, 7


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    "The longest import chain of an acyclic graph (module -> the modules it imports), as a list of modules"
    memo = {}

    def chain(m):
        if m not in memo: memo[m] = [m] + max((chain(n) for n in sorted(graph[m])), key=len, default=[])
        return memo[m]
    return max((chain(m) for m in sorted(graph)), key=len, default=[])


def test_longest_chain_counts_modules():  # the checker itself
    assert longest_chain({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == ["a", "b", "c"]
    assert longest_chain({"a": set()}) == ["a"]


def test_pipeline_stages():
    """Every module has one stage; no module imports from a later stage (imports inside functions count); at most 7 stages,
    no import cycle, and the longest import chain is at most 7 modules"""
    stage = {}
    for s, names in STAGES.items():
        for m in names.split():
            assert m not in stage, f"{m} is listed twice in STAGES (stages {stage[m]} and {s})"
            stage[m] = s
    assert len(STAGES) <= MAX_STAGES and set(STAGES) == set(range(1, len(STAGES) + 1)), sorted(STAGES)
    mods = modules()
    assert not set(mods) - set(stage), f"modules missing from STAGES: {sorted(set(mods) - set(stage))}"
    assert not set(stage) - set(mods), f"STAGES names modules the package lacks: {sorted(set(stage) - set(mods))}"
    graph = {m: imports(p, set(mods)) - {m} for m, p in mods.items()}
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"
    upward = sorted(f"{m} (stage {stage[m]}) imports {n} (stage {stage[n]})"
                    for m, ns in graph.items() for n in ns if stage[n] > stage[m])
    assert not upward, "imports from a later stage:\n" + "\n".join(upward)
    chain = longest_chain(graph)
    assert len(chain) <= MAX_CHAIN, f"an import chain of {len(chain)} modules: {' -> '.join(chain)}"
