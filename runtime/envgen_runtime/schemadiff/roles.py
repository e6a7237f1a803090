"""The roles a schema plays on the wire, and which side writes each."""

from __future__ import annotations

from typing import Literal

Role = Literal["action", "observation", "state", "reset"]
ROLES: tuple[Role, ...] = ("action", "observation", "state", "reset")
CLIENT_WRITTEN: tuple[Role, ...] = ("action", "reset")
"""Roles the client writes and the server reads: the reset parameters go the action's way."""


def writer_is_old(role: Role) -> bool:
    """The action and reset parameters are written by (old) clients; the rest by the server."""
    return role in CLIENT_WRITTEN
