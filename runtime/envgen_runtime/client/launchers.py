"""``from_local_process``, ``from_docker_image``, ``from_hub``: start a server, get a client.

Each launcher is written once, as a *plan* (check the arguments, build the unstarted
provider); ``SyncLauncher`` runs it in the calling thread and ``AsyncLauncher`` in a worker
thread when awaited, so the flavours cannot drift apart. The client owns a server it started.
The container launchers keep the provider's keywords, ``client_options`` (the client
constructor's) and docker-py run options (the rest) apart, so no name means two things.
Every launcher takes ``transport=`` and starts a server speaking it (``{transport}`` in a
local command, ``ENVGEN_PROTOCOL`` in a container), so client and server cannot disagree.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from types import MethodType
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar

from typing_extensions import Unpack

if TYPE_CHECKING:
    import os

    from ..core.spec import TransportName
    from ..providers.base import Provider
    from .base import ClientOptions


HUB_REGISTRY = "registry.hf.space"
_TAG = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"  # compiled (and cached by re) on first use
_DEFAULT_HOST = "127.0.0.1"

P = ParamSpec("P")
ClientT = TypeVar("ClientT")


def hub_image(repo_id: str, tag: str = "latest") -> str:
    """The image of a Hugging Face Space, named as the original OpenEnv client named it.

    ``registry.hf.space/<repo id lowercased, every character outside [a-z0-9] replaced by
    '-'>:<tag>``, e.g. ``openenv/Echo_Env`` -> ``registry.hf.space/openenv-echo-env:latest``.
    """
    if not repo_id or not repo_id.strip():
        raise ValueError("repo_id must be a Hugging Face repo id such as 'openenv/echo-env'")
    if not re.match(_TAG, tag):
        raise ValueError(f"tag {tag!r} is not a valid Docker tag")
    name = re.sub(r"[^a-z0-9]", "-", repo_id.lower())
    return f"{HUB_REGISTRY}/{name}:{tag}"


LaunchPlan = tuple["Provider", "Mapping[str, Any]"]
"""What a launcher decided: the provider to run and the client's keyword options."""


def client_options_for(options: Mapping[str, Any] | None, owner: str) -> dict[str, Any]:
    """A copy of ``client_options``, refusing the keywords by which ``owner`` (a launcher or
    a pool) gives each client its server."""
    chosen = dict(options or {})
    clash = {"base_url", "provider", "owns_provider"} & chosen.keys()
    if clash:
        raise TypeError(f"client_options must not set {sorted(clash)}: the {owner} does")
    return chosen


def container_client_options(options: Mapping[str, Any] | None, transport: str) -> dict[str, Any]:
    """``client_options`` for a container launcher, with the transport its server speaks.

    ``transport`` in ``client_options`` is refused: it would set the client's protocol but
    not the server's (the image's default would serve the other one).
    """
    chosen = client_options_for(options, "launcher")
    if "transport" in chosen:
        raise TypeError(
            f"client_options must not set 'transport': pass transport={chosen['transport']!r} "
            "to the launcher itself, which also starts the container's server with it"
        )
    chosen["transport"] = transport
    return chosen


def local_process_plan(
    cls: Any,
    /,
    command: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    startup_timeout_s: float | None = None,
    **options: Unpack[ClientOptions],
) -> LaunchPlan:
    """Start the environment's server locally and return a client that owns it.

    ``command`` defaults to ``SPEC.server_command``; ``options`` are the constructor's
    keyword options. Closing the client stops the server, and so does a failure while
    building the client. The asyncio client's flavour is awaited (or ``async with``-ed).
    """
    from ..providers.local import LocalProcessProvider, server_hint

    spec = cls._spec()
    argv = tuple(command) if command is not None else spec.server_command
    if not argv:
        raise ValueError(
            f"{cls.__name__}.SPEC has no server_command for environment {spec.name!r}: "
            "pass command=[...] to from_local_process()"
        )
    transport = options.get("transport")
    provider = LocalProcessProvider(
        argv,
        health_path=spec.health_path,
        startup_timeout_s=(
            startup_timeout_s if startup_timeout_s is not None else spec.startup_timeout_s
        ),
        env=env,
        cwd=cwd,
        transport=transport if transport is not None else spec.transport,
        missing_module_hint=server_hint(
            spec.name,
            spec.docker_image,
            f"{cls.__name__}.from_docker_image()",
            f'{cls.__name__}.from_local_process(command=[...], cwd="path/to/env-repo")',
        ),
    )
    return provider, client_options_for(options, "launcher")


