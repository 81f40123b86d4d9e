"""Shared fixtures. `make pytest` runs with pytest-xdist's `--dist loadfile`: each test file runs whole on one worker,
so a module-scoped fixture (the README's runs, the rendered tiny site, a trained tiny model) is made once."""
import os

import pytest


@pytest.fixture
def one_device_flags():
    "XLA_FLAGS for a child process on one CPU device: this run's flags (e.g. quick compilation) without a forced device count"
    flags = os.environ.get("XLA_FLAGS", "").split()
    return " ".join(f for f in flags if not f.startswith("--xla_force_host_platform_device_count"))
