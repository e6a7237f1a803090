"""The fault server (``faultserver.py``), started once per test session, and its helpers."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from envgen_runtime import LocalProcessProvider

FAULTSERVER_PY = str(Path(__file__).with_name("faultserver.py"))
_CASE_IDS = itertools.count(1)


def faultserver_command() -> tuple[str, ...]:
    """argv template that starts the fault server on a chosen port."""
    return ("{python}", FAULTSERVER_PY, "--host", "{host}", "--port", "{port}")


@pytest.fixture(scope="session")
def faultserver() -> Iterator[str]:
    """Base URL of the shared fault server (one process for the whole session)."""
    provider = LocalProcessProvider(faultserver_command(), startup_timeout_s=30.0)
    provider.start()
    try:
        assert provider.base_url is not None
        yield provider.base_url
    finally:
        provider.stop()


def fault_url(base: str, fault: str) -> str:
    """A base URL whose requests hit ``fault`` with a case state of their own."""
    return f"{base}/{fault}/c{next(_CASE_IDS)}"
