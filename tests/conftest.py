"""Tests that share a module-scoped fixture (the README's runs, the rendered tiny site, a trained tiny model) stay on one
pytest-xdist worker (`make pytest` runs `--dist loadgroup`), so that fixture is made once; the other tests spread freely."""
import os

import pytest


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups (after it, a group would be ignored)
def pytest_collection_modifyitems(config, items):
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        if defs and any(d[-1].scope == "module" for d in defs.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


@pytest.fixture
def one_device_flags():
    "XLA_FLAGS for a child process on one CPU device: this run's flags (e.g. quick compilation) without a forced device count"
    flags = os.environ.get("XLA_FLAGS", "").split()
    return " ".join(f for f in flags if not f.startswith("--xla_force_host_platform_device_count"))
