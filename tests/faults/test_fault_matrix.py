"""The fault matrix: fault x transport x sync/async against the project's own fault server.

Each case: ``reset()`` (works), ``step()`` (meets the fault: the expected exception class, or
a result, within a time bound), then ``state()`` (what the client does afterwards: a state,
or the expected exception), then recovery: ``reset()`` and ``step()`` work again (except
against a stateless HTTP server, where each episode's first step is refused).

Bounds are the limit that applies plus a margin for a loaded 2-core CI machine; they still
catch the defects of issue 11 (an HTTP trickle took 13 s with a 2 s timeout, a frozen sync
WebSocket 5.25 s with 3 s).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    ProtocolError,
    RetryPolicy,
    ServerError,
    ServerValidationError,
    SessionLostError,
)
from envgen_runtime.core.spec import TransportName

from tests.runtime.clients import AsyncCounterEnv, CounterAction, CounterEnv

from .conftest import fault_url

TIMEOUT_S = 1.0
MARGIN_S = 1.0
FAST_S = 2.0  # anything that does not wait for a timeout
RETRY = RetryPolicy(attempts=3, base_delay_s=0.05, max_delay_s=0.1)


@dataclass(frozen=True)
class Row:
    """One fault's expected outcome on one transport."""

    fault: str
    transport: TransportName
    raises: type[EnvgenRuntimeError] | None  # what step() raises (None: it returns)
    after: type[EnvgenRuntimeError] | None  # what state() raises next (None: it returns)
    bound_s: float = FAST_S
    recovers: bool = True
    timeout_s: float = TIMEOUT_S


TIMED = TIMEOUT_S + MARGIN_S
ROWS = [
    # -------------------------------------------------------------- HTTP (stateful)
    Row("ok", "http", None, None),
    Row("malformed", "http", ProtocolError, None),
    Row("shape", "http", ProtocolError, None),
    Row("503twice", "http", None, None),  # the reset is retried past two 503s
    Row("500", "http", ServerError, None),
    Row("422", "http", ServerValidationError, None),
    Row("slow", "http", EnvTimeoutError, None, TIMED),
    Row("trickle", "http", EnvTimeoutError, None, TIMED),
    Row("frozen", "http", EnvTimeoutError, None, TIMED),
    Row("crash", "http", EnvConnectionError, None),
    Row("closed", "http", EnvConnectionError, None),
    Row("extra", "http", None, None),
    Row("big", "http", None, None, 6.0, timeout_s=5.0),
    Row("stateless", "http", ProtocolError, ProtocolError, recovers=False),
    # -------------------------------------------------------------- WebSocket
    Row("ok", "websocket", None, None),
    Row("malformed", "websocket", ProtocolError, SessionLostError),
    Row("shape", "websocket", ProtocolError, None),
    Row("503twice", "websocket", None, None),  # the handshake is retried past two 503s
    Row("500", "websocket", ServerError, None),
    Row("422", "websocket", ServerValidationError, None),
    Row("slow", "websocket", EnvTimeoutError, SessionLostError, TIMED),
    Row("trickle", "websocket", EnvTimeoutError, SessionLostError, TIMED),
    Row("frozen", "websocket", EnvTimeoutError, SessionLostError, TIMED),
    Row("crash", "websocket", SessionLostError, SessionLostError),
    Row("closed", "websocket", SessionLostError, SessionLostError),
    Row("wrongtype", "websocket", ProtocolError, SessionLostError),
    Row("error", "websocket", ServerError, None),
    Row("extra", "websocket", None, None),
    Row("huge", "websocket", ProtocolError, SessionLostError, 6.0, timeout_s=5.0),
    Row("big", "websocket", None, None, 6.0, timeout_s=5.0),
    Row("stateless", "websocket", None, None),  # per-connection environments are fine
]


def _ids(row: Row) -> str:
    return f"{row.transport}-{row.fault}"


def _check_step(row: Row, outcome: Any, elapsed: float) -> None:
    assert elapsed < row.bound_s, f"step took {elapsed:.2f} s, bound {row.bound_s} s"
    if row.raises is None:
        assert not isinstance(outcome, BaseException), f"step raised {outcome!r}"
        assert outcome.observation.echoed == "hi" or row.fault == "big"
        if row.fault == "extra":
            assert outcome.extra["extra_top"] == "kept"
            assert outcome.metadata == {"source": "faultserver"}
        return
    assert type(outcome) is row.raises, f"expected {row.raises.__name__}, got {outcome!r}"
    assert outcome.message.startswith("step failed: "), outcome.message
    if row.fault == "shape":
        assert isinstance(outcome, ProtocolError)
        assert outcome.received == '{"unexpected": true}'
    if row.fault == "huge":
        assert "max_message_bytes" in outcome.message
        assert "server closed" not in outcome.message
    if row.fault == "stateless":
        assert "transport='websocket'" in outcome.message


def _check_after(row: Row, outcome: Any) -> None:
    if row.after is None:
        assert not isinstance(outcome, BaseException), f"state() raised {outcome!r}"
    else:
        assert type(outcome) is row.after, f"state(): expected {row.after}, got {outcome!r}"


@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_sync(faultserver: str, row: Row) -> None:
    url = fault_url(faultserver, row.fault)
    options: dict[str, Any] = {"request_timeout_s": row.timeout_s, "retry": RETRY}
    with CounterEnv(url, transport=row.transport, **options) as env:
        env.reset()
        started = time.monotonic()
        try:
            outcome: Any = env.step(CounterAction(message="hi"))
        except EnvgenRuntimeError as exc:
            outcome = exc
        _check_step(row, outcome, time.monotonic() - started)
        try:
            after: Any = env.state()
        except EnvgenRuntimeError as exc:
            after = exc
        _check_after(row, after)
        if row.recovers:
            env.reset()
            assert env.step(CounterAction(message="again")).observation.echoed == "again"
        else:  # a reset is let through, and the new episode's first step is refused again
            env.reset()
            with pytest.raises(type(outcome)):
                env.step(CounterAction(message="again"))
        started = time.monotonic()
    assert time.monotonic() - started < FAST_S, "close() must not wait on a dead server"


@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_async(faultserver: str, row: Row) -> None:
    async def scenario() -> None:
        url = fault_url(faultserver, row.fault)
        env = AsyncCounterEnv(
            url, transport=row.transport, request_timeout_s=row.timeout_s, retry=RETRY
        )
        try:
            await env.reset()
            started = time.monotonic()
            try:
                outcome: Any = await env.step(CounterAction(message="hi"))
            except EnvgenRuntimeError as exc:
                outcome = exc
            _check_step(row, outcome, time.monotonic() - started)
            try:
                after: Any = await env.state()
            except EnvgenRuntimeError as exc:
                after = exc
            _check_after(row, after)
            if row.recovers:
                await env.reset()
                result = await env.step(CounterAction(message="again"))
                assert result.observation.echoed == "again"
            else:
                await env.reset()
                with pytest.raises(type(outcome)):
                    await env.step(CounterAction(message="again"))
        finally:
            started = time.monotonic()
            await env.close()
            assert time.monotonic() - started < FAST_S, "close() must not wait on a dead server"

    asyncio.run(scenario())
