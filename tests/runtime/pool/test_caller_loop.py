"""pool/caller_loop.py: the blocking pool's loop runs in the caller's thread, and in keeper
turns while no call is made; a caller inside a running loop gets a thread of its own."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from envgen_runtime.pool import caller_loop
from envgen_runtime.pool.caller_loop import CallerLoop


@pytest.fixture
def loop() -> Iterator[CallerLoop]:
    runner = CallerLoop()
    try:
        yield runner
    finally:
        runner.close()


async def _thread_name() -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


def test_a_call_runs_on_the_caller_s_own_thread_and_returns_its_result(loop: CallerLoop) -> None:
    assert loop.run(_thread_name()) == threading.current_thread().name
    assert [loop.run(_thread_name()) for _ in range(3)] == [threading.current_thread().name] * 3


def test_a_call_s_error_is_raised_to_the_caller(loop: CallerLoop) -> None:
    async def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        loop.run(fails())
    assert loop.run(_thread_name())  # the loop goes on


def test_the_keeper_runs_the_loop_s_timers_while_no_call_is_made(loop: CallerLoop) -> None:
    fired = threading.Event()

    async def arm() -> None:  # a timer due after the call returned: only a keeper turn runs it
        asyncio.get_running_loop().call_later(0.2, fired.set)

    loop.run(arm())
    assert not fired.is_set()
    assert fired.wait(timeout=caller_loop.IDLE_S * 4), "no keeper turn ran the loop"


def test_a_long_call_is_not_interrupted_by_the_keeper(loop: CallerLoop) -> None:
    async def long() -> list[str]:
        seen = []
        for _ in range(int(caller_loop.IDLE_S * 2 / 0.05)):
            await asyncio.sleep(0.05)
            seen.append(threading.current_thread().name)
        return seen

    assert set(loop.run(long())) == {threading.current_thread().name}


def test_a_caller_inside_a_running_loop_gets_its_call_run_on_another_thread(
    loop: CallerLoop,
) -> None:
    async def notebook_cell() -> str:
        return loop.run(_thread_name())  # a blocking call from a loop's thread

    name = asyncio.run(notebook_cell())
    assert name != threading.current_thread().name
    assert loop.run(_thread_name()) == threading.current_thread().name


def test_an_interrupt_mid_call_cancels_the_call_instead_of_leaving_it_to_resume(
    loop: CallerLoop,
) -> None:
    ended: list[str] = []

    def interrupt() -> None:
        raise KeyboardInterrupt

    async def round_() -> None:
        asyncio.get_running_loop().call_later(0.05, interrupt)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        loop.run(round_())
    assert ended == ["cancelled"] and time.monotonic() - started < 10
    assert loop.run(_thread_name())


def test_close_stops_the_keeper_and_is_idempotent() -> None:
    runner = CallerLoop()
    runner.run(_thread_name())
    runner.close()
    runner.close()
    assert runner.closed
    assert not runner._keeper.is_alive()
