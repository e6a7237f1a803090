"""The thread an environment's sync methods run on, off the event loop.

An env's ``reset``/``step`` are plain functions that may block (a simulator step, a
subprocess, a sleep); run on the event loop, one slow env would stall every other session on
the server. So each env gets one thread of its own, a single-worker
``ThreadPoolExecutor``, for its whole life: it is constructed, reset, stepped and closed
there, and the loop awaits each call. This is what openenv 0.10's WebSocket handler does
(``_create_session``, ``_run_in_session_executor``), and for the same reason: a pooled thread
per call (starlette's ``run_in_threadpool``) would call one env object from whichever worker
is free, which thread-affine libraries (Playwright's sync API and greenlet, sqlite3
connections, GL contexts of simulators' renderers) refuse. A class that sets
``REQUIRES_SINGLE_THREAD_EXECUTOR`` (openenv's flag) gets one thread shared by all its
sessions, as on openenv. ``reset_async``/``step_async``, when the env defines them, are
awaited on the loop instead: they are the env's way of saying it does not block.

The price is one thread hop per call (a future and a wake-up of the loop), tens of
microseconds; openenv pays the same.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

SINGLE_THREAD_FLAG = "REQUIRES_SINGLE_THREAD_EXECUTOR"
"""openenv's class attribute: every session of the class on one shared thread."""


def _executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="envgen-env")


class EnvThread:
    """One env's thread: `run` calls there and awaits the result; `close` lets it go."""

    def __init__(self, shared: ThreadPoolExecutor | None = None) -> None:
        self._executor = shared if shared is not None else _executor()
        self._owned = shared is None

    async def run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` on this thread, awaited from the loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(call, *args, **kwargs))

    def call(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` on this thread, waited for (outside any event loop)."""
        return self._executor.submit(call, *args, **kwargs).result()

    def close(self) -> None:
        """Release the thread once its queued calls are done (a shared one is kept)."""
        if self._owned:
            self._executor.shutdown(wait=False)


class EnvThreads:
    """The threads of one env class's sessions: one each, or one shared when the class
    sets ``REQUIRES_SINGLE_THREAD_EXECUTOR``."""

    def __init__(self, environment_cls: type[Any]) -> None:
        single = bool(getattr(environment_cls, SINGLE_THREAD_FLAG, False))
        self._shared = _executor() if single else None

    def new(self) -> EnvThread:
        """The thread for a new session's env."""
        return EnvThread(self._shared)
