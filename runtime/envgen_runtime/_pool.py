"""``AsyncEnvPool``: many env sessions over a few servers, stepped together, failures per slot.

A pool holds ``size`` slots. Each slot is one session (one asyncio client) on one server;
a server holds up to ``sessions_per_server`` slots, matching its ``max_concurrent_envs``.
Servers come from a provider factory (local processes, Docker, Ray: anything that
satisfies ``Provider``); the client talks to each server directly.

``step(actions)`` sends every slot's request before awaiting any reply (one task per
slot on one event loop) and returns one ``SlotResult`` per slot. Nothing a single server or
session does raises out of ``step``: a failure becomes that slot's ``error``.
What a trainer sees when a server dies:

1. the step that hits it returns, for each slot of that server, ``done=True``,
   ``observation=None`` and ``error=SlotLostError(server_lost=True)``; every other slot's
   result is a normal step;
2. the pool starts a replacement server in the background (a new process, container or
   actor); until it is up, those slots keep returning ``SlotLostError`` (their action is
   not applied);
3. once it is up, the slot's next ``step`` is a fresh ``reset()`` instead (``reset=True``
   in its result; the action is not applied), and the slot continues from there.

A lost session on a healthy server is the same story without a new server.
``CAPACITY_REACHED`` at connect time is not a failure: the pool lowers that server's
capacity to what it holds and moves the slot to another server (starting one if needed).
``EnvPool`` (``_pool_sync``) is the blocking shell over this class.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Self, TypeVar, cast
from urllib.parse import urlsplit

from ._base import ClientOptions
from ._client import EnvClient
from ._client_async import AsyncEnvClient
from ._exceptions import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    ProviderError,
    ServerError,
)
from ._provider import Provider
from ._result import StepResult

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "AsyncEnvPool",
    "ProviderFactory",
    "SlotInfo",
    "SlotLostError",
    "SlotResult",
    "async_client_class",
]

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")

ProviderFactory = Callable[[], Provider]
"""Makes a new provider (not started) each time the pool needs a server."""

ProviderKind = Literal["local", "docker", "ray"]
SlotState = Literal["ready", "needs_reset", "recovering"]

_CLOSE_TIMEOUT_S = 2.0
_REPLACE_ATTEMPTS = 3
_MAX_MOVES = 8  # CAPACITY_REACHED answers one reset may meet before it reports the error
_CONNECTION_ERRORS = (EnvConnectionError, EnvTimeoutError)


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
    or the recovery of a lost slot: the action given for it was not applied). ``error`` is
    None on success; then ``observation`` is set. ``extras`` holds every reply key beyond
    observation/reward/done (``metadata``, ...).
    """

    slot: int
    observation: ObsT | None
    reward: float | None
    done: bool
    extras: Mapping[str, Any] = field(default_factory=dict)
    error: EnvgenRuntimeError | None = None
    reset: bool = False

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


class _Server:
    def __init__(self, serial: int, provider: Provider, capacity: int) -> None:
        self.serial = serial
        self.provider = provider
        self.capacity = capacity
        self.slots: list[_Slot] = []
        self.base_url: str | None = None
        self.lost = False

    @property
    def node_id(self) -> str | None:
        node = getattr(self.provider, "node_id", None)
        return node if isinstance(node, str) else None


class _Slot:
    def __init__(self, index: int) -> None:
        self.index = index
        self.server: _Server | None = None
        self.client: AsyncEnvClient[Any, Any, Any] | None = None
        self.needs_reset = False
        self.done = False
        self.unplaced: ProviderError | None = None  # the last replacement failed with this


@dataclass
class _Failure:
    slot: _Slot
    server: _Server
    error: EnvgenRuntimeError


