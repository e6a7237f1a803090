"""When a failed request is tried again, and how long to wait first (sync and async alike)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    ServerError,
    SessionLostError,
)

RETRYABLE_OPS = frozenset({"reset", "state"})
"""Operations that may be retried: a reset starts a new episode anyway and a state read
changes nothing. A step is never retried: the server may have applied it already."""


@dataclass(frozen=True)
class RetryPolicy:
    """How ``reset()`` and ``state()`` retry transient failures; ``step()`` never retries.

    Retried: a connection that could not be opened (refused, connect timeout, WebSocket
    handshake failure) or broke mid-request (whether a dead server refuses or resets is a
    matter of timing, and a reset or state read is safe to send again), and HTTP statuses in
    ``retry_statuses`` (also answering a WebSocket handshake). Never retried: a 4xx, a read
    timeout (the server may still be working on it), a lost WebSocket session (a new one
    would be a fresh environment), a server error message, a client-side validation error.

    ``attempts`` counts every try (1 disables retrying). Before retry ``n`` the client waits
    ``min(max_delay_s, base_delay_s * 2 ** (n - 1))`` less a random part of up to ``jitter``
    of it, so that many clients do not retry in lockstep. ``sleep`` replaces ``time.sleep``
    or ``asyncio.sleep`` (it may return an awaitable), for tests.
    """

    attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 2.0
    jitter: float = 0.5
    retry_statuses: frozenset[int] = frozenset({502, 503, 504})
    sleep: Callable[[float], Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int):
            raise TypeError("RetryPolicy.attempts must be an int")
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1 (1 means no retries)")
        if not (self.base_delay_s >= 0 and self.max_delay_s >= 0):  # NaN too
            raise ValueError("RetryPolicy delays must not be negative")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("RetryPolicy.jitter must be between 0 and 1")
        frozen = frozenset(self.retry_statuses)
        bad = sorted(s for s in frozen if not isinstance(s, int) or not 500 <= s <= 599)
        if bad:
            raise ValueError(
                f"RetryPolicy.retry_statuses must be 5xx statuses (a 4xx is never retried), "
                f"got {bad}"
            )
        object.__setattr__(self, "retry_statuses", frozen)

    @classmethod
    def never(cls) -> RetryPolicy:
        """A policy that tries every operation exactly once."""
        return cls(attempts=1)

    def delay(self, retry: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        if retry < 1:
            raise ValueError("retry counts from 1")
        full = min(self.max_delay_s, self.base_delay_s * 2.0 ** min(retry - 1, 60))
        return full * (1.0 - self.jitter * rand())

    def retryable(self, op: str, exc: BaseException) -> bool:
        """Whether ``exc`` from ``op`` is a transient failure worth another try."""
        if op not in RETRYABLE_OPS:
            return False
        if isinstance(exc, ServerError):
            return exc.status in self.retry_statuses
        if isinstance(exc, EnvTimeoutError):
            return exc.during_connect
        return isinstance(exc, EnvConnectionError) and not isinstance(exc, SessionLostError)

    def next_delay(self, op: str, exc: BaseException, attempt: int) -> float | None:
        """The wait before trying ``op`` again after try ``attempt`` failed, or None to give up.

        On giving up after several tries, the error records how many (``attempts``) and
        says so in its message.
        """
        if attempt < self.attempts and self.retryable(op, exc):
            return self.delay(attempt)
        if attempt > 1 and isinstance(exc, EnvgenRuntimeError):
            exc.attempts = attempt
            exc.args = (f"{exc.message} (gave up after {attempt} attempts)", *exc.args[1:])
        return None
