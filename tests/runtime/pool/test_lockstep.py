"""The pool's lock-step round (``pool.lockstep``) over real echo_env servers, and its parts.

A round sends every ready slot's step without a task per slot, encodes the round's actions
in one call when it can, and leaves the rest of a step (resets due, invalid actions) to the
usual path, so a round's results are each slot's as if it had stepped alone.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any, cast

import pytest
from envgen_runtime import AsyncEnvPool, EnvValidationError
from envgen_runtime.client.base import ClientOptions
from envgen_runtime.core.jsonbody import compact_json
from envgen_runtime.transport.aio_protocol import Round
from envgen_runtime.transport.aio_turns import TurnLock

from generated.echo_env import AsyncEchoEnv, AsyncEchoEnvPool, EchoAction, EchoEnv
from generated.echo_env.client import _ACTION
from tests.helpers import REPO

LEAN = [*EchoEnv._spec().server_command, "--backend", "lean"]
OPTIONS: dict[str, Any] = {"command": LEAN, "cwd": str(REPO)}


def _pool(size: int, **options: Any) -> AsyncEnvPool[Any, Any, Any]:
    return AsyncEchoEnvPool(size, provider_options=dict(OPTIONS), **options)


class _CountingTasks:
    """Counts the tasks a running loop creates (``loop.set_task_factory``)."""

    def __init__(self) -> None:
        self.created = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        self.created += 1
        return asyncio.Task(coro, loop=loop, **kwargs)


@contextlib.contextmanager
def _counting_tasks() -> Iterator[_CountingTasks]:
    counter = _CountingTasks()
    asyncio.get_running_loop().set_task_factory(counter)
    try:
        yield counter
    finally:
        asyncio.get_running_loop().set_task_factory(None)


@pytest.mark.parametrize(("transport", "per_server"), [("websocket", 3), ("http", 1)])
def test_a_round_steps_every_slot_without_a_task_per_slot(transport: str, per_server: int) -> None:
    size = 2 * per_server

    async def play() -> tuple[int, list[str], list[int]]:
        options = cast("ClientOptions", {"transport": transport})
        async with _pool(size, sessions_per_server=per_server, client_options=options) as pool:
            await pool.reset()
            words = [f"word {i}" for i in range(size)]
            with _counting_tasks() as counter:
                for _ in range(3):
                    results = await pool.step([EchoAction(message=w) for w in words])
            echoed = [r.observation.echoed_message for r in results if r.ok]
            servers = [info.server for info in pool.slots]
            return counter.created, echoed, [s for s in servers if s is not None]

    created, echoed, servers = asyncio.run(play())
    assert echoed == [f"word {i}" for i in range(size)]
    assert sorted(set(servers)) == [0, 1]  # two servers, per_server sessions each
    assert created == 0, f"3 rounds of {size} slots created {created} tasks"


def test_an_invalid_action_is_its_slots_error_and_the_round_goes_on() -> None:
    bad = EchoAction.model_construct(message=5)  # type: ignore[arg-type]

    async def play() -> list[Any]:
        async with _pool(3, sessions_per_server=3) as pool:
            await pool.reset()
            first = await pool.step([EchoAction(message="a"), bad, EchoAction(message="c")])
            again = await pool.step([EchoAction(message=m) for m in "xyz"])
            return [*first, *again]

    results = asyncio.run(play())
    assert [r.ok for r in results] == [True, False, True, True, True, True]
    error = results[1].error
    assert isinstance(error, EnvValidationError) and not results[1].action_dropped
    assert "message" in str(error) and "nothing was sent" in str(error)
    assert [r.observation.echoed_message for r in results[3:]] == ["x", "y", "z"]


def test_slots_due_a_reset_run_beside_the_round() -> None:
    async def play() -> list[Any]:
        async with _pool(4, sessions_per_server=4) as pool:
            await pool.reset(seeds=0)
            await pool.reset(slots=[1, 3])  # then step all: two in the round, two after a reset
            pool._slots[1].needs_reset = pool._slots[3].needs_reset = True
            return await pool.step([EchoAction(message=m) for m in "abcd"])

    results = asyncio.run(play())
    assert [r.reset for r in results] == [False, True, False, True]
    assert [r.action_dropped for r in results] == [False, True, False, True]
    assert results[0].observation.echoed_message == "a"
    assert results[2].observation.echoed_message == "c"


def test_encode_texts_sends_what_encode_sends_in_one_batch() -> None:
    actions = [EchoAction(message=m) for m in ("", 'é \u2028 "q"', "x" * 1000)]
    assert _ACTION.encode_texts(actions) == [compact_json(_ACTION.encode(a)) for a in actions]
    with pytest.raises(EnvValidationError, match="message"):
        _ACTION.encode_texts([actions[0], EchoAction.model_construct(message=5)])  # type: ignore[arg-type]


def test_step_texts_batches_only_the_generated_payload_hook() -> None:
    actions = [EchoAction(message="a"), EchoAction(message="b")]
    client = AsyncEchoEnv("http://127.0.0.1:9")
    assert client._step_texts(actions) == ['{"message":"a"}', '{"message":"b"}']
    assert client._step_texts([EchoAction.model_construct(message=1)]) is None  # type: ignore[arg-type]

    class Shouting(AsyncEchoEnv):
        def _step_payload(self, action: EchoAction) -> dict[str, Any]:
            return {"message": action.message.upper()}

    assert Shouting("http://127.0.0.1:9")._step_texts(actions) is None  # its own hook is used


def test_turn_lock_try_acquire_takes_only_a_free_lock_nobody_waits_for() -> None:
    async def check() -> None:
        lock = TurnLock()
        assert lock.try_acquire() and lock.locked()
        assert not lock.try_acquire()
        waiter = asyncio.ensure_future(lock.acquire())
        await asyncio.sleep(0)
        lock.release()  # the waiter is woken, but has not run yet
        assert not lock.try_acquire()  # its turn comes first
        await waiter
        lock.release()
        assert lock.try_acquire()

    asyncio.run(check())


class _Member:
    def __init__(self, ready: bool) -> None:
        self.round: Round | None = None
        self.ready = ready

    def readable(self) -> bool:
        return self.ready

    def arrived_in(self, round_: Round) -> None:
        round_.arrived(self)


def test_round_hands_over_each_member_as_it_arrives_then_its_deadline() -> None:
    async def check() -> tuple[list[list[int]], float, list[int], float]:
        loop = asyncio.get_running_loop()
        members = [_Member(False), _Member(True), _Member(False), _Member(False)]
        round_ = Round(loop, loop.time() + 5.0)
        for key, member in enumerate(members):
            round_.expect(member, key)
        round_.ready_now(7)  # nothing to wait for (a request that was never sent)
        assert members[1].round is None  # readable already: not waited for
        loop.call_later(0.05, members[2].round.arrived, members[2])  # type: ignore[union-attr]
        loop.call_later(0.10, members[0].round.arrived, members[0])  # type: ignore[union-attr]
        batches = []
        started = loop.time()
        while batch := await round_.arrivals():
            batches.append(batch)
            if batch == [0]:  # the last one arrives while the caller reads this batch
                members[3].round.arrived(members[3])  # type: ignore[union-attr]
        woke = loop.time() - started
        round_.close()
        round_.arrived(members[0])  # a late call after the round is harmless
        assert await round_.arrivals() == []
        late = Round(loop, loop.time() + 0.1)
        late.expect(_Member(False), 3)
        started = loop.time()
        never = await late.arrivals()
        expired_after = loop.time() - started
        assert late.expired
        late.close()
        return batches, woke, never, expired_after

    batches, woke, never, expired_after = asyncio.run(check())
    assert batches == [[1, 7], [2], [0], [3]]  # arrival order, each handed over once
    assert 0.09 < woke < 1.0
    assert never == [] and 0.09 < expired_after < 1.0  # the caller reads 3 as a timeout


def test_round_settles_replies_in_their_read_callbacks_and_wakes_its_caller_once() -> None:
    async def check() -> tuple[list[int], list[list[int]], int]:
        loop = asyncio.get_running_loop()
        settled: list[int] = []

        def settle(key: int) -> bool:  # keys 0 and 2 read whole in the callback, 1 does not
            if key == 1:
                return False
            settled.append(key)
            return True

        members = [_Member(False) for _ in range(3)]
        round_ = Round(loop, loop.time() + 5.0, settle)
        for key, member in enumerate(members):
            round_.expect(member, key)
        futures = 0
        create_future = loop.create_future

        def counting() -> asyncio.Future[Any]:
            nonlocal futures
            futures += 1
            return create_future()

        loop.create_future = counting  # type: ignore[method-assign]
        for delay, key in ((0.02, 2), (0.04, 0), (0.06, 1)):
            loop.call_later(delay, members[key].round.arrived, members[key])  # type: ignore[union-attr]
        batches = []
        while batch := await round_.arrivals():
            batches.append(batch)
        round_.close()
        return settled, batches, futures

    settled, batches, waits = asyncio.run(check())
    assert settled == [2, 0]  # in arrival order, in the callbacks: never handed over
    assert batches == [[1]]  # left by settle: handed to the caller to read
    assert waits == 1  # woken once, by 1: settling 2 and 0 woke nobody


def test_round_raises_what_settle_raised_and_stops_settling_at_its_deadline() -> None:
    async def check() -> tuple[str, list[int]]:
        loop = asyncio.get_running_loop()

        def broken(key: int) -> bool:
            raise RuntimeError(f"settle {key} broke")

        member = _Member(False)
        round_ = Round(loop, loop.time() + 5.0, broken)
        round_.expect(member, 4)
        loop.call_soon(member.arrived_in, round_)
        with pytest.raises(RuntimeError) as raised:
            await round_.arrivals()
        round_.close()
        calls: list[int] = []
        late = Round(loop, loop.time() + 0.05, lambda key: bool(calls.append(key)) or True)
        slow = _Member(False)
        late.expect(slow, 5)
        assert await late.arrivals() == []  # the deadline passed: the caller reads 5 itself
        late.arrived(slow)  # arriving now, it is not settled behind the caller's back
        late.close()
        return str(raised.value), calls

    message, calls = asyncio.run(check())
    assert message == "settle 4 broke"
    assert calls == []


def test_http_rounds_read_every_reply_however_they_arrive() -> None:
    # A reply that arrives while the round reads another (an HTTP reply whose body comes
    # after its head makes the read wait) must still be read in this round: left unread,
    # its slot would be stepped again while its transport is still held, and hang.
    async def play() -> list[str]:
        options = cast("ClientOptions", {"transport": "http"})
        async with AsyncEchoEnvPool(
            2, sessions_per_server=1, client_options=options, provider_options={"cwd": str(REPO)}
        ) as pool:  # openenv's app: its replies come in more pieces than the lean one's
            await pool.reset()
            echoed = []
            for i in range(300):
                words = [f"{i} a", f"{i} b"]
                results = await asyncio.wait_for(
                    pool.step([EchoAction(message=w) for w in words]), 10.0
                )
                echoed += [r.observation.echoed_message for r in results if r.ok]
            return echoed

    echoed = asyncio.run(play())
    assert echoed == [f"{i} {s}" for i in range(300) for s in "ab"]
