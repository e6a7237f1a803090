"""Stopping every running provider at interpreter exit, so no server outlives its owner.

Local processes and containers register here while they run. A forked child does not own
its parent's servers, so it starts with an empty set: its exit must not stop them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Provider as _Stoppable


_live: set[_Stoppable] = set()
_lock = threading.Lock()
_hooked = False


def _stop_all() -> None:
    with _lock:
        providers = list(_live)
    for provider in providers:
        with contextlib.suppress(Exception):
            provider.stop()


def register(provider: _Stoppable) -> None:
    """Stop ``provider`` at interpreter exit unless it is unregistered first."""
    global _hooked
    with _lock:
        _live.add(provider)
        if not _hooked:
            atexit.register(_stop_all)
            _hooked = True


def unregister(provider: _Stoppable) -> None:
    """``provider`` stopped (or was handed over): nothing to do for it at exit."""
    with _lock:
        _live.discard(provider)


def _forget_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _live.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
