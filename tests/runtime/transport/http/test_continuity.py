"""The HTTP engine's continuity checks learn only from replies that are results.

A reply that fails (not a result, or a failed GET /state of the engine's own) is that call's
failure: nothing drawn from it may refuse, or stop checking, later calls (issue 23 item 4).
Fakes, because these are the replies no real server sends on purpose; every case runs
through both shells, which share the engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from envgen_runtime import AsyncHttpTransport, EnvgenRuntimeError, HttpTransport, ProtocolError

from tests.runtime.fakes import Reply, Route, fake_http

SHELLS = pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
RESULT = {"observation": {"echoed": "x"}, "reward": 0.0, "done": False}


def play(asynchronous: bool, url: str, ops: list[str]) -> list[Any]:
    """Each op's reply (or runtime error) on one transport of either shell."""
    if not asynchronous:
        transport = HttpTransport(url, timeout_s=5.0)
        outcomes: list[Any] = []
        try:
            for op in ops:
                try:
                    outcomes.append(transport.request(op, {}))  # type: ignore[arg-type]
                except EnvgenRuntimeError as exc:
                    outcomes.append(exc)
        finally:
            transport.close()
        return outcomes

    async def go() -> list[Any]:
        transport = AsyncHttpTransport(url, timeout_s=5.0)
        outcomes: list[Any] = []
        try:
            for op in ops:
                try:
                    outcomes.append(await transport.request(op, {}))  # type: ignore[arg-type]
                except EnvgenRuntimeError as exc:
                    outcomes.append(exc)
        finally:
            await transport.close()
        return outcomes

    return asyncio.run(go())


def replies(*answers: Reply) -> Callable[[str, bytes], Reply]:
    """A route answering ``answers`` in turn, then the last one for ever."""
    queue: Iterator[Reply] = iter(answers)
    last = answers[-1]

    def route(path: str, body: bytes) -> Reply:
        return next(queue, last)

    return route


def states(seen: list[tuple[str, str, bytes, dict[str, str]]]) -> int:
    return sum(1 for method, path, _, _ in seen if (method, path) == ("GET", "/state"))


@SHELLS
def test_a_step_reply_that_is_no_result_is_not_counted(asynchronous: bool) -> None:
    """The server did not act on the step its wrong-shape reply answers: step_count stays
    0. That is no sign of a stateless server, and later calls are not refused."""
    count = {"steps": 0}

    def step(path: str, body: bytes) -> Reply:
        count["steps"] += 1
        if count["steps"] == 1:
            return Reply(body={"unexpected": True})  # not acted on
        return Reply(body=RESULT)

    routes: dict[tuple[str, str], Route] = {
        ("POST", "/reset"): Reply(body=RESULT),
        ("POST", "/step"): step,
        ("GET", "/state"): lambda path, body: Reply(body={"step_count": count["steps"] - 1}),
    }
    with fake_http(routes) as server:
        outcomes = play(asynchronous, server.url, ["reset", "step", "state", "reset", "step"])
        assert outcomes[1] == {"unexpected": True}  # the caller's parse says what is wrong
        assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
        assert states(server.seen) == 2  # the client's own, and the check after step 2


@SHELLS
def test_a_failed_state_check_decides_nothing(asynchronous: bool) -> None:
    """A GET /state of the engine's that fails once does not make it trust the server for
    good: the next step checks again (and finds a server without state)."""
    routes: dict[tuple[str, str], Route] = {
        ("POST", "/reset"): Reply(body=RESULT),
        ("POST", "/step"): Reply(body=RESULT),
        ("GET", "/state"): replies(Reply(500, b'{"detail":"boom"}'), Reply(body={"step_count": 0})),
    }
    with fake_http(routes) as server:
        outcomes = play(asynchronous, server.url, ["reset", "step", "step"])
        assert outcomes[1] == RESULT
        assert isinstance(outcomes[2], ProtocolError), outcomes[2]
        assert "transport='websocket'" in outcomes[2].message


@SHELLS
def test_a_server_without_state_is_trusted(asynchronous: bool) -> None:
    """No /state at all (404): nothing to compare, and no GET /state after every step."""
    routes = {("POST", "/reset"): Reply(body=RESULT), ("POST", "/step"): Reply(body=RESULT)}
    with fake_http(routes) as server:
        outcomes = play(asynchronous, server.url, ["reset", "step", "step", "step"])
        assert outcomes[1:] == [RESULT] * 3
        assert states(server.seen) == 1


@SHELLS
def test_a_stateless_verdict_lasts_until_the_next_reset(asynchronous: bool) -> None:
    """Step and state are refused without a request; a reset is sent, and the new
    episode's first step is checked again."""
    routes = {
        ("POST", "/reset"): Reply(body=RESULT),
        ("POST", "/step"): Reply(body=RESULT),
        ("GET", "/state"): Reply(body={"step_count": 0}),
    }
    with fake_http(routes) as server:
        ops = ["reset", "step", "state", "step", "reset", "step"]
        outcomes = play(asynchronous, server.url, ops)
        assert [type(o).__name__ for o in outcomes] == [
            "dict",
            "ProtocolError",
            "ProtocolError",
            "ProtocolError",
            "dict",
            "ProtocolError",
        ]
        assert "nothing was sent" in outcomes[2].message
        sent = [(method, path) for method, path, _, _ in server.seen]
        assert sent == [("POST", "/reset"), ("POST", "/step"), ("GET", "/state")] * 2
