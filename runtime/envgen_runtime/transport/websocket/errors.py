"""websockets' exceptions and OpenEnv's error messages as the runtime's errors.

``ws_error`` reads an OpenEnv ``{"type": "error"}`` message; ``map_ws_exception`` maps what a
shell raised: websockets' exceptions here (found in ``sys.modules``: this module is imported
with the package and never imports websockets), the rest in ``transport.errormap``.
``Catcher`` is the context manager that ``engine.Flow`` and ``frames.Hop`` handle a failed
try with. Apart from ``engine`` so that ``frames``, a layer below the session rules, does not
import them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from ...core.errors import (
    EnvConnectionError,
    EnvgenRuntimeError,
    ProtocolError,
    ServerError,
    ServerValidationError,
    issues_from_wire,
)
from ...core.jsonbody import request_role
from ...core.text import BODY_LIMIT, quote, redact_url, truncate
from ..errormap import episode_ended, map_exception

__all__ = ["SESSION_ENDING", "Catcher", "map_ws_exception", "ws_error"]

SESSION_ENDING = frozenset({"CAPACITY_REACHED", "FACTORY_ERROR", "SESSION_ERROR"})
"""Server error codes after which an OpenEnv server closes the WebSocket itself."""
_MESSAGE_TOO_BIG = 1009  # the WebSocket close code a client sends for a message too big


def ws_error(data: Any, *, op: str, raw: str) -> ServerError:
    """ServerError for an OpenEnv ``{"type": "error"}`` message, carrying its ``code``."""
    body = truncate(raw, BODY_LIMIT)
    if not isinstance(data, Mapping):
        return ServerError(None, body, op, message=f"{op} failed: server error: {quote(raw)}")
    code = data.get("code")
    code_str = str(code) if code is not None else None
    text = data.get("message")
    text_str = str(text) if text is not None else quote(raw)
    if code_str == "VALIDATION_ERROR":
        issues = issues_from_wire(data.get("errors"))
        if issues is not None:
            return ServerValidationError(
                request_role(op), issues, status=None, body=body, op=op, code=code_str
            )
    ended = episode_ended(text_str, code=code_str, status=None, body=body, op=op)
    if ended is not None:
        return ended
    hint = ""
    if code_str == "CAPACITY_REACHED":
        hint = " (the server holds its maximum number of sessions; close other clients or retry)"
    elif code_str in SESSION_ENDING:
        hint = " (the server closed the session)"
    message = f"{op} failed: server error {code_str or 'UNKNOWN'}{hint}: {truncate(text_str)}"
    return ServerError(None, body, op, code=code_str, message=message)


def map_websockets(
    exc: BaseException, ws_exc: Any, *, op: str, url: str, connect: bool
) -> EnvgenRuntimeError:
    """The runtime error for an exception of ``websockets.exceptions`` (module ``ws_exc``)."""
    where = redact_url(url)
    handshake = f"{op} failed: the WebSocket handshake with {where}"
    if isinstance(exc, ws_exc.ConnectionClosed):
        sent = exc.sent
        if sent is not None and sent.code == _MESSAGE_TOO_BIG:
            received = truncate(sent.reason, 200)
            return ProtocolError(
                f"{op} failed: the reply from {where} is larger than this client accepts "
                f"({received}), so the client refused it and closed the WebSocket (code "
                "1009); that session and its episode are gone. Raise the limit with the "
                "client option max_message_bytes=... (None: no limit), then call reset()",
                received=received,
                op=op,
            )
        frame = exc.rcvd
        if frame is None:
            detail = "no close frame"
        else:
            detail = f"close code {frame.code}"
            if frame.reason:
                detail += f", reason {truncate(frame.reason, 200)!r}"
        return EnvConnectionError(
            f"{op} failed: the server closed the WebSocket {where} ({detail}); that session "
            "and its episode are gone (call reset() to start a new episode on a new session)",
            op=op,
            url=url,
            during_connect=connect,
        )
    if isinstance(exc, ws_exc.InvalidStatus):
        response = exc.response
        status = int(response.status_code)
        body = quote(response.body or b"", BODY_LIMIT)
        message = f"{handshake} was answered with HTTP {status}"
        if status in (502, 503, 504):
            message += " (the server or a proxy in front of it is unavailable)"
        else:
            message += (
                ". Does this server speak the OpenEnv WebSocket protocol (/ws)? For a stateful "
                "HTTP server use transport='http'."
            )
        return ServerError(status, body, op, message=message)
    if isinstance(exc, ws_exc.InvalidURI):
        return EnvConnectionError(f"{op} failed: invalid WebSocket URL {where}", op=op, url=url)
    if connect and isinstance(exc, ws_exc.InvalidHandshake):
        detail = truncate(str(exc), 300)
        return EnvConnectionError(
            f"{handshake} failed: {detail}", op=op, url=url, during_connect=True
        )
    received = quote(str(exc))
    return ProtocolError(
        f"{op} failed: WebSocket protocol error with {where}: {received}",
        received=received,
        op=op,
    )


def map_ws_exception(
    exc: BaseException, *, op: str, url: str, connect: bool = False, **limits: Any
) -> BaseException:
    """The runtime error for an exception of a WebSocket shell; ``exc`` itself if none fits.

    websockets' exceptions map here, the rest (sockets, timeouts) in ``transport.errormap``, with
    ``limits`` (``timeout_s``, ``timeout_hint``, ``connect_timeout_s``) as it takes them.
    """
    if isinstance(exc, EnvgenRuntimeError) or not isinstance(exc, Exception):
        return exc
    ws_exc = sys.modules.get("websockets.exceptions")
    mapped: EnvgenRuntimeError | None
    if ws_exc is not None and isinstance(exc, ws_exc.WebSocketException):
        mapped = map_websockets(exc, ws_exc, op=op, url=url, connect=connect)
    else:
        mapped = map_exception(exc, op=op, url=url, connect=connect, **limits)
    if mapped is None:
        return exc
    mapped.__cause__ = exc
    return mapped


class Catcher:
    """A context manager that may swallow what its block raised (``caught`` decides)."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        return exc is not None and self.caught(exc)

    def caught(self, exc: BaseException) -> bool:
        """Whether ``exc`` is handled (else it propagates); may raise another one instead."""
        raise NotImplementedError