def docker_image_plan(
    cls: Any,
    /,
    image: str | None = None,
    provider: Provider | None = None,
    *,
    transport: TransportName | None = None,
    client_options: ClientOptions | None = None,
    port: int | None = None,
    health_path: str | None = None,
    startup_timeout_s: float | None = None,
    host: str = _DEFAULT_HOST,
    pull: bool = False,
    docker_client: Any | None = None,
    **run_options: Any,
) -> LaunchPlan:
    """Run ``image`` (default ``SPEC.docker_image``) in a container; return a client.

    ``transport`` (default ``SPEC.transport``) is the protocol of both the client and the
    container's server (set as ``ENVGEN_PROTOCOL`` in the container).

    The container publishes ``port`` (default ``SPEC.docker_port``) on ``host`` at a
    port the engine picks; readiness is ``GET health_path`` (default
    ``SPEC.health_path``) within ``startup_timeout_s`` (default
    ``SPEC.startup_timeout_s``). A missing image is never pulled unless ``pull=True``.
    Extra keywords are run options (see ``LocalDockerProvider``); ``client_options`` go
    to the client's constructor. The client owns the container: ``close()`` stops and
    removes it, and so does a failure while building the client. ``provider`` replaces
    the ``LocalDockerProvider`` built here: the client owns it if it was not running yet,
    and only borrows a running one.
    """
    spec = cls._spec()
    protocol = transport if transport is not None else spec.transport
    options = container_client_options(client_options, protocol)
    if provider is None:
        from ..providers.docker import LocalDockerProvider

        chosen = image if image is not None else spec.docker_image
        if not chosen:
            raise ValueError(
                f"{cls.__name__}.SPEC has no docker_image for environment {spec.name!r}: "
                "pass the image, e.g. from_docker_image('my-org/my-env:1.0')"
            )
        built = LocalDockerProvider(
            chosen,
            port=port if port is not None else spec.docker_port,
            health_path=health_path if health_path is not None else spec.health_path,
            startup_timeout_s=(
                startup_timeout_s if startup_timeout_s is not None else spec.startup_timeout_s
            ),
            host=host,
            pull=pull,
            docker_client=docker_client,
            env_name=spec.name,
            transport=protocol,
            **run_options,
        )
        return built, options
    given = dict(run_options)
    for name, value, default in (
        ("port", port, None),
        ("health_path", health_path, None),
        ("startup_timeout_s", startup_timeout_s, None),
        ("host", host, _DEFAULT_HOST),
        ("pull", pull, False),
        ("docker_client", docker_client, None),
    ):
        if value != default:
            given[name] = value
    if given:
        raise TypeError(
            f"options {sorted(given)} apply to the provider that from_docker_image "
            "builds; configure the provider you pass instead"
        )
    provider_image = getattr(provider, "image", None)
    if image is not None and provider_image is not None and image != provider_image:
        raise ValueError(f"image {image!r} differs from the provider's image {provider_image!r}")
    served = getattr(provider, "transport", None)
    if served is not None and served != protocol:
        raise ValueError(
            f"the provider starts its server with transport {served!r}, not {protocol!r}: "
            f"pass transport={served!r}"
        )
    return provider, options


def hub_plan(
    cls: Any,
    /,
    repo_id: str,
    tag: str = "latest",
    *,
    transport: TransportName | None = None,
    client_options: ClientOptions | None = None,
    port: int | None = None,
    health_path: str | None = None,
    startup_timeout_s: float | None = None,
    host: str = _DEFAULT_HOST,
    pull: bool = True,
    docker_client: Any | None = None,
    **run_options: Any,
) -> LaunchPlan:
    """Run a Hugging Face Space's image (see ``hub_image``) like ``from_docker_image``.

    ``from_hub`` means "an image from a registry": a missing image is pulled from
    ``registry.hf.space`` by default (``pull=False`` refuses, and then the image must
    already be present locally). ``from_docker_image`` never pulls unless asked.
    """
    image = hub_image(repo_id, tag)
    return docker_image_plan(
        cls,
        image,
        transport=transport,
        client_options=client_options,
        port=port,
        health_path=health_path,
        startup_timeout_s=startup_timeout_s,
        host=host,
        pull=pull,
        docker_client=docker_client,
        missing_image_hint=(
            f"from_hub pulls from {HUB_REGISTRY} unless pull=False: leave pull at its default "
            f"(or run `docker pull {image}`) where {HUB_REGISTRY} can be reached, or `docker "
            "load` a saved copy."
        ),
        **run_options,
    )


