"""Every notebook runs top to bottom in Jupyter in minutes: the cells that `nbdev-test` skips for a test flag (`#| slow`:
large sweeps, recomputed tables, timings) do nothing unless ET_SLOW=1 (those that retrain the shipped models, for hours:
unless ET_RETRAIN=1), and write the package's shipped files (checkpoints, quality tables) only when ET_WRITE_SHIPPED=1
as well.

Jupyter runs every cell, flags or not, so the flag alone does not keep a reader's run short; the guard does. The check
reads the cells as nbdev's own test runner selects them (`nb_test_cells`), so it covers whatever `tst_flags` lists."""
import ast
import json
import re
from pathlib import Path

import pytest
import yaml
from nbdev.config import get_config
from nbdev.test import nb_test_cells

ROOT = Path(__file__).resolve().parents[1]
NBS = sorted((ROOT / "nbs").glob("*.ipynb"))
SHIPPED = ("checkpoint_dir", "checkpoint_path")  # the package's shipped files are reached through these
GUARDS = ("ET_SLOW", "ET_RETRAIN")  # minutes; hours


def _env_test(node, var: str) -> bool:
    "Whether `node` is the expression `os.environ.get(var)`"
    return (isinstance(node, ast.Call) and ast.unparse(node.func) == "os.environ.get" and len(node.args) == 1
            and not node.keywords and isinstance(node.args[0], ast.Constant) and node.args[0].value == var)


def guard_problem(src: str) -> str | None:
    "Why the code of a flagged cell is not guarded by `if os.environ.get(\"ET_SLOW\"):` (or ET_RETRAIN) alone, or None"
    try: body = ast.parse(src).body
    except SyntaxError as e: return f"does not parse ({e})"
    if (len(body) != 1 or not isinstance(body[0], ast.If) or not any(_env_test(body[0].test, g) for g in GUARDS)
            or body[0].orelse):
        return 'is not one `if os.environ.get("ET_SLOW"):` (or "ET_RETRAIN") block (no else) holding all its code'
    return None


def unguarded_shipped_writes(src: str) -> list[str]:
    "Calls in `src` that write a shipped file (a path built from checkpoint_dir/checkpoint_path) outside an ET_WRITE_SHIPPED test"
    tree = ast.parse(src)
    shipped_names = set()
    for node in ast.walk(tree):  # names bound to a shipped path, e.g. `q_file = checkpoint_dir() / "quality.json"`
        if isinstance(node, ast.Assign) and any(s in ast.unparse(node.value) for s in SHIPPED):
            shipped_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    pat = re.compile(r"\b(" + "|".join([*SHIPPED, *shipped_names]) + r")\b")
    bad = []
    def visit(node, guarded):
        if isinstance(node, ast.If) and any(_env_test(n, "ET_WRITE_SHIPPED") for n in ast.walk(node.test)):
            for n in node.body: visit(n, True)
            for n in node.orelse: visit(n, guarded)
            return
        if isinstance(node, ast.Call) and not guarded:
            name = ast.unparse(node.func).split(".")[-1]
            if (name.startswith(("write", "save")) or name in ("dump", "savez")) and pat.search(ast.unparse(node)):
                bad.append(ast.unparse(node)[:100])
        for n in ast.iter_child_nodes(node): visit(n, guarded)
    visit(tree, False)
    return bad


def flagged_cells(nb: Path) -> list:
    "The code cells `nbdev-test` skips because of a test flag (`tst_flags`), with their sources"
    every = nb_test_cells(nb, skip_flags=[])
    run = {c.idx_ for c in nb_test_cells(nb, skip_flags=get_config().tst_flags.split())}
    return [c for c in every if c.idx_ not in run and c.cell_type == "code"]


@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_flagged_cells_are_guarded(nb):
    probs = []
    for c in flagged_cells(nb):
        code = "\n".join(l for l in c.source.splitlines() if not l.lstrip().startswith("#|"))
        why = guard_problem(code)
        if why: probs.append(f"{nb.name} cell {c.idx_ + 1} {why}")
        elif writes := unguarded_shipped_writes(code):
            probs.append(f"{nb.name} cell {c.idx_ + 1} writes shipped files without ET_WRITE_SHIPPED: {writes}")
    assert not probs, "\n".join(probs)


