"""The pool's records: what a slot hands the trainer, and what the pool keeps per slot and server.

Public (re-exported by ``envgen_runtime``): ``SlotResult`` (one slot's outcome of a ``reset``
or ``step``), ``SlotLostError`` (a slot's episode ended without the trainer asking) and
``SlotInfo`` (where a slot lives now). The pool's own: ``Slot`` and ``Server`` (a session and
the server it is on) and ``Failure`` (a connection failure not yet told apart). They sit
apart from ``aio`` so that ``servers`` and the pool share them and the public types can be
read without the pool's logic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from ..core.errors import EnvgenRuntimeError, ProviderError

if TYPE_CHECKING:
    from ..client.aio import AsyncEnvClient
    from ..providers.base import Provider

__all__ = [
    "Failure",
    "Server",
    "Slot",
    "SlotInfo",
    "SlotLostError",
    "SlotResult",
    "SlotState",
    "error_result",
    "slot_info",
]

ObsT = TypeVar("ObsT")

SlotState = Literal["ready", "needs_reset", "recovering"]


class SlotLostError(EnvgenRuntimeError):
    """A slot's session ended without the trainer asking: its episode is gone.

    ``server_lost`` says whether the whole server died (and is being replaced) or only the
    session dropped; ``cause`` is the error the slot saw, when there was one.
    """

    def __init__(
        self, message: str, *, slot: int, server_lost: bool, cause: BaseException | None = None
    ) -> None:
        super().__init__(message)
        self.slot = slot
        self.server_lost = server_lost
        self.cause = cause


@dataclass(frozen=True)
class SlotResult(Generic[ObsT]):
    """One slot's outcome of a pool ``reset`` or ``step``.

    ``reset`` is True when this result starts a new episode (a ``reset()``, an auto-reset,
    or the recovery of a lost slot). ``action_dropped`` is True when ``step`` did not send
    the action given for this slot, or sent it and lost the session: the result is a reset,
    a ``SlotLostError`` or a ``ProviderError``, not the server's answer to that action.
    ``error`` is None on success; then ``observation`` is set. ``extras`` holds every reply
    key beyond observation/reward/done (``metadata``, ...).
    """

    slot: int
    observation: ObsT | None
    reward: float | None
    done: bool
    extras: Mapping[str, Any] = field(default_factory=dict)
    error: EnvgenRuntimeError | None = None
    reset: bool = False
    action_dropped: bool = False

    @property
    def ok(self) -> bool:
        """True when the slot produced an observation."""
        return self.error is None


@dataclass(frozen=True)
class SlotInfo:
    """Where a slot lives now (for placement checks and logs)."""

    slot: int
    server: int | None
    base_url: str | None
    node_id: str | None
    state: SlotState


class Server:
    def __init__(self, serial: int, provider: Provider, capacity: int) -> None:
        self.serial = serial
        self.provider = provider
        self.capacity = capacity
        self.slots: list[Slot] = []
        self.base_url: str | None = None
        self.lost = False


class Slot:
    """Plain classes (not dataclasses) for the private records: cheaper at import."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.server: Server | None = None
        self.client: AsyncEnvClient[Any, Any, Any] | None = None
        self.needs_reset = False
        self.done = False
        self.unplaced: ProviderError | None = None  # the last replacement failed with this
        # What the slot's last reset() asked for, and the pool's own resets since: an
        # auto-reset or recovery uses seed + resets * pool size (see AsyncEnvPool).
        self.seed: int | None = None
        self.reset_kwargs: Mapping[str, Any] = {}
        self.resets = 0


class Failure:
    """A slot's connection failed; ``AsyncEnvPool._settle`` tells if its server or session died."""

    def __init__(self, slot: Slot, server: Server, error: EnvgenRuntimeError) -> None:
        self.slot = slot
        self.server = server
        self.error = error


def error_result(slot: Slot, error: EnvgenRuntimeError, *, done: bool = True) -> SlotResult[Any]:
    return SlotResult(slot=slot.index, observation=None, reward=None, done=done, error=error)


def slot_info(slot: Slot) -> SlotInfo:
    server = slot.server
    if server is None:
        return SlotInfo(slot.index, None, None, None, "recovering")
    state: SlotState = (
        "recovering" if server.lost else "needs_reset" if slot.needs_reset else "ready"
    )
    node = getattr(server.provider, "node_id", None)
    node_id = node if isinstance(node, str) else None
    return SlotInfo(slot.index, server.serial, server.base_url, node_id, state)
