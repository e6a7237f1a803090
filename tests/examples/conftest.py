"""Session fixtures: every example server, both protocols, started once and in parallel."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product

import pytest

from .serving import ENVS, PROTOCOLS, Fleet, start_all


@pytest.fixture(scope="session")
def fleet() -> Iterator[Fleet]:
    """All ten servers (each imports openenv and gradio: seconds each); start-ups overlap."""
    servers = start_all(product(ENVS, PROTOCOLS), timeout_s=240)
    try:
        yield servers
    finally:
        servers.stop()
