"""websockets' handshake logging without header values: tokens must not reach the logs.

Its own module so that ``logging`` is imported by the first WebSocket connection, not with
every client.
"""

from __future__ import annotations

import logging
from typing import Any


class RedactingLogger(logging.LoggerAdapter[logging.Logger]):
    """Passes records on to the logger ``name`` with header and query values blanked.

    websockets logs each handshake header as ``"> %s: %s"`` (and ``"< %s: %s"`` for the
    response) at DEBUG level; an Authorization header would otherwise reach the logs.
    """

    def __init__(self, name: str) -> None:
        super().__init__(logging.getLogger(name), {})

    def log(self, level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
        if msg in ("> %s: %s", "< %s: %s") and len(args) == 2:
            args = (args[0], "<redacted>")
        elif msg == "> GET %s HTTP/1.1" and len(args) == 1 and "?" in str(args[0]):
            args = (str(args[0]).split("?", 1)[0] + "?...",)  # query values may be secrets
        super().log(level, msg, *args, **kwargs)
