"""The server under test: one already running (`--url`), or one verify starts and stops.

`--local` serves the env with env.toml's `[server] command` (as `from_local_process()` does);
`--docker` runs env.toml's `[docker] image` (as `from_docker_image()` does). A server verify
started can be started again after it died, so later checks still have a server.
"""

from __future__ import annotations

from envgen_runtime import EnvgenRuntimeError, LocalDockerProvider, LocalProcessProvider, Provider

from generator.errors import EnvgenError
from generator.schema.loader import Layout
from generator.schema.manifest import Manifest


class TargetError(EnvgenError):
    """The server to verify cannot be reached or started."""


class Target:
    """Where the server is, and how to bring it back when verify owns it."""

    def __init__(self, url: str | None, provider: Provider | None) -> None:
        self._url = url
        self._provider = provider

    @classmethod
    def at_url(cls, url: str) -> Target:
        return cls(url.rstrip("/"), None)

    @classmethod
    def local(cls, layout: Layout, manifest: Manifest, transport: str | None = None) -> Target:
        """Serve with env.toml's command, its `{transport}` the one verify will speak."""
        if not manifest.server_command:
            raise TargetError(
                f"{manifest.name} has no [server] command in env.toml",
                hint="add one, or verify a running server with --url",
            )
        provider = LocalProcessProvider(
            manifest.server_command,
            health_path=manifest.health_path,
            startup_timeout_s=manifest.startup_timeout_s,
            cwd=layout.root,
            transport=transport or manifest.transport,
        )
        return cls._started(provider)

    @classmethod
    def docker(cls, manifest: Manifest, transport: str | None = None) -> Target:
        """Run the env's image, serving the protocol verify will speak."""
        if not manifest.docker_image:
            raise TargetError(
                f"{manifest.name} has no [docker] image in env.toml",
                hint="add one, or use --local / --url",
            )
        provider = LocalDockerProvider(
            manifest.docker_image,
            port=manifest.docker_port,
            health_path=manifest.health_path,
            startup_timeout_s=manifest.startup_timeout_s,
            env_name=manifest.name,
            transport=transport or manifest.transport,
        )
        return cls._started(provider)

    @classmethod
    def _started(cls, provider: Provider) -> Target:
        try:
            url = provider.start()
        except EnvgenRuntimeError as exc:
            raise TargetError(f"the server did not start: {exc}") from None
        return cls(url, provider)

    @property
    def url(self) -> str:
        if self._url is None:
            raise TargetError("the server is not running")
        return self._url

    @property
    def can_restart(self) -> bool:
        return self._provider is not None

    def restart(self) -> None:
        """Start the server again (after it died); only for a server verify started."""
        if self._provider is None:
            raise TargetError("cannot restart a server given by --url")
        self._provider.stop()
        self._url = self._provider.start()

    def close(self) -> None:
        if self._provider is not None:
            self._provider.stop()
