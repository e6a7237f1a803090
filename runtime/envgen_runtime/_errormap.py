"""Where the built-in I/O exceptions become the runtime's own (see ``_exceptions``).

What both transports meet: ``OSError`` and ``TimeoutError`` (the HTTP engine's own
``_http_wire.HttpProtocolError`` among them) and bad JSON. Transports wrap their I/O in
``translate(...)``. Library errors map beside their users: error replies in
``_http_engine.http_error`` and ``_wsengine.ws_error``, websockets' exceptions in
``_wsengine.map_websockets`` (falling back to ``map_exception`` here), docker's in
``_docker``; pydantic's in ``_exceptions``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from ._exceptions import EnvConnectionError, EnvgenRuntimeError, EnvTimeoutError, ProtocolError
from ._text import quote, redact_url, truncate

# --------------------------------------------------------------------------- I/O errors


def exception_chain(exc: BaseException) -> list[BaseException]:
    """The exception and everything it wraps (cause, context, args, urllib3 ``reason``)."""
    seen: set[int] = set()
    out: list[BaseException] = []
    stack: list[BaseException] = [exc]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        out.append(cur)
        linked = [cur.__cause__, cur.__context__, getattr(cur, "reason", None), *cur.args]
        stack.extend(x for x in linked if isinstance(x, BaseException))
    return out


def reason_of(exc: BaseException) -> str:
    """The most specific human text in an exception chain, e.g. 'Connection refused'."""
    for item in reversed(exception_chain(exc)):
        if isinstance(item, OSError) and item.strerror:
            return item.strerror
    return truncate(str(exc) or type(exc).__name__, 300)


def _connection_error(
    exc: BaseException, op: str, url: str, *, during_connect: bool
) -> EnvConnectionError:
    chain = exception_chain(exc)
    where = redact_url(url)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        message = (
            f"{op} failed: connection refused by {where}. Is the server running on that "
            "host and port? (EnvClient.from_local_process(...) can start it for you)"
        )
        during_connect = True
    elif during_connect:
        message = f"{op} failed: could not connect to {where}: {reason_of(exc)}"
    else:
        message = f"{op} failed: lost or could not open the connection to {where}: {reason_of(exc)}"
    return EnvConnectionError(message, op=op, url=url, during_connect=during_connect)


def _timeout_error(
    op: str,
    url: str,
    timeout_s: float | None,
    extra: str = "",
    *,
    during_connect: bool = False,
) -> EnvTimeoutError:
    limit = f"{timeout_s:g} s" if timeout_s is not None else "the timeout"
    if during_connect:
        # Nothing was sent, so the transport's hint about a lost reply does not apply.
        message = f"{op} failed: could not connect to {redact_url(url)} within {limit}"
    else:
        message = f"{op} failed: no reply from {redact_url(url)} within {limit}{extra}"
    return EnvTimeoutError(
        message, op=op, url=url, timeout_s=timeout_s, during_connect=during_connect
    )


def map_exception(
    exc: BaseException,
    *,
    op: str,
    url: str,
    timeout_s: float | None,
    timeout_hint: str = "",
    connect: bool = False,
    connect_timeout_s: float | None = None,
) -> EnvgenRuntimeError | None:
    """The runtime error for a low-level one, or None for a bug that should propagate.

    ``connect`` says the exception came from opening a connection, so nothing was sent.
    ``timeout_s`` is the read timeout and ``connect_timeout_s`` (default: the same) the
    connect timeout.
    """
    if isinstance(exc, EnvgenRuntimeError):
        return exc
    limit_connect = connect_timeout_s if connect_timeout_s is not None else timeout_s
    if isinstance(exc, TimeoutError):
        if connect:
            return _timeout_error(op, url, limit_connect, during_connect=True)
        return _timeout_error(op, url, timeout_s, timeout_hint)
    if isinstance(exc, OSError):
        return _connection_error(exc, op, url, during_connect=connect)
    if isinstance(exc, json.JSONDecodeError):
        return ProtocolError(
            f"{op} failed: reply is not valid JSON ({exc.msg}); received: {quote(exc.doc)}",
            received=quote(exc.doc),
            op=op,
        )
    return None


@contextmanager
def translate(
    op: str,
    url: str,
    timeout_s: float | None,
    *,
    timeout_hint: str = "",
    connect: bool = False,
    connect_timeout_s: float | None = None,
) -> Iterator[None]:
    """Re-raise low-level I/O exceptions from the block as runtime errors.

    ``timeout_hint`` is appended to a read timeout's message (the WebSocket transport uses
    it to say that the session was dropped); ``connect`` marks a block that only opens a
    connection. See ``map_exception``.
    """
    try:
        yield
    except EnvgenRuntimeError:
        raise
    except Exception as exc:
        mapped = map_exception(
            exc,
            op=op,
            url=url,
            timeout_s=timeout_s,
            timeout_hint=timeout_hint,
            connect=connect,
            connect_timeout_s=connect_timeout_s,
        )
        if mapped is None:
            raise
        raise mapped from exc
