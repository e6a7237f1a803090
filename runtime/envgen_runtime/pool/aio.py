"""``AsyncEnvPool``: many env sessions over a few servers, stepped together, failures per slot.

Each slot is one session (one asyncio client) on one server; a server holds up to
``sessions_per_server`` slots. ``step`` sends every slot's request before awaiting any reply
and returns one ``SlotResult`` per slot: nothing one server or session does raises out of it.
A slot whose server died gets ``SlotLostError`` until a replacement started in the background
is up, then its next step is a fresh ``reset()``; a lost session on a live server is the same
without a new server. ``CAPACITY_REACHED`` lowers that server's capacity and moves the slot.
The README's "Many envs" tells the whole story; ``EnvPool`` is the blocking shell.

This module holds those decisions (when servers start, where slots go, how a step or reset
runs); ``lockstep`` runs a step's round, ``recovery`` tells whether a failure lost a server
or only a session and replaces what was lost; ``slots`` holds the records, ``servers``
starts and probes one server, ``clients`` gives the slots' client class and ends clients.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar, cast

from ..client.aio import AsyncEnvClient
from ..client.base import ClientOptions
from ..client.launchers import client_options_for
from ..core.checks import positive
from ..core.errors import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    ProviderError,
    ServerError,
)
from ..core.result import StepResult
from ..providers.base import Provider
from .args import check_size, seeds_for, sessions_for
from .clients import async_client_class, close_quietly
from .lockstep import step_round
from .recovery import Recovery
from .servers import (
    ProviderFactory,
    ProviderKind,
    provider_factory,
    server_capacity,
    start_server,
)
from .slots import (
    Failure,
    Server,
    Slot,
    SlotInfo,
    SlotLostError,
    SlotResult,
    error_result,
    slot_info,
)

if TYPE_CHECKING:
    import asyncio


ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")


_CAPACITY_TIMEOUT_S = 15.0  # the least time the first server gets to answer GET /metadata
_MAX_MOVES = 8  # CAPACITY_REACHED answers one reset may meet before it reports the error
_CONNECTION_ERRORS = (EnvConnectionError, EnvTimeoutError)


def _is_capacity(exc: BaseException) -> bool:
    return isinstance(exc, ServerError) and exc.code == "CAPACITY_REACHED"


def _dropped(result: SlotResult[Any]) -> bool:
    """Whether a step's result is not the server's answer to the slot's action."""
    return result.reset or isinstance(result.error, (SlotLostError, ProviderError))


