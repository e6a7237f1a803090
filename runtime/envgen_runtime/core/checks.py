"""Argument checks that every layer makes the same way, with the same message."""

from __future__ import annotations


def positive(name: str, value: float | None) -> None:
    """Reject a limit that is not a positive number (None: not given)."""
    if value is not None and (isinstance(value, bool) or not value > 0):
        raise ValueError(f"{name} must be positive, got {value!r}")