def async_client_class(client: type[Any]) -> type[AsyncEnvClient[Any, Any, Any]]:
    """The asyncio client class for ``client`` (a generated sync or async client class).

    A sync ``EnvClient`` subclass gets an asyncio twin with the same spec and hooks (the
    hooks only encode actions and parse replies, which both kinds share).
    """
    if isinstance(client, type) and issubclass(client, AsyncEnvClient):
        return client
    if isinstance(client, type) and issubclass(client, EnvClient):
        namespace = {
            "SPEC": client._spec(),
            "_step_payload": client._step_payload,
            "_parse_result": client._parse_result,
            "_parse_state": client._parse_state,
            "__module__": client.__module__,
        }
        twin = type(f"Async{client.__name__}", (AsyncEnvClient,), namespace)
        return cast("type[AsyncEnvClient[Any, Any, Any]]", twin)
    raise TypeError(f"client must be an EnvClient or AsyncEnvClient subclass, got {client!r}")


async def _healthy(base_url: str, path: str, timeout_s: float) -> bool:
    """Whether the server answers ``GET path`` with 200 (a dead process refuses at once)."""
    import asyncio

    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(f"GET {path} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode("ascii"))
            status = await reader.readline()
        return status.split(b" ")[1:2] == [b"200"]
    except (OSError, TimeoutError, IndexError):
        return False
    finally:
        if writer is not None:
            writer.close()


async def _close_quietly(client: AsyncEnvClient[Any, Any, Any] | None) -> None:
    import asyncio

    if client is None:
        return
    with contextlib.suppress(Exception, TimeoutError):
        async with asyncio.timeout(_CLOSE_TIMEOUT_S):
            await client.close()


def _is_capacity(exc: BaseException) -> bool:
    return isinstance(exc, ServerError) and exc.code == "CAPACITY_REACHED"


class AsyncEnvPool(Generic[ActT, ObsT, StateT]):
    """``size`` env sessions over servers from one provider, stepped together (asyncio).

    ``provider`` is ``"local"`` (the env's ``[server] command`` as local processes, the
    default), ``"docker"`` (its image), ``"ray"`` (``RayProvider`` actors, SPREAD over the
    cluster) or a callable returning a new unstarted ``Provider``; ``provider_options`` go
    to the provider's constructor for the named kinds. ``sessions_per_server`` should match
    the server's ``max_concurrent_envs`` (1 for stateful HTTP servers). ``auto_reset``
    resets a slot on the step after its episode ended. ``client_options`` go to every
    slot's client. Generated packages subclass it as ``Async<Name>Pool`` with ``CLIENT``
    set; otherwise pass ``client=``. Start with ``await pool.start()``, ``async with``, or
    the first ``reset``; ``close()`` ends every session and stops every server.
    """

    CLIENT: ClassVar[type[Any] | None] = None

    def __init__(
        self,
        size: int,
        *,
        client: type[Any] | None = None,
        provider: ProviderKind | ProviderFactory = "local",
        provider_options: Mapping[str, Any] | None = None,
        sessions_per_server: int = 1,
        auto_reset: bool = False,
        client_options: ClientOptions | None = None,
        health_timeout_s: float = 2.0,
    ) -> None:

        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"size must be a positive integer, got {size!r}")
        if sessions_per_server < 1:
            raise ValueError(f"sessions_per_server must be at least 1, got {sessions_per_server}")
        chosen = client if client is not None else type(self).CLIENT
        if chosen is None:
            raise TypeError(f"{type(self).__name__} needs client= (a generated client class)")
        self._client_cls = async_client_class(chosen)
        spec = self._client_cls._spec()
        self._options: dict[str, Any] = dict(client_options or {})
        clash = {"base_url", "provider"} & self._options.keys()
        if clash:
            raise TypeError(f"client_options must not set {sorted(clash)}: the pool does")
        transport = self._options.get("transport") or spec.transport
        if transport == "http" and sessions_per_server != 1:
            raise ValueError(
                "stateful HTTP servers hold one environment each: sessions_per_server must be 1"
            )
        self._factory = self._provider_factory(provider, dict(provider_options or {}), transport)
        self._health_path = spec.health_path
        self._health_timeout_s = health_timeout_s
        self._size = size
        self._per_server = sessions_per_server
        self._auto_reset = auto_reset
        self._slots = [_Slot(index) for index in range(size)]
        self._servers: list[_Server] = []
        self._serials = itertools.count()
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = False
        self._closed = False
        self.replacements = 0
        """How many servers the pool started to replace lost ones."""

    # ------------------------------------------------------------------ providers

    def _provider_factory(
        self, provider: ProviderKind | ProviderFactory, options: dict[str, Any], transport: str
    ) -> ProviderFactory:
        spec = self._client_cls._spec()
        if callable(provider):
            if options:
                raise TypeError("provider_options apply to 'local', 'docker' or 'ray' only")
            return provider
        startup = options.pop("startup_timeout_s", spec.startup_timeout_s)
        if provider == "local":
            from ._provider import LocalProcessProvider

            command = options.pop("command", spec.server_command)
            return lambda: LocalProcessProvider(
                command,
                health_path=spec.health_path,
                startup_timeout_s=startup,
                transport=transport,
                **options,
            )
        if provider == "ray":
            from ._ray import RayProvider

            command = options.pop("command", spec.server_command)
            return lambda: RayProvider(
                command,
                health_path=spec.health_path,
                startup_timeout_s=startup,
                transport=transport,
                **options,
            )
        if provider == "docker":
            from ._docker import LocalDockerProvider

            image = options.pop("image", spec.docker_image)
            if not image:
                raise ValueError(f"environment {spec.name!r} has no docker image: pass image=")
            port = options.pop("port", spec.docker_port)
            return lambda: LocalDockerProvider(
                image,
                port=port,
                health_path=spec.health_path,
                startup_timeout_s=startup,
                env_name=spec.name,
                **options,
            )
        raise ValueError(
            f"provider must be 'local', 'docker', 'ray' or a callable, not {provider!r}"
        )

    async def _start_server(self) -> _Server:
        import asyncio

        server = _Server(next(self._serials), self._factory(), self._per_server)
        try:
            server.base_url = await asyncio.to_thread(server.provider.start)
        except BaseException:
            await asyncio.shield(asyncio.to_thread(server.provider.stop))
            raise
        return server

    def _new_client(self, server: _Server) -> AsyncEnvClient[Any, Any, Any]:
        assert server.base_url is not None
        return self._client_cls(server.base_url, **self._options)

    def _attach(self, slot: _Slot, server: _Server) -> None:
        slot.server = server
        server.slots.append(slot)
        slot.client = self._new_client(server)

    # ------------------------------------------------------------------ lifecycle

    @property
    def size(self) -> int:
        """The number of slots."""
        return self._size

    @property
    def slots(self) -> tuple[SlotInfo, ...]:
        """Each slot's server and state."""
        infos = []
        for slot in self._slots:
            server = slot.server
            state: SlotState = (
                "recovering"
                if server is None or server.lost
                else "needs_reset"
                if slot.needs_reset
                else "ready"
            )
            infos.append(
                SlotInfo(
                    slot=slot.index,
                    server=server.serial if server is not None else None,
                    base_url=server.base_url if server is not None else None,
                    node_id=server.node_id if server is not None else None,
                    state=state,
                )
            )
        return tuple(infos)

    @property
    def servers(self) -> tuple[Provider, ...]:
        """The providers of the servers now in use."""
        return tuple(server.provider for server in self._servers)

    async def start(self) -> Self:
        """Start the servers (all at once) and attach every slot; idempotent."""
        import asyncio

        if self._closed:
            raise EnvgenRuntimeError("this pool is closed; create a new one")
        if self._started:
            return self
        self._started = True
        count = math.ceil(self._size / self._per_server)
        outcomes = await asyncio.gather(
            *(self._start_server() for _ in range(count)), return_exceptions=True
        )
        self._servers = [o for o in outcomes if isinstance(o, _Server)]
        failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
        if failure is not None:
            await self.close()
            raise failure
        for slot in self._slots:
            self._attach(slot, self._servers[slot.index // self._per_server])
        return self

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
        await asyncio.gather(*(_close_quietly(slot.client) for slot in self._slots))
        for slot in self._slots:
            slot.client = None
        servers, self._servers = self._servers, []
        await asyncio.gather(
            *(asyncio.to_thread(server.provider.stop) for server in servers),
            return_exceptions=True,
        )

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ operations

    def _seeds(self, seeds: int | Sequence[int | None] | None, count: int) -> list[int | None]:
        if seeds is None:
            return [None] * count
        if isinstance(seeds, bool):
            raise TypeError("seeds must be an int, a sequence of seeds, or None")
        if isinstance(seeds, int):
            return [seeds + index for index in range(count)]
        listed = list(seeds)
        if len(listed) != count:
            raise ValueError(f"seeds has {len(listed)} entries for {count} slots")
        return listed

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
        await self.start()
        chosen = [
            self._slot(index) for index in (slots if slots is not None else range(self._size))
        ]
        seed_list = self._seeds(seeds, len(chosen))
        return await self._settle(
            [
                self._reset_slot(slot, seed, kwargs)
                for slot, seed in zip(chosen, seed_list, strict=True)
            ]
        )

    async def step(self, actions: Sequence[ActT]) -> list[SlotResult[ObsT]]:
        """Step every slot with its action, all at once; one result per slot, in order."""
        await self.start()
        if len(actions) != self._size:
            raise ValueError(f"step needs {self._size} actions (one per slot), got {len(actions)}")
        return await self._settle(
            [
                self._step_slot(slot, action)
                for slot, action in zip(self._slots, actions, strict=True)
            ]
        )

    def _slot(self, index: int) -> _Slot:
        if not 0 <= index < self._size:
            raise IndexError(f"slot {index} out of range 0..{self._size - 1}")
        return self._slots[index]

    # ------------------------------------------------------------------ per slot

    @staticmethod
    def _result(slot: _Slot, result: StepResult[Any], *, reset: bool) -> SlotResult[ObsT]:
        slot.done = result.done
        return SlotResult(
            slot=slot.index,
            observation=result.observation,
            reward=result.reward,
            done=result.done,
            extras=result.extra,
            reset=reset,
        )

    def _waiting(self, slot: _Slot) -> SlotResult[ObsT]:
        failed, slot.unplaced = slot.unplaced, None
        if failed is not None:
            return self._unplaced(slot, failed)
        return SlotResult(
            slot=slot.index,
            observation=None,
            reward=None,
            done=True,
            error=SlotLostError(
                f"slot {slot.index} lost its server; a replacement is starting",
                slot=slot.index,
                server_lost=True,
            ),
        )

    async def _reset_slot(
        self, slot: _Slot, seed: int | None, kwargs: Mapping[str, Any]
    ) -> SlotResult[ObsT] | _Failure:
        for moves in itertools.count():
            server, client = slot.server, slot.client
            if server is None or server.lost or client is None:
                return self._waiting(slot)
            try:
                result = await client.reset(seed=seed, **kwargs)
            except EnvgenRuntimeError as exc:
                if _is_capacity(exc) and moves < _MAX_MOVES:
                    try:
                        await self._move(slot, server)
                    except ProviderError as error:
                        return self._unplaced(slot, error)
                    continue
                return self._failure(slot, server, exc)
            slot.needs_reset = False
            return self._result(slot, result, reset=True)
        raise AssertionError("unreachable")

    def _unplaced(self, slot: _Slot, error: ProviderError) -> SlotResult[ObsT]:
        """No server could take ``slot`` now: start one in the background, report the error."""
        slot.needs_reset = slot.done = True
        self._spawn(self._replace(None, [slot]))
        return SlotResult(slot=slot.index, observation=None, reward=None, done=True, error=error)

    async def _step_slot(self, slot: _Slot, action: ActT) -> SlotResult[ObsT] | _Failure:
        server, client = slot.server, slot.client
        if server is None or server.lost or client is None:
            return self._waiting(slot)
        if slot.needs_reset or (self._auto_reset and slot.done):
            return await self._reset_slot(slot, None, {})
        try:
            result = await client.step(action)
        except EnvgenRuntimeError as exc:
            if _is_capacity(exc):  # a step on a fresh session: the slot needs a reset anyway
                try:
                    await self._move(slot, server)
                except ProviderError as error:
                    return self._unplaced(slot, error)
                return await self._reset_slot(slot, None, {})
            return self._failure(slot, server, exc)
        return self._result(slot, result, reset=False)

    def _failure(
        self, slot: _Slot, server: _Server, exc: EnvgenRuntimeError
    ) -> SlotResult[ObsT] | _Failure:
        if isinstance(exc, _CONNECTION_ERRORS):
            return _Failure(slot, server, exc)
        # The server answered (an execution or validation error): the session goes on.
        return SlotResult(slot=slot.index, observation=None, reward=None, done=slot.done, error=exc)

    async def _move(self, slot: _Slot, full: _Server) -> None:
        """``full`` said CAPACITY_REACHED: it holds what it has; put ``slot`` elsewhere."""
        full.slots.remove(slot)
        full.capacity = max(1, len(full.slots))
        await _close_quietly(slot.client)
        slot.client, slot.server = None, None
        target = next((s for s in self._servers if not s.lost and len(s.slots) < s.capacity), None)
        if target is None:
            target = await self._start_server()
            self._servers.append(target)
        self._attach(slot, target)

    # ------------------------------------------------------------------ failures

    async def _settle(self, calls: Sequence[Any]) -> list[SlotResult[ObsT]]:
        import asyncio

        outcomes: list[SlotResult[ObsT] | _Failure] = await asyncio.gather(*calls)
        failures = [o for o in outcomes if isinstance(o, _Failure)]
        if not failures:
            return cast("list[SlotResult[ObsT]]", outcomes)
        servers = {f.server.serial: f.server for f in failures}
        alive = await asyncio.gather(*(self._server_alive(server) for server in servers.values()))
        dead = {serial for serial, ok in zip(servers, alive, strict=True) if not ok}
        for serial in dead:
            self._lose_server(servers[serial])
        results: list[SlotResult[ObsT]] = []
        for outcome in outcomes:
            if not isinstance(outcome, _Failure):
                results.append(outcome)
                continue
            server_lost = outcome.server.serial in dead
            if not server_lost:
                await self._renew_session(outcome.slot)
            what = "its server died" if server_lost else "its session ended"
            results.append(
                SlotResult(
                    slot=outcome.slot.index,
                    observation=None,
                    reward=None,
                    done=True,
                    error=SlotLostError(
                        f"slot {outcome.slot.index}: {what} ({outcome.error.message}); "
                        "it continues from a fresh reset",
                        slot=outcome.slot.index,
                        server_lost=server_lost,
                        cause=outcome.error,
                    ),
                )
            )
        return results

    async def _server_alive(self, server: _Server) -> bool:
        if server.lost or server.base_url is None:
            return False
        return await _healthy(server.base_url, self._health_path, self._health_timeout_s)

    async def _renew_session(self, slot: _Slot) -> None:
        old, server = slot.client, slot.server
        slot.needs_reset = True
        slot.done = True
        if server is not None and not server.lost:
            slot.client = self._new_client(server)
        await _close_quietly(old)

    def _lose_server(self, server: _Server) -> None:
        """Detach ``server``'s slots and start its replacement in the background."""
        if server.lost:
            return
        server.lost = True
        if server in self._servers:
            self._servers.remove(server)
        orphans, server.slots = list(server.slots), []
        for slot in orphans:
            old, slot.client, slot.server = slot.client, None, None
            slot.needs_reset, slot.done = True, True
            self._spawn(_close_quietly(old))
        self._spawn(self._replace(server, orphans))

    def _spawn(self, coro: Any) -> None:
        import asyncio

        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _replace(self, lost: _Server | None, orphans: list[_Slot]) -> None:
        """Stop ``lost`` (if any), start a new server and attach ``orphans`` to it."""
        import asyncio

        if lost is not None:
            await asyncio.to_thread(lost.provider.stop)
        delay = 0.5
        for attempt in range(1, _REPLACE_ATTEMPTS + 1):
            try:
                server = await self._start_server()
            except ProviderError as exc:
                if attempt == _REPLACE_ATTEMPTS:
                    for slot in orphans:
                        slot.unplaced = exc  # reported by the slot's next call, then retried
                    return
                await asyncio.sleep(delay)
                delay *= 2
                continue
            break
        if self._closed:
            await asyncio.to_thread(server.provider.stop)
            return
        self.replacements += 1
        self._servers.append(server)
        for slot in orphans:
            self._attach(slot, server)
