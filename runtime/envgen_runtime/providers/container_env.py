"""The variables envgen sets in a server's container: ``ENVGEN_PROTOCOL`` picks the protocol.

envgen's images (``envgen image`` and the examples' Dockerfiles) serve env.toml's transport
unless ``ENVGEN_PROTOCOL`` says otherwise; a client that speaks the other protocol must start
the container with it, or its first request meets the wrong app.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.spec import TRANSPORTS

PROTOCOL_VAR = "ENVGEN_PROTOCOL"
"""The container variable envgen's images read to pick the protocol they serve."""


def with_protocol(environment: Any, transport: str) -> dict[str, str]:
    """docker-py's ``environment`` (a mapping or ``KEY=VALUE`` strings) with ENVGEN_PROTOCOL.

    A different ENVGEN_PROTOCOL already there is refused: the client would speak one protocol
    to a server serving the other.
    """
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {TRANSPORTS}, got {transport!r}")
    if environment is None:
        chosen: dict[str, str] = {}
    elif isinstance(environment, Mapping):
        chosen = {str(k): str(v) for k, v in environment.items()}
    else:
        chosen = dict(str(item).partition("=")[::2] for item in environment)
    given = chosen.get(PROTOCOL_VAR)
    if given is not None and given != transport:
        raise ValueError(
            f"environment sets {PROTOCOL_VAR}={given!r} but the transport is {transport!r}: "
            f"pass transport={given!r} instead (it sets {PROTOCOL_VAR} and the client's protocol)"
        )
    chosen[PROTOCOL_VAR] = transport
    return chosen