class AsyncEnvPool(Recovery[ObsT], Generic[ActT, ObsT, StateT]):
    """``size`` env sessions over servers from one provider, stepped together (asyncio).

    ``provider`` is ``"local"`` (the env's ``[server] command`` as local processes, the
    default), ``"docker"`` (its image), ``"ray"`` (``RayProvider`` actors, spread evenly over
    the cluster's nodes) or a callable returning a new unstarted ``Provider``;
    ``provider_options`` go to the provider's constructor for the named kinds.
    ``sessions_per_server`` defaults to what the first server started publishes as
    ``max_concurrent_envs`` in ``/metadata`` (1 if it publishes none; always 1 for stateful
    HTTP servers); a number given wins.
    ``auto_reset`` resets a slot on the step after its episode ended, instead of sending that step's
    action (``action_dropped``). Every reset the pool makes on its own (auto-reset, lost
    slot) is seeded: the k-th since the slot's ``reset(seeds=...)`` gave it seed ``s`` uses
    ``s + k * size`` and that reset's keyword arguments (unseeded when ``s`` was None), so
    the same seeds replay the same episodes. ``client_options`` go to every
    slot's client. Generated packages subclass it as ``Async<Name>Pool`` with ``CLIENT``
    set; otherwise pass ``client=``. The first ``reset`` starts it if ``start()`` did not.
    """

    CLIENT: ClassVar[type[Any] | None] = None

    def __init__(
        self,
        size: int,
        *,
        client: type[Any] | None = None,
        provider: ProviderKind | ProviderFactory = "local",
        provider_options: Mapping[str, Any] | None = None,
        sessions_per_server: int | None = None,
        auto_reset: bool = False,
        client_options: ClientOptions | None = None,
        health_timeout_s: float = 2.0,
    ) -> None:
        check_size(size, sessions_per_server)
        positive("health_timeout_s", health_timeout_s)
        chosen = client if client is not None else type(self).CLIENT
        if chosen is None:
            raise TypeError(f"{type(self).__name__} needs client= (a generated client class)")
        self._client_cls = async_client_class(chosen)
        spec = self._client_cls._spec()
        self._options = client_options_for(client_options, "pool")
        transport = self._options.get("transport") or spec.transport
        sessions_per_server = sessions_for(transport, sessions_per_server)
        options = dict(provider_options or {})
        owner = chosen.__name__.removeprefix("Async") + "Pool"  # as generated: EchoEnvPool
        self._factory = provider_factory(provider, options, spec, transport, owner)
        self._health_path = spec.health_path
        self._health_timeout_s = health_timeout_s
        self._size = size
        self._per_server = sessions_per_server  # None: read from the first server started
        self._auto_reset = auto_reset
        self._slots = [Slot(index) for index in range(size)]
        self._servers: list[Server] = []
        self._unstopped: list[Server] = []  # lost servers not stopped yet: ``close`` stops them too
        self._serials = itertools.count()
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = False
        self._closed = False
        self.replacements = 0
        """How many servers the pool started to replace lost ones."""

    async def _start_server(self) -> Server:
        return await start_server(next(self._serials), self._factory(), self._per_server or 1)

    def _new_client(self, server: Server) -> AsyncEnvClient[Any, Any, Any]:
        assert server.base_url is not None
        return self._client_cls(server.base_url, **self._options)

    def _attach(self, slot: Slot, server: Server) -> None:
        slot.server = server
        server.slots.append(slot)
        slot.client = self._new_client(server)

    @property
    def size(self) -> int:
        """The number of slots."""
        return self._size

    @property
    def strict(self) -> bool:
        """Whether the slots' clients parse strictly (``client_options={"strict": True}``)."""
        return bool(self._options.get("strict", False))

    @property
    def slots(self) -> tuple[SlotInfo, ...]:
        """Each slot's server and state."""
        return tuple(slot_info(slot) for slot in self._slots)

    @property
    def servers(self) -> tuple[Provider, ...]:
        """The providers of the servers now in use."""
        return tuple(server.provider for server in self._servers)

    async def start(self) -> Self:
        """Start the servers (all at once) and attach every slot; idempotent."""

        if self._closed:
            raise EnvgenRuntimeError("this pool is closed; create a new one")
        if self._started:
            return self
        self._started = True
        if self._per_server is None:
            # The first server says how many sessions it holds; the rest start together.
            await self._start_servers(1)
            first = self._servers[0]
            # It just answered /health: a slow reply is load, not death; wait for it.
            timeout_s = max(self._health_timeout_s, _CAPACITY_TIMEOUT_S)
            capacity = await server_capacity(first, timeout_s)
            self._per_server = first.capacity = capacity or 1
        per_server = self._per_server
        await self._start_servers(math.ceil(self._size / per_server) - len(self._servers))
        for slot in self._slots:
            self._attach(slot, self._servers[slot.index // per_server])
        return self

    async def _start_servers(self, count: int) -> None:
        """Start ``count`` servers at once; if any fails, close the pool and raise."""
        import asyncio

        outcomes = await asyncio.gather(
            *(self._start_server() for _ in range(count)), return_exceptions=True
        )
        self._servers += [o for o in outcomes if isinstance(o, Server)]
        failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
        if failure is not None:
            await self.close()
            raise failure

    async def wait_ready(self, timeout_s: float | None = None) -> None:
        """Wait until every server replacement under way has finished."""
        import asyncio

        async with asyncio.timeout(timeout_s):
            while self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """End every session and stop every server (also those being started); idempotent."""
        import asyncio

        if self._closed:
            return
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await asyncio.gather(*(close_quietly(slot.client) for slot in self._slots))
        for slot in self._slots:
            slot.client = None
        servers, self._servers, self._unstopped = [*self._servers, *self._unstopped], [], []
        await asyncio.gather(
            *(asyncio.to_thread(server.provider.stop) for server in servers),
            return_exceptions=True,
        )

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def reset(
        self,
        seeds: int | Sequence[int | None] | None = None,
        *,
        slots: Sequence[int] | None = None,
        **kwargs: Any,
    ) -> list[SlotResult[ObsT]]:
        """Start new episodes in ``slots`` (default all); one result per slot reset.

        ``seeds``: one per slot, or an int ``s`` meaning ``s, s+1, ...``, or None.
        """
        import asyncio

        await self.start()
        chosen = [self._slot(i) for i in (range(self._size) if slots is None else slots)]
        for slot, seed in zip(chosen, seeds_for(seeds, len(chosen)), strict=True):
            slot.seed, slot.reset_kwargs, slot.resets = seed, dict(kwargs), 0
        return await self._settle(await asyncio.gather(*map(self._reset_slot, chosen)))

    async def step(self, actions: Sequence[ActT]) -> list[SlotResult[ObsT]]:
        """Step every slot with its action, all at once; one result per slot, in order.

        Slots on an open session step in one lock-step round (``lockstep``); the rest (resets
        due, slots waiting for a server, sessions not split) run alongside as coroutines.
        """
        import asyncio

        await self.start()
        if len(actions) != self._size:
            raise ValueError(f"step needs {self._size} actions (one per slot), got {len(actions)}")
        paired = list(zip(self._slots, actions, strict=True))
        outcomes: list[SlotResult[ObsT] | Failure | None] = [None] * self._size
        in_round = [i for i, (slot, _) in enumerate(paired) if self._in_round(slot)]
        chosen = set(in_round)
        others = [i for i in range(self._size) if i not in chosen]
        # Most rounds have no slot beside them: then no gather (a future and a loop lookup).
        alongside = (
            asyncio.gather(*(self._step_slot(*paired[i]) for i in others)) if others else None
        )
        try:
            replies = await step_round([paired[i] for i in in_round])
        except BaseException:
            if alongside is not None:
                alongside.cancel()
            raise
        if alongside is not None:
            for index, outcome in zip(others, await alongside, strict=True):
                outcomes[index] = outcome
        later: dict[int, Coroutine[Any, Any, SlotResult[ObsT] | Failure]] = {}
        for index, reply in zip(in_round, replies, strict=True):
            slot, action = paired[index]
            server = slot.server
            assert server is not None
            if isinstance(reply, StepResult):
                outcomes[index] = self._result(slot, reply, reset=False)
            elif reply is None:  # not sent in the round: step it the usual way
                later[index] = self._step_slot(slot, action)
            elif _is_capacity(reply):
                later[index] = self._step_failed(slot, server, reply)
            else:
                outcomes[index] = self._failure(slot, server, reply)
        if later:
            for index, outcome in zip(later, await asyncio.gather(*later.values()), strict=True):
                outcomes[index] = outcome
        results = await self._settle(cast("list[SlotResult[ObsT] | Failure]", outcomes))
        return [replace(r, action_dropped=True) if _dropped(r) else r for r in results]

    def _in_round(self, slot: Slot) -> bool:
        """Whether ``slot`` steps in the lock-step round: it has a live session, no reset due."""
        server = slot.server
        return not (
            slot.needs_reset
            or (self._auto_reset and slot.done)
            or server is None
            or server.lost
            or slot.client is None
        )

    def _slot(self, index: int) -> Slot:
        if not 0 <= index < self._size:
            raise IndexError(f"slot {index} out of range 0..{self._size - 1}")
        return self._slots[index]

    @staticmethod
    def _result(slot: Slot, result: StepResult[Any], *, reset: bool) -> SlotResult[ObsT]:
        slot.done = done = result.done
        return SlotResult(
            slot.index, result.observation, result.reward, done, result.extra, reset=reset
        )

    async def _reset_slot(self, slot: Slot) -> SlotResult[ObsT] | Failure:
        """Reset ``slot`` with its ``reset()`` seed, plus ``resets * size`` on the pool's own."""
        moves = 0
        seed = None if slot.seed is None else slot.seed + slot.resets * self._size
        while True:
            server, client = slot.server, slot.client
            if server is None or server.lost or client is None:
                return self._waiting(slot)
            try:
                result = await client.reset(seed=seed, **slot.reset_kwargs)
            except EnvgenRuntimeError as exc:
                if not _is_capacity(exc) or moves == _MAX_MOVES:
                    return self._failure(slot, server, exc)
                moves += 1
                if (unplaced := await self._move(slot, server)) is not None:
                    return unplaced
                continue
            slot.needs_reset = False
            return self._result(slot, result, reset=True)

    async def _step_slot(self, slot: Slot, action: ActT) -> SlotResult[ObsT] | Failure:
        if slot.needs_reset or (self._auto_reset and slot.done):
            slot.resets += 1
            return await self._reset_slot(slot)
        server, client = slot.server, slot.client
        if server is None or server.lost or client is None:
            return self._waiting(slot)
        try:
            result = await client.step(action)
        except EnvgenRuntimeError as exc:
            return await self._step_failed(slot, server, exc)
        return self._result(slot, result, reset=False)

    async def _step_failed(
        self, slot: Slot, server: Server, exc: EnvgenRuntimeError
    ) -> SlotResult[ObsT] | Failure:
        if not _is_capacity(exc):
            return self._failure(slot, server, exc)
        # A step on a fresh session: the slot needs a reset anyway.
        slot.resets += 1
        return await self._move(slot, server) or await self._reset_slot(slot)

    def _failure(
        self, slot: Slot, server: Server, exc: EnvgenRuntimeError
    ) -> SlotResult[ObsT] | Failure:
        if isinstance(exc, _CONNECTION_ERRORS):
            return Failure(slot, server, exc)
        # The server answered (an execution or validation error): the session goes on.
        return error_result(slot, exc, done=slot.done)

    async def _move(self, slot: Slot, full: Server) -> SlotResult[ObsT] | None:
        """``full`` said CAPACITY_REACHED: it holds what it has; put ``slot`` elsewhere.

        Returns the slot's error result when no server can be started for it now.
        """
        full.slots.remove(slot)
        full.capacity = max(1, len(full.slots))
        await close_quietly(slot.client)
        slot.client, slot.server = None, None
        target = next((s for s in self._servers if not s.lost and len(s.slots) < s.capacity), None)
        if target is None:
            try:
                target = await self._start_server()
            except ProviderError as error:
                return self._unplaced(slot, error)
            self._servers.append(target)
        self._attach(slot, target)
        return None