def test_the_checks_catch_what_they_should():
    ok = 'if os.environ.get("ET_SLOW"):\n    x = train()\n'
    assert guard_problem(ok) is None
    assert guard_problem("x = train()\n") is not None
    assert guard_problem('import os\nif os.environ.get("ET_SLOW"):\n    x = 1\n') is not None   # code outside the block
    assert guard_problem('if os.environ.get("ET_SLOW"):\n    x = 1\nelse:\n    x = 2\n') is not None
    assert guard_problem('if os.environ.get("ET_RETRAIN"):\n    x = 1\n') is None  # the retraining switch
    assert guard_problem('if os.environ.get("ET_OTHER"):\n    x = 1\n') is not None  # another switch
    assert guard_problem('if os.environ.get("ET_SLOW") or True:\n    x = 1\n') is not None
    write = 'q = checkpoint_dir() / "quality.json"\nq.write_text(s)\nwrite_json(d, checkpoint_dir() / "a.json")\n'
    assert len(unguarded_shipped_writes(write)) == 2
    guarded = 'if os.environ.get("ET_WRITE_SHIPPED"):\n    save_shipped(checkpoint_dir() / "m.npz", m, log)\n'
    assert unguarded_shipped_writes(guarded) == []
    assert unguarded_shipped_writes('Path("../runs/q.json").write_text(s)\n') == []  # not a shipped file
    # the flagged cells are found as nbdev-test skips them: the notebook with the most has some
    assert max(len(flagged_cells(nb)) for nb in NBS) >= 2


def test_make_test_slow_turns_the_slow_cells_on():
    recipe = re.search(r"^test-slow:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert recipe and "ET_SLOW=1" in recipe.group(1) and "--flags slow" in recipe.group(1)


SHOWN_CHECK = re.compile(r"\btest_\w+\(|^\s*assert\b|\bos\.environ\b", re.M)  # a test, or a cell gated by the environment
OUT_OF_SIGHT = re.compile(r"^#\|\s*(hide|echo:\s*false|code-fold:\s*true|include:\s*false)\s*$", re.M)


def shown_checks(cells: list[dict]) -> list[str]:
    "The ids of the code cells a page shows unfolded that hold a test or read the environment"
    return [c.get("id", "?") for c in cells if c["cell_type"] == "code" and SHOWN_CHECK.search("".join(c["source"]))
            and not OUT_OF_SIGHT.search("".join(c["source"]))]


def tutorial_pages() -> list[Path]:
    "The notebooks of the site's Tutorials section, in its order"
    sidebar = yaml.safe_load((ROOT / "_quarto.yml").read_text())["website"]["sidebar"]["contents"]
    section = next(s for s in sidebar if isinstance(s, dict) and s.get("section") == "Tutorials")
    return [ROOT / "nbs" / p for p in section["contents"]]


def test_shown_checks_finds_tests_and_environment_gates():
    cell = lambda s: {"cell_type": "code", "id": s[:8], "source": [s]}
    cells = [cell("x = f()\ntest_eq(x, 1)"), cell("if os.environ.get('ET_SLOW'): x = 2"), cell("assert x > 0"),
             cell("#| code-fold: true\ntest_eq(x, 1)"), cell("#| hide\nassert x"), cell("y = latest_test(x)"),
             {"cell_type": "markdown", "id": "md", "source": ["assert in prose"]}]
    assert shown_checks(cells) == ["x = f()\n", "if os.en", "assert x"]


def test_tutorials_show_no_test_cells():
    "A tutorial page folds or hides its tests and its environment-gated cells (it shows the idea, then its figure)"
    pages = tutorial_pages()
    assert len(pages) >= 6 and all(p.is_file() for p in pages), pages
    shown = {p.name: ids for p in pages if (ids := shown_checks(json.loads(p.read_text())["cells"]))}
    assert not shown, f"tutorial cells that show tests: {shown}"
