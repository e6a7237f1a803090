"""What a generated client knows about its environment, as one frozen value."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .checks import positive

TransportName = Literal["http", "websocket"]
TRANSPORTS: tuple[TransportName, ...] = ("http", "websocket")
_ENV_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class EnvSpec:
    """Static facts about one environment, written by the generator into ``SPEC``.

    ``server_command`` is an argv template; ``{python}``, ``{host}``, ``{port}`` and
    ``{transport}`` are filled in by ``LocalProcessProvider``. ``schemas_package`` names the
    package whose ``schemas.json`` holds the schemas the client was generated from and their
    hash (generated clients: their own package), which the client compares with the server's
    ``GET /schema`` at connect; ``schema_hash`` is for hand-written specs without one.
    ``auth_token_env`` names the environment variable holding a bearer token (env.toml's
    ``[auth] token_env``); the name is public, the token is read when a client is built.
    """

    name: str
    version: str
    transport: TransportName
    health_path: str = "/health"
    server_command: tuple[str, ...] = ()
    startup_timeout_s: float = 60.0
    docker_image: str | None = None
    docker_port: int = 8000
    schema_hash: str = ""
    auth_token_env: str | None = None
    schemas_package: str | None = None

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise ValueError(
                f"EnvSpec.transport must be one of {TRANSPORTS}, got {self.transport!r}"
            )
        if not self.health_path.startswith("/"):
            raise ValueError(f"EnvSpec.health_path must start with '/', got {self.health_path!r}")
        positive("EnvSpec.startup_timeout_s", self.startup_timeout_s)
        if self.auth_token_env is not None and not _ENV_VAR.match(self.auth_token_env):
            raise ValueError(
                "EnvSpec.auth_token_env must be an environment variable name such as "
                f"'ECHO_TOKEN', got {self.auth_token_env!r}"
            )
        if not isinstance(self.server_command, tuple):
            # A list would make the frozen spec mutable and unhashable.
            object.__setattr__(self, "server_command", tuple(self.server_command))
