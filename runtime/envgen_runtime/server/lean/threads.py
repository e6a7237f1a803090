"""The thread an environment's sync methods run on, off the event loop.

An env's ``reset``/``step`` are plain functions that may block (a simulator step, a
subprocess, a sleep); run on the event loop, one slow env would stall every other session on
the server. So each env gets one thread of its own for its whole life: it is constructed,
reset, stepped and closed there, one call at a time, and the loop awaits each call. This is
what openenv 0.10's WebSocket handler does (``_create_session``,
``_run_in_session_executor``: a single-worker ``ThreadPoolExecutor`` per session), and for
the same reason: a pooled thread per call (starlette's ``run_in_threadpool``) would call one
env object from whichever worker is free, which thread-affine libraries (Playwright's sync
API and greenlet, sqlite3 connections, simulators' GL contexts) refuse. A class that sets
``REQUIRES_SINGLE_THREAD_EXECUTOR`` (openenv's flag) gets one thread shared by all its
sessions, as on openenv. ``reset_async``/``step_async``, when the env defines them, are
awaited on the loop instead: they are the env's way of saying it does not block.

The price is one thread hop per call (a wake-up of the thread, then of the loop), which
openenv pays too: about 9 us of CPU per call with ``EnvThread`` against 20 with
``run_in_executor`` (uvloop) when the call returns at once, but when the loop has gone to
sleep before the result comes (any real step), both wake-ups are full context switches: on
``benchmarks/bench_serve.py``'s echo_env the hop is most of the lean server's CPU per step.
An env that never blocks (its steps are computation of microseconds to a few milliseconds,
with no I/O, sleeps or locks) can skip the hop: a class that sets ``RUNS_ON_EVENT_LOOP =
True`` has its sync methods called on the event loop itself (``OnLoop``), one at a time, as
an env defining ``step_async`` has; openenv's app does not know the flag and hops as before.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
Done = Callable[[Any, BaseException | None], None]

SINGLE_THREAD_FLAG = "REQUIRES_SINGLE_THREAD_EXECUTOR"
"""openenv's class attribute: every session of the class on one shared thread."""

ON_LOOP_FLAG = "RUNS_ON_EVENT_LOOP"
"""envgen's class attribute: the env never blocks, so its sync methods run on the loop."""


class Runner(Protocol):
    """Where an env's sync methods run: its own thread (``EnvThread``) or the loop (``OnLoop``)."""

    async def run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)``, awaited from the loop."""
        ...

    def call(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)``, waited for (outside any event loop)."""
        ...

    def close(self) -> None:
        """The env is gone: release what runs its calls."""
        ...


class OnLoop:
    """The runner of an env that sets ``RUNS_ON_EVENT_LOOP``: each call made in place, on the
    loop's thread (one at a time, as the loop runs one thing at a time), with no hop."""

    async def run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` here and now."""
        return call(*args, **kwargs)

    def call(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` here and now."""
        return call(*args, **kwargs)

    def close(self) -> None:
        """Nothing to release."""


class EnvThread:
    """One env's thread: `run` calls there and awaits the result; `close` lets it go.

    A single-worker ``ThreadPoolExecutor`` in behaviour (one thread, calls in the order they
    came), built on a ``SimpleQueue`` and ``call_soon_threadsafe`` because every step pays
    for it: a hop costs about 9 us of CPU against ``run_in_executor``'s 20 (uvloop; 15
    against 26 on asyncio's loop), whose ``concurrent.futures.Future`` chained to an asyncio
    one takes two more locked callback rounds. The thread is a daemon, so an env
    stuck in a step cannot keep a stopped server's process alive.
    """

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Done] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="envgen-env", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (item := self._calls.get()) is not None:
            call, done = item
            try:
                result = call()
            except BaseException as exc:  # handed to the caller, as an executor does
                done(None, exc)
            else:
                done(result, None)

    async def run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` on this thread, awaited from the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def done(result: Any, exc: BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_settle, future, result, exc)

        self._calls.put((functools.partial(call, *args, **kwargs), done))
        return await future

    def call(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` on this thread, waited for (outside any event loop)."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def done(result: Any, exc: BaseException | None) -> None:
            if exc is None:
                future.set_result(result)
            else:
                future.set_exception(exc)

        self._calls.put((functools.partial(call, *args, **kwargs), done))
        return future.result()

    def close(self) -> None:
        """Let the thread end once the calls queued before are done."""
        self._calls.put(None)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.cancelled():  # the awaiting task was cancelled (a server shutting down)
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)


def _runs_on_loop(environment_cls: type[Any]) -> bool:
    return getattr(environment_cls, ON_LOOP_FLAG, False) is True


def runner(environment_cls: type[Any]) -> Runner:
    """Where one env of `environment_cls` runs: the loop (``RUNS_ON_EVENT_LOOP``) or a thread."""
    return OnLoop() if _runs_on_loop(environment_cls) else EnvThread()


class EnvThreads:
    """The runners of one env class's sessions: a thread each, one thread shared when the
    class sets ``REQUIRES_SINGLE_THREAD_EXECUTOR``, or the loop when it sets
    ``RUNS_ON_EVENT_LOOP`` (which wins: on the loop every call is on one thread anyway),
    kept until `close`."""

    def __init__(self, environment_cls: type[Any]) -> None:
        self._class = environment_cls
        single = bool(getattr(environment_cls, SINGLE_THREAD_FLAG, False))
        self._shared: Runner | None = None
        if single or _runs_on_loop(environment_cls):
            self._shared = runner(environment_cls)

    def new(self) -> Runner:
        """The runner for a new session's env."""
        return self._shared if self._shared is not None else runner(self._class)

    def release(self, thread: Runner) -> None:
        """A session's end: its own thread goes (the shared one stays)."""
        if thread is not self._shared:
            thread.close()

    def close(self) -> None:
        """The app's end: the shared thread goes too."""
        if self._shared is not None:
            self._shared.close()
