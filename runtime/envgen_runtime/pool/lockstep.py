"""The pool's lock-step round: every slot's step sent in one pass, replies read as they come.

``gather`` over one coroutine per slot costs a task, a lock, a future and two wake-ups per
slot and step. Here the round's actions are validated and encoded in one pydantic call each
way (when the client class is generated: ``ClientCore._step_texts``; else, or when one is
invalid, each on its own, so the invalid one gets its error), each frame is written at once
(``post_step`` of the asyncio transports); then one ``Round`` (one deadline timer) waits for
them all. A reply that is read whole once it arrived (a WebSocket message) is parsed in the
read callback that brought it, as ``request`` parses it (the same ``Flow``), so results and
errors match a slot stepped alone and the round's task wakes once, when the last is in;
any other (an HTTP reply, whose body may come after its head) is handed to the task as it
arrives and read there. Parsing while the other replies are on their way keeps the servers'
next round from waiting on the client parsing the whole round after its last reply.
A slot whose request cannot be split (no session open yet, another request holding it, a
transport with no ``post_step``) gets None: the pool steps it the usual way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import EnvgenRuntimeError
from ..core.result import StepResult

if TYPE_CHECKING:
    from ..transport.base import PostedStep
    from .slots import Slot

__all__ = ["Reply", "step_round"]

Reply = StepResult[Any] | EnvgenRuntimeError | None
"""A slot's outcome of a round: its result, the error its step raised, or None (not sent)."""


async def step_round(steps: Sequence[tuple[Slot, Any]]) -> list[Reply]:
    """Step each ``(slot, action)`` (slots with a client) in one round; one reply per pair."""
    import asyncio

    from ..transport.aio_protocol import Round

    loop = asyncio.get_running_loop()
    replies: list[Reply] = [None] * len(steps)
    posted: dict[int, PostedStep] = {}  # by step index, until its reply is read
    timeout_s = 0.0
    texts = _batch_texts(steps)

    def settle(index: int) -> bool:
        """Read a reply in the read callback that brought it, when it reads whole (True)."""
        sent = posted[index]
        if not sent.settles_on_arrival:
            return False
        del posted[index]
        replies[index] = _read_now(steps[index][0], sent)
        return True

    try:
        for index, (slot, action) in enumerate(steps):
            client = slot.client
            assert client is not None
            post = getattr(client.transport, "post_step", None)
            if post is None:
                continue
            try:
                sent = post(client._step_payload(action) if texts is None else texts[index])
            except EnvgenRuntimeError as exc:
                replies[index] = exc
                continue
            if sent is not None:
                posted[index] = sent
                timeout_s = max(timeout_s, sent.timeout_s)
        round_ = Round(loop, loop.time() + timeout_s, settle)
        try:
            for index, sent in posted.items():
                sent.join(round_, index)
            while ready := await round_.arrivals():
                for index in ready:
                    replies[index] = await _finished(steps[index][0], posted.pop(index))
            for index in list(posted):  # past the deadline: each read raises its timeout
                replies[index] = await _finished(steps[index][0], posted.pop(index))
        finally:
            round_.close()
    except BaseException:
        for sent in posted.values():
            sent.abandon()
        raise
    return replies


def _read_now(slot: Slot, sent: PostedStep) -> Reply:
    """The reply of a step that ``settles_on_arrival``, once it arrived, or its error."""
    try:
        data = sent.finish()
    except EnvgenRuntimeError as exc:
        return exc
    assert isinstance(data, dict)  # such a step's ``finish`` never waits
    return _parsed(slot, data)


async def _finished(slot: Slot, sent: PostedStep) -> Reply:
    """The reply of any posted step, awaited when it is not all here yet (HTTP), or its error."""
    try:
        data = sent.finish()
        if not isinstance(data, dict):
            data = await data
    except EnvgenRuntimeError as exc:
        return exc
    return _parsed(slot, data)


def _parsed(slot: Slot, data: dict[str, Any]) -> Reply:
    """``data`` parsed as ``request``'s reply is (``_after_step``), or its error."""
    client = slot.client
    assert client is not None
    try:
        return client._after_step(data)
    except EnvgenRuntimeError as exc:
        return exc


def _batch_texts(steps: Sequence[tuple[Slot, Any]]) -> list[str] | None:
    """Every action's JSON text in one call (``ClientCore._step_texts``), or None."""
    if not steps:
        return None
    client = steps[0][0].client
    assert client is not None
    return client._step_texts([action for _, action in steps])
