"""Every row of the adversarial table (`tests/adversarial_cases.py`): what must happen, happens."""
import io
import signal
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from adversarial_cases import CASES, Exits, Gives, Raises, RaisesAtRun, World


@pytest.fixture(scope="module")
def world(tmp_path_factory): return World(tmp_path_factory.mktemp("adversarial"))


def run_command(f):
    "Exit status, standard error and output of a command run in this process (its signal handlers restored after)"
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    err, out = io.StringIO(), io.StringIO()
    try:
        with redirect_stderr(err), redirect_stdout(out):
            try: f(); status = 0
            except SystemExit as e: status = e.code
    finally:
        for s, h in handlers.items(): signal.signal(s, h)
    return status, err.getvalue(), out.getvalue()


def test_table_is_large_and_covers_every_fault():
    assert len(CASES) >= 170
    assert len({c.case for c in CASES}) == len(CASES)  # one row per case
    assert {c.fault for c in CASES} == {"silent wrong answer", "memory bomb", "training and generation", "paths",
                                        "library message", "download integrity"}


@pytest.mark.parametrize("case", CASES, ids=[f"{i:03d}" for i in range(len(CASES))])
def test_case(case, world):
    if case.needs and not Path(case.needs).exists(): pytest.skip(f"needs {case.needs}")
    e = case.expect
    if isinstance(e, Raises):
        with pytest.raises((ValueError, TypeError)) as info: case.call(world)
        msg = str(info.value)
        assert "\n" not in msg and e.text in msg, msg
    elif isinstance(e, RaisesAtRun):
        with pytest.raises(Exception, match=e.text): case.call(world)
    elif isinstance(e, Gives):
        r = case.call(world)
        assert e.check(r), r
    else:
        assert isinstance(e, Exits)
        status, err, _ = run_command(lambda: case.call(world))
        lines = err.strip().splitlines()
        assert status == e.status and len(lines) == 1 and e.text in lines[0] and "Traceback" not in err, (status, err)
