"""Byte-level misbehaviour both protocols of the fault server share (asyncio streams)."""

from __future__ import annotations

import asyncio
import socket
import struct

from fault_env import TRICKLE_S


def rst_close(writer: asyncio.StreamWriter) -> None:
    """Close the connection with a TCP reset (SO_LINGER 0): 'Connection reset by peer'."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def trickle(writer: asyncio.StreamWriter, data: bytes) -> None:
    for i in range(len(data)):
        writer.write(data[i : i + 1])
        await writer.drain()
        await asyncio.sleep(TRICKLE_S)


async def hold(reader: asyncio.StreamReader) -> None:
    """Frozen: never answer and never act on what arrives, until the client goes away."""
    while await reader.read(65536):
        pass


async def truncate(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Send the first half of a reply, then close (TCP FIN): a body cut short."""
    writer.write(data[: len(data) // 2])
    await writer.drain()
    writer.close()
