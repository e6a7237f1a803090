"""An asyncio lock a lock-step round can take without awaiting.

The asyncio transports serialise requests with a lock (replies are matched to requests by
order). The pool's lock-step rounds send on dozens of sessions in one pass with no coroutine
per session, so they take each session's turn with ``try_acquire``, which never suspends,
and fall back to the awaiting path when the turn is taken. Imported only when a transport
makes its lock (this module imports asyncio, which ``import envgen_runtime`` does not).
"""

from __future__ import annotations

import asyncio

__all__ = ["TurnLock"]


class TurnLock(asyncio.Lock):
    """``asyncio.Lock`` with ``try_acquire``: the same fast path ``acquire`` takes, as a call."""

    def try_acquire(self) -> bool:
        """Take the lock if it is free and no task waits for it; never suspends."""
        waiters = self._waiters
        if self.locked() or (waiters and not all(w.cancelled() for w in waiters)):
            return False
        self._locked = True
        return True
