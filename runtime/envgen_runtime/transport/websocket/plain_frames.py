"""A step's usual frames, built and read directly: one final, uncompressed data frame.

websockets' sans-I/O protocol takes every frame through a ``Frame`` object and its generator
parser: general (fragments, extensions, control frames, errors) and about 3 us a frame each
way, as much as all the other client code of a small step. Nearly every frame a session sends
or reads is a whole text message in one frame, and nearly every reply arrives whole in one
read; for those, ``FrameEngine`` uses these functions and leaves the protocol where it was
(its parser waits at a frame boundary either way), and hands anything else to websockets.
"""

from __future__ import annotations

import os

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - websockets built without its C extension
    from websockets.utils import apply_mask

__all__ = ["MaskSource", "masked_text_frame", "whole_data_frame"]

_MASKS_PER_READ = 64
"""Masks taken from ``os.urandom`` at once (one system call per 64 frames, not one each)."""
_FIN_TEXT = 0x81
_FIN_BINARY = 0x82
_MASKED = 0x80


class MaskSource:
    """Client frame masks (RFC 6455 5.3: fresh and unpredictable): ``os.urandom``, read in bulk.

    One per connection; not shared between threads.
    """

    __slots__ = ("_at", "_pool")

    def __init__(self) -> None:
        self._pool = b""
        self._at = 0

    def take(self) -> bytes:
        """The next 4-byte mask; none is ever given twice."""
        at = self._at
        if at >= len(self._pool):
            self._pool, at = os.urandom(4 * _MASKS_PER_READ), 0
        self._at = at + 4
        return self._pool[at : at + 4]


def masked_text_frame(payload: bytes, mask: bytes) -> bytes:
    """A final client text frame of ``payload`` masked with ``mask``, as websockets writes it."""
    size = len(payload)
    if size < 126:
        head = bytes((_FIN_TEXT, _MASKED | size))
    elif size < 65536:
        head = bytes((_FIN_TEXT, _MASKED | 126)) + size.to_bytes(2, "big")
    else:
        head = bytes((_FIN_TEXT, _MASKED | 127)) + size.to_bytes(8, "big")
    return head + mask + apply_mask(payload, mask)


def whole_data_frame(data: bytes, max_size: int | None) -> tuple[bool, memoryview] | None:
    """``(is_text, payload)`` when ``data`` is exactly one final, unmasked data frame with no
    reserved bits (no extension) of at most ``max_size`` bytes; None for anything else."""
    if len(data) < 2:
        return None
    first, second = data[0], data[1]
    if (first != _FIN_TEXT and first != _FIN_BINARY) or second & _MASKED:
        return None
    size = second
    start = 2
    if size == 126:
        size, start = int.from_bytes(data[2:4], "big"), 4
    elif size == 127:
        size, start = int.from_bytes(data[2:10], "big"), 10
    if len(data) != start + size or (max_size is not None and size > max_size):
        return None
    return first == _FIN_TEXT, memoryview(data)[start:]
