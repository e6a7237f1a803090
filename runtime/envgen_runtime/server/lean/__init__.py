"""The lean backend: envgen's own app on starlette and uvicorn, without openenv or gradio.

It speaks openenv 0.10's ``/ws`` protocol and envgen's stateful HTTP protocol byte for byte
(``session``: the messages and replies, no I/O; ``app``: the routes), so envgen's clients and
openenv's ``EnvClient`` play against it unchanged, for a fraction of openenv's start-up time.
"""

from __future__ import annotations

from .app import lean_app

__all__ = ["lean_app"]
