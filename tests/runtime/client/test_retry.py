"""RetryPolicy and the clients' retry loop, sync and async.

Real servers never answer 502/503/504 or refuse on cue, so the error paths use fakes (an
HTTP server that scripts its statuses, a closed port). Sleeps are injected and recorded:
backoff bounds are checked without waiting.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    ProtocolError,
    RetryPolicy,
    ServerError,
    ServerValidationError,
    SessionLostError,
)

from tests.runtime.clients import AsyncCounterEnv, CounterAction, CounterEnv
from tests.runtime.fakes import Reply, fake_http

OBS = {"observation": {"echoed": "", "total": 0, "step": 0}, "reward": None, "done": False}
STATE = {"step_count": 0}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def scripted(*statuses: int, ok: Any) -> Callable[[str, bytes], Reply]:
    """A route answering ``statuses`` in turn, then ``ok`` with 200 forever."""
    remaining = list(statuses)

    def route(path: str, body: bytes) -> Reply:
        if remaining:
            return Reply(remaining.pop(0), "unavailable", content_type="text/plain")
        return Reply(body=ok)

    return route


def perform(
    asynchronous: bool, url: str, op: str, retry: RetryPolicy, transport: str = "http"
) -> Any:
    """Run one operation on a fresh sync or async client and return its result."""
    if not asynchronous:
        with CounterEnv(url, transport=transport, retry=retry) as env:  # type: ignore[arg-type]
            if op == "reset":
                return env.reset()
            if op == "state":
                return env.state()
            return env.step(CounterAction(message="m"))

    async def go() -> Any:
        async with AsyncCounterEnv(url, transport=transport, retry=retry) as aenv:  # type: ignore[arg-type]
            if op == "reset":
                return await aenv.reset()
            if op == "state":
                return await aenv.state()
            return await aenv.step(CounterAction(message="m"))

    return asyncio.run(go())


KINDS = [pytest.param(False, id="sync"), pytest.param(True, id="async")]


# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"attempts": 0}, ValueError),
        ({"attempts": True}, TypeError),
        ({"base_delay_s": -1}, ValueError),
        ({"max_delay_s": -0.1}, ValueError),
        ({"base_delay_s": float("nan")}, ValueError),  # passed the old `< 0` check
        ({"max_delay_s": float("nan")}, ValueError),
        ({"jitter": 1.5}, ValueError),
        ({"jitter": float("nan")}, ValueError),
        ({"retry_statuses": {503, 429}}, ValueError),
        ({"retry_statuses": {404}}, ValueError),
    ],
)
def test_policy_checks_its_arguments(kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        RetryPolicy(**kwargs)


def test_policy_defaults_and_value_semantics() -> None:
    policy = RetryPolicy(retry_statuses=[503])  # type: ignore[arg-type]
    assert policy.retry_statuses == frozenset({503})
    assert RetryPolicy().retry_statuses == frozenset({502, 503, 504})
    assert RetryPolicy().attempts == 3 and RetryPolicy.never().attempts == 1
    assert RetryPolicy(sleep=print) == RetryPolicy()  # the sleep hook is not part of the value
    assert "sleep" not in repr(RetryPolicy(sleep=print))
    hash(RetryPolicy())


def test_delays_double_up_to_the_cap() -> None:
    exact = RetryPolicy(base_delay_s=0.1, max_delay_s=1.0, jitter=0.0)
    assert [exact.delay(n) for n in range(1, 7)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    full = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0, jitter=1.0)
    assert full.delay(3, rand=lambda: 0.0) == 4.0
    assert full.delay(3, rand=lambda: 0.999) == pytest.approx(0.004)
    assert RetryPolicy(jitter=0.5).delay(1000) <= 2.0  # no overflow for huge retry numbers
    with pytest.raises(ValueError):
        exact.delay(0)


def test_jittered_delays_stay_within_bounds() -> None:
    policy = RetryPolicy(base_delay_s=0.2, max_delay_s=1.0, jitter=0.5)
    for retry in range(1, 6):
        full = min(1.0, 0.2 * 2 ** (retry - 1))
        delays = [policy.delay(retry) for _ in range(200)]
        assert all(full * 0.5 <= d <= full for d in delays)
        assert len(set(delays)) > 1  # actually random


def _server_error(status: int | None, code: str | None = None) -> ServerError:
    return ServerError(status, "", "reset", code=code)


@pytest.mark.parametrize(
    ("op", "exc", "expected"),
    [
        ("reset", _server_error(503), True),
        ("state", _server_error(502), True),
        ("state", _server_error(504), True),
        ("step", _server_error(503), False),  # never a step
        ("reset", _server_error(500), False),
        ("reset", _server_error(429), False),  # never a 4xx
        ("reset", _server_error(None, "CAPACITY_REACHED"), False),
        ("reset", EnvConnectionError("refused", during_connect=True), True),
        ("step", EnvConnectionError("refused", during_connect=True), False),
        # reset and state are safe to send again when a connection broke mid-request
        ("reset", EnvConnectionError("dropped mid-request"), True),
        ("state", EnvConnectionError("connection reset by peer"), True),
        ("step", EnvConnectionError("dropped mid-request"), False),
        ("state", EnvTimeoutError("connect", during_connect=True), True),
        ("state", EnvTimeoutError("read"), False),
        ("state", SessionLostError("lost", during_connect=False), False),
        ("reset", ProtocolError("bad", received=""), False),
        ("reset", EnvValidationError("action", []), False),
        (
            "reset",
            ServerValidationError("reset request", [], status=422, body="", op="reset"),
            False,
        ),
        ("reset", ValueError("not ours"), False),
    ],
)
def test_what_is_retryable(op: str, exc: BaseException, expected: bool) -> None:
    assert RetryPolicy().retryable(op, exc) is expected


def test_giving_up_says_how_often_it_tried() -> None:
    policy = RetryPolicy(attempts=2)
    exc = _server_error(503)
    assert policy.next_delay("reset", exc, 1) is not None
    assert policy.next_delay("reset", exc, 2) is None
    assert exc.attempts == 2 and str(exc).endswith("(gave up after 2 attempts)")
    single = _server_error(503)
    assert RetryPolicy.never().next_delay("reset", single, 1) is None
    assert single.attempts == 1 and "gave up" not in str(single)


# --------------------------------------------------------------------------- the clients


@pytest.mark.parametrize("asynchronous", KINDS)
@pytest.mark.parametrize(
    ("op", "method", "path", "ok"),
    [("reset", "POST", "/reset", OBS), ("state", "GET", "/state", STATE)],
)
@pytest.mark.parametrize("statuses", [(503, 502), (504,)])
def test_gateway_errors_are_retried_with_backoff(
    asynchronous: bool, op: str, method: str, path: str, ok: Any, statuses: tuple[int, ...]
) -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(
        attempts=4, base_delay_s=0.5, max_delay_s=0.8, jitter=0.5, sleep=sleeps.append
    )
    with fake_http({(method, path): scripted(*statuses, ok=ok)}) as server:
        perform(asynchronous, server.url, op, policy)
        assert len(server.seen) == len(statuses) + 1
    assert len(sleeps) == len(statuses)
    bounds = [(0.25, 0.5), (0.4, 0.8)]
    for delay, (low, high) in zip(sleeps, bounds, strict=False):
        assert low <= delay <= high


@pytest.mark.parametrize("asynchronous", KINDS)
def test_retries_stop_after_the_last_attempt(asynchronous: bool) -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=3, sleep=sleeps.append)
    with fake_http({("POST", "/reset"): Reply(503, "down", content_type="text/plain")}) as server:
        with pytest.raises(ServerError) as info:
            perform(asynchronous, server.url, "reset", policy)
        assert len(server.seen) == 3
    assert len(sleeps) == 2
    assert info.value.status == 503 and info.value.attempts == 3
    assert "gave up after 3 attempts" in str(info.value)


@pytest.mark.parametrize("asynchronous", KINDS)
@pytest.mark.parametrize("status", [400, 404, 409, 429, 500])
def test_4xx_and_500_are_never_retried(asynchronous: bool, status: int) -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=5, sleep=sleeps.append)
    with fake_http({("GET", "/state"): Reply(status, "no", content_type="text/plain")}) as server:
        with pytest.raises(ServerError) as info:
            perform(asynchronous, server.url, "state", policy)
        assert len(server.seen) == 1
    assert sleeps == [] and info.value.status == status and info.value.attempts == 1


@pytest.mark.parametrize("asynchronous", KINDS)
def test_step_is_never_retried(asynchronous: bool) -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=5, sleep=sleeps.append)
    with fake_http({("POST", "/step"): scripted(503, ok=OBS)}) as server:
        with pytest.raises(ServerError) as info:
            perform(asynchronous, server.url, "step", policy)
        assert len(server.seen) == 1
    assert sleeps == [] and info.value.status == 503


@pytest.mark.parametrize("asynchronous", KINDS)
@pytest.mark.parametrize("transport", ["http", "websocket"])
@pytest.mark.parametrize("op", ["reset", "state"])
def test_refused_connections_are_retried(asynchronous: bool, transport: str, op: str) -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(
        attempts=4, base_delay_s=0.1, max_delay_s=0.15, jitter=0.0, sleep=sleeps.append
    )
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(EnvConnectionError) as info:
        perform(asynchronous, url, op, policy, transport)
    assert sleeps == pytest.approx([0.1, 0.15, 0.15])
    assert info.value.during_connect and info.value.attempts == 4
    assert "connection refused" in str(info.value)


def test_closing_during_a_retry_wait_ends_the_call_without_retrying() -> None:
    # The closed client's error is raised as it is: not handed to the retry decision, which
    # would count it as a failed attempt ("gave up after 2 attempts").
    url = f"http://127.0.0.1:{closed_port()}"
    clients: list[Any] = []
    policy = RetryPolicy(attempts=3, jitter=0.0, sleep=lambda delay: clients[0].close())
    clients.append(CounterEnv(url, transport="http", retry=policy))
    with pytest.raises(EnvgenRuntimeError) as info:
        clients[0].reset()
    assert "is closed" in str(info.value) and "gave up" not in str(info.value)
    assert type(info.value) is EnvgenRuntimeError and info.value.attempts == 1

    async def close_instead(delay: float) -> None:
        await clients[1].close()

    async def go() -> None:
        apolicy = RetryPolicy(attempts=3, jitter=0.0, sleep=close_instead)
        clients.append(AsyncCounterEnv(url, transport="http", retry=apolicy))
        with pytest.raises(EnvgenRuntimeError) as ainfo:
            await clients[1].reset()
        assert "is closed" in str(ainfo.value) and "gave up" not in str(ainfo.value)

    asyncio.run(go())


@pytest.mark.parametrize("asynchronous", KINDS)
@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_refused_step_is_not_retried(asynchronous: bool, transport: str) -> None:
    sleeps: list[float] = []
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(EnvConnectionError) as info:
        perform(asynchronous, url, "step", RetryPolicy(sleep=sleeps.append), transport)
    assert sleeps == [] and info.value.attempts == 1


@pytest.mark.parametrize("asynchronous", KINDS)
def test_websocket_handshake_503_is_retried(asynchronous: bool) -> None:
    # A gateway in front of the server answers the upgrade request with 503.
    sleeps: list[float] = []
    route = Reply(503, "starting", content_type="text/plain")
    with fake_http({("GET", "/ws"): route}, http11=True) as server:
        with pytest.raises(ServerError) as info:
            perform(
                asynchronous, server.url, "reset", RetryPolicy(sleep=sleeps.append), "websocket"
            )
        assert len(server.seen) == 3
    assert len(sleeps) == 2 and info.value.status == 503
    assert "unavailable" in str(info.value)


@pytest.mark.parametrize("asynchronous", KINDS)
def test_read_timeouts_are_not_retried(asynchronous: bool) -> None:
    sleeps: list[float] = []
    with fake_http({("GET", "/state"): Reply(body=STATE, delay_s=0.6)}) as server:
        with pytest.raises(EnvTimeoutError) as info:
            url = server.url
            if asynchronous:

                async def go() -> None:
                    policy = RetryPolicy(sleep=sleeps.append)
                    async with AsyncCounterEnv(
                        url, transport="http", read_timeout_s=0.2, retry=policy
                    ) as env:
                        await env.state()

                asyncio.run(go())
            else:
                policy = RetryPolicy(sleep=sleeps.append)
                with CounterEnv(url, transport="http", read_timeout_s=0.2, retry=policy) as env:
                    env.state()
        assert len(server.seen) == 1
    assert sleeps == [] and not info.value.during_connect and info.value.timeout_s == 0.2


def test_async_sleep_hook_is_awaited_and_default_sleeps_really_wait() -> None:
    slept: list[float] = []

    async def fake_sleep(delay: float) -> None:
        slept.append(delay)

    with fake_http({("GET", "/state"): scripted(503, ok=STATE)}) as server:
        perform(True, server.url, "state", RetryPolicy(sleep=fake_sleep))
    assert len(slept) == 1

    quick = RetryPolicy(base_delay_s=0.01, max_delay_s=0.01, jitter=0.0)
    for asynchronous in (False, True):
        with fake_http({("GET", "/state"): scripted(503, 503, ok=STATE)}) as server:
            assert perform(asynchronous, server.url, "state", quick).step_count == 0


def test_retries_are_logged_without_secrets(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    sleeps: list[float] = []
    with fake_http({("POST", "/reset"): scripted(503, ok=OBS)}) as server:
        env = CounterEnv(
            server.url,
            transport="http",
            default_headers={"Authorization": "Bearer log-secret"},
            retry=RetryPolicy(sleep=sleeps.append),
        )
        with env:
            env.reset()
    assert "reset failed (ServerError), retry 1 of 2" in caplog.text
    assert "log-secret" not in caplog.text


def test_client_rejects_a_non_policy() -> None:
    with pytest.raises(TypeError, match="RetryPolicy"):
        CounterEnv("http://127.0.0.1:9", retry=3)  # type: ignore[arg-type]
    env = CounterEnv("http://127.0.0.1:9")
    assert env.retry == RetryPolicy()
    env.close()
    with pytest.raises(EnvgenRuntimeError, match="closed"):
        env.reset()
