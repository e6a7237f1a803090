"""The blocking pool's event loop, run by the thread that calls it.

``EnvPool`` used to keep its loop running in a thread of its own and hand each call over
(``run_coroutine_threadsafe``): two thread wake-ups per call, each a full context switch on
a small VM, which cost a 16-env round more client CPU than all its frames' parsing. Here a
call runs the loop in the caller's own thread (``run_until_complete``), so a round costs no
hop at all.

Between calls nobody runs the loop, yet it has work: answering servers' pings (uvicorn drops
a session that leaves a ping unanswered for 20 s; a trainer may spend minutes on an update
between steps), the connections' keepalive timers, a lost server's replacement under way.
So a daemon thread, the keeper, takes the loop for a short turn (``TURN_S``) whenever no call
has been made for ``IDLE_S``; it never waits for a call to finish (it skips its turn), so a
pool stepped without pause never meets it, and a call that arrives during a turn waits at
most that turn.

A caller whose thread already runs an event loop (a notebook cell) cannot run a second one
there, so its call runs on a short-lived thread instead, the old hop, only for that case.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["CallerLoop"]

T = TypeVar("T")

IDLE_S = 1.0
"""How long the loop must have been left alone before the keeper takes a turn (seconds)."""
TURN_S = 0.02
"""How long one keeper turn runs the loop (seconds)."""


class CallerLoop:
    """An event loop run in turns: by each call's own thread, and by a keeper when idle."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._last_used = time.monotonic()
        self._stopping = threading.Event()
        self._keeper = threading.Thread(target=self._keep, name="envgen-pool-keeper", daemon=True)
        self._keeper.start()

    @property
    def closed(self) -> bool:
        """Whether `close` has run."""
        return self._loop.is_closed()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` to its end on this loop and return its result (or raise its error)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._run_here(coro)
        box: list[Any] = []

        def elsewhere() -> None:
            try:
                box.append((True, self._run_here(coro)))
            except BaseException as exc:  # handed back to the caller's thread
                box.append((False, exc))

        thread = threading.Thread(target=elsewhere, name="envgen-pool-call")
        thread.start()
        thread.join()
        ok, value = box[0]
        if not ok:
            raise value
        result: T = value
        return result

    def _run_here(self, coro: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            try:
                task = self._loop.create_task(coro)
                try:
                    return self._loop.run_until_complete(task)
                except BaseException:  # KeyboardInterrupt mid-round: end it, do not resume it
                    if not task.done():
                        task.cancel()
                        with contextlib.suppress(BaseException):
                            self._loop.run_until_complete(task)
                    raise
            finally:
                self._last_used = time.monotonic()

    def _keep(self) -> None:
        while not self._stopping.wait(IDLE_S / 2):
            if time.monotonic() - self._last_used < IDLE_S:
                continue
            if not self._lock.acquire(blocking=False):  # a call is running the loop
                continue
            try:
                if not self._loop.is_closed():
                    self._loop.run_until_complete(asyncio.sleep(TURN_S))
            finally:
                self._lock.release()

    def close(self) -> None:
        """Stop the keeper and close the loop (after the last call); idempotent."""
        self._stopping.set()
        self._keeper.join()
        with self._lock:
            if not self._loop.is_closed():
                self._loop.close()