def _build_client(cls: Callable[..., ClientT], plan: LaunchPlan) -> ClientT:
    """The sync shell: start the server in this thread (unless running), build the client."""
    provider, options = plan
    started = provider.base_url is None
    try:
        if started:
            provider.start()
        return cls(provider=provider, owns_provider=started, **options)
    except BaseException:
        if started:  # a provider passed in running is only borrowed: leave it be
            provider.stop()
        raise


async def _start_client(cls: Callable[..., ClientT], plan: LaunchPlan) -> ClientT:
    """The asyncio shell: the (blocking) start and, on failure or cancellation, the stop
    run in other threads, so the loop keeps running."""
    import asyncio
    import threading

    provider, options = plan
    started = provider.base_url is None
    try:
        if started:
            await asyncio.to_thread(provider.start)
        return cls(provider=provider, owns_provider=started, **options)
    except BaseException:
        if started:  # stopped in a thread: the start may still hold the provider's lock
            stop = provider.stop
            threading.Thread(target=stop, name="envgen-provider-stop", daemon=True).start()
        raise


class AsyncClientStart(Generic[ClientT]):
    """What an asyncio launcher returns: await it (then close the client), or ``async with``
    it. Closing the client stops its server, and so does cancelling the start."""

    def __init__(self, start: Callable[[], Awaitable[ClientT]]) -> None:
        self._start = start
        self._client: ClientT | None = None

    async def _get(self) -> ClientT:
        if self._client is None:
            self._client = await self._start()
        return self._client

    def __await__(self) -> Generator[Any, None, ClientT]:
        return self._get().__await__()

    async def __aenter__(self) -> ClientT:
        return await self._get()

    async def __aexit__(self, *exc_info: object) -> None:
        if self._client is not None:
            await self._client.close()  # type: ignore[attr-defined]  # an AsyncEnvClient


class _Launcher(Generic[P]):
    """A plan bound to the class it is read from (a classmethod that knows its flavour)."""

    def __init__(self, plan: Callable[Concatenate[Any, P], LaunchPlan]) -> None:
        self._plan = plan
        self.__doc__ = plan.__doc__

    def _bind(self, run: Callable[..., Any], owner: type[Any]) -> Callable[..., Any]:
        """``run(owner, ...)`` as a method of ``owner`` that introspects as the plan."""
        name = "from_" + self._plan.__name__.removesuffix("_plan").removeprefix("from_")
        run.__name__, run.__qualname__ = name, f"{owner.__qualname__}.{name}"
        run.__doc__ = self._plan.__doc__
        run.__wrapped__ = self._plan  # type: ignore[attr-defined]  # inspect.signature
        return MethodType(run, owner)


class SyncLauncher(_Launcher[P]):
    """Runs its plan in the calling thread and returns the client."""

    def __get__(self, obj: object, owner: type[ClientT]) -> Callable[P, ClientT]:
        plan = self._plan

        def launch(cls: type[ClientT], *args: P.args, **kwargs: P.kwargs) -> ClientT:
            return _build_client(cls, plan(cls, *args, **kwargs))

        return self._bind(launch, owner)


class AsyncLauncher(_Launcher[P]):
    """Checks its plan at once; returns an ``AsyncClientStart`` that starts the server."""

    def __get__(self, obj: object, owner: type[ClientT]) -> Callable[P, AsyncClientStart[ClientT]]:
        plan = self._plan

        def launch(
            cls: type[ClientT], *args: P.args, **kwargs: P.kwargs
        ) -> AsyncClientStart[ClientT]:
            made = plan(cls, *args, **kwargs)
            return AsyncClientStart(lambda: _start_client(cls, made))

        return self._bind(launch, owner)


class ProviderLaunchers:
    """``from_local_process``, ``from_docker_image`` and ``from_hub`` for ``EnvClient``
    (mixed into ``ClientCore`` subclasses: the plans read the class's ``SPEC``)."""

    from_local_process = SyncLauncher(local_process_plan)
    from_docker_image = SyncLauncher(docker_image_plan)
    from_hub = SyncLauncher(hub_plan)


class AsyncProviderLaunchers:
    """The asyncio flavour of ``ProviderLaunchers``, for ``AsyncEnvClient`` subclasses."""

    from_local_process = AsyncLauncher(local_process_plan)
    from_docker_image = AsyncLauncher(docker_image_plan)
    from_hub = AsyncLauncher(hub_plan)
