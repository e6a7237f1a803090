"""Where the pool's servers come from, and whether one still lives.

``provider_factory`` turns the pool's ``provider=`` (a kind or a callable) into a maker of new
providers; ``start_server`` starts one in a worker thread; ``server_alive`` probes a server's
health endpoint and ``server_capacity`` reads the sessions it holds. None of it touches
the pool's slots or sessions, so it sits apart from ``aio``, which decides when servers are
started, probed and replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit

from ..core.spec import EnvSpec
from ..providers.base import Provider
from .slots import Server

__all__ = [
    "ProviderFactory",
    "ProviderKind",
    "provider_factory",
    "server_alive",
    "server_capacity",
    "start_server",
]

ProviderFactory = Callable[[], Provider]
"""Makes a new provider (not started) each time the pool needs a server."""

ProviderKind = Literal["local", "docker", "ray"]

_MAX_BODY = 64 * 1024  # a /metadata reply; more is not one worth reading


def provider_factory(
    provider: ProviderKind | ProviderFactory,
    options: dict[str, Any],
    spec: EnvSpec,
    transport: str,
    owner: str,
) -> ProviderFactory:
    """A maker of ``provider`` for ``spec``; ``owner`` (the pool's class name) goes in hints."""
    if callable(provider):
        if options:
            raise TypeError("provider_options apply to 'local', 'docker' or 'ray' only")
        return provider
    startup = options.pop("startup_timeout_s", spec.startup_timeout_s)
    common: dict[str, Any] = {"health_path": spec.health_path, "startup_timeout_s": startup}
    if provider in ("local", "ray"):
        from ..providers.local import LocalProcessProvider, server_hint
        from ..providers.ray import RayProvider

        kind: Callable[..., Provider] = LocalProcessProvider if provider == "local" else RayProvider
        command = options.pop("command", spec.server_command)
        options.setdefault(
            "missing_module_hint",
            server_hint(
                spec.name,
                spec.docker_image,
                f'{owner}(..., provider="docker")',
                f'{owner}(..., provider_options={{"command": [...], "cwd": "path/to/env-repo"}})',
            ),
        )
        return lambda: kind(command, transport=transport, **common, **options)
    if provider == "docker":
        from ..providers.docker import LocalDockerProvider

        image = options.pop("image", spec.docker_image)
        if not image:
            raise ValueError(f"environment {spec.name!r} has no docker image: pass image=")
        port = options.pop("port", spec.docker_port)
        return lambda: LocalDockerProvider(
            image, port=port, env_name=spec.name, transport=transport, **common, **options
        )
    raise ValueError(f"provider must be 'local', 'docker', 'ray' or a callable, not {provider!r}")


async def start_server(serial: int, provider: Provider, capacity: int) -> Server:
    """Start ``provider`` in a worker thread; stop it again if starting fails or is cancelled."""
    import asyncio

    server = Server(serial, provider, capacity)
    try:
        server.base_url = await asyncio.to_thread(server.provider.start)
    except BaseException:
        await asyncio.shield(asyncio.to_thread(server.provider.stop))
        raise
    return server


async def _get(
    server: Server, path: str, timeout_s: float, *, body: bool
) -> tuple[bytes, bytes] | None:
    """``GET path`` on ``server`` (HTTP/1.0: the reply ends with the connection): the status
    line and (with ``body``) the body, or None when it cannot be reached in ``timeout_s``."""
    import asyncio

    if server.lost or server.base_url is None:
        return None
    parts = urlsplit(server.base_url)
    request = f"GET {path} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n"
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout_s):
            host, port = parts.hostname or "127.0.0.1", parts.port or 80
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(request.encode("ascii"))
            status = await reader.readline()
            if not body:
                return status, b""
            reply = b""  # headers and body may come in several writes: read to the end
            while len(reply) < _MAX_BODY and (chunk := await reader.read(_MAX_BODY)):
                reply += chunk
        return status, reply.partition(b"\r\n\r\n")[2]
    except (OSError, TimeoutError):
        return None
    finally:
        if writer is not None:
            writer.close()


async def server_alive(server: Server, health_path: str, timeout_s: float) -> bool:
    """Whether ``server`` answers ``GET health_path`` with 200 (a dead process refuses).

    Asyncio, not ``probe_health`` in a thread: the default executor's few threads may all
    be busy starting replacement servers, and a lost node makes every probe wait out its
    timeout, so the probes must all run at once.
    """
    reply = await _get(server, health_path, timeout_s, body=False)
    return reply is not None and reply[0].split(b" ")[1:2] == [b"200"]


async def server_capacity(server: Server, timeout_s: float) -> int | None:
    """The sessions ``server`` says it holds: ``max_concurrent_envs`` in its ``/metadata``.

    envgen's servers publish it; None when the server does not (OpenEnv's own apps).
    """
    import json

    reply = await _get(server, "/metadata", timeout_s, body=True)
    if reply is None or reply[0].split(b" ")[1:2] != [b"200"]:
        return None
    try:
        value = json.loads(reply[1]).get("max_concurrent_envs")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
