"""Where the built-in I/O exceptions become the runtime's own (see ``core.errors``).

What both transports meet: ``OSError`` and ``TimeoutError`` (``HttpProtocolError`` among
them), bad JSON, and the server's "episode ended" refusal (``episode_ended``, called by both
protocols' reply mapping). Library errors map beside their users: HTTP error replies in
``http.engine``, websockets' in ``websocket.errors``, docker's in ``providers.docker``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from ..core.errors import (
    EPISODE_ENDED,
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EpisodeEndedError,
    ProtocolError,
)
from ..core.text import quote, redact_url, truncate


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


_LAUNCH_HINT = "({client}.from_local_process(...) can start it for you)"


def for_client(exc: EnvgenRuntimeError, client: str) -> EnvgenRuntimeError:
    """``exc`` with its launch hint naming the env's own class (``EchoEnv``), not EnvClient.

    The transports do not know which generated class they serve; the client does, and calls
    this on every error it raises.
    """
    generic = _LAUNCH_HINT.format(client="EnvClient")
    if client != "EnvClient" and generic in exc.message:
        exc.args = (exc.message.replace(generic, _LAUNCH_HINT.format(client=client)),)
    return exc


def episode_ended(
    text: str,
    *,
    code: str | None,
    status: int | None,
    body: str,
    op: str,
    where: str = "the server",
) -> EpisodeEndedError | None:
    """EpisodeEndedError when a server error reply is the refusal of a step after done.

    Recognised by the code ``EPISODE_ENDED`` (envgen's HTTP app sends it as ``code``) or a
    message starting with it (over WebSocket openenv sends the server's exception text under
    ``EXECUTION_ERROR``), so both transports raise the same type.
    """
    if code != EPISODE_ENDED and not text.lstrip().startswith(EPISODE_ENDED):
        return None
    message = (
        f"{op} failed: the episode has ended (its last step returned done=true), so {where} "
        f"refused the step: call reset() to start the next episode ({truncate(text.strip())})"
    )
    return EpisodeEndedError(status, body, op, code=code, message=message)


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

    ``connect`` says the exception came from opening a connection, so nothing was sent
    (and ``connect_timeout_s``, default ``timeout_s``, was the limit); ``timeout_hint`` is
    appended to a read timeout's message.
    """
    if isinstance(exc, EnvgenRuntimeError):
        return exc
    where = redact_url(url)
    if isinstance(exc, TimeoutError):
        limit = connect_timeout_s if connect and connect_timeout_s is not None else timeout_s
        within = f"within {limit:g} s" if limit is not None else "within the timeout"
        if connect:  # nothing was sent: the hint about a lost reply does not apply
            message = f"{op} failed: could not connect to {where} {within}"
        else:
            message = f"{op} failed: no reply from {where} {within}{timeout_hint}"
        return EnvTimeoutError(message, op=op, url=url, timeout_s=limit, during_connect=connect)
    if isinstance(exc, OSError):
        if any(isinstance(e, ConnectionRefusedError) for e in exception_chain(exc)):
            message = (
                f"{op} failed: connection refused by {where}. Is the server running on that "
                f"host and port? {_LAUNCH_HINT.format(client='EnvClient')}"
            )
            connect = True
        elif connect:
            message = f"{op} failed: could not connect to {where}: {reason_of(exc)}"
        else:
            message = (
                f"{op} failed: lost or could not open the connection to {where}: {reason_of(exc)}"
            )
        return EnvConnectionError(message, op=op, url=url, during_connect=connect)
    if isinstance(exc, json.JSONDecodeError):
        received = quote(exc.doc)
        message = f"{op} failed: reply is not valid JSON ({exc.msg}); received: {received}"
        return ProtocolError(message, received=received, op=op)
    return None


@contextmanager
def translate(
    op: str, url: str, timeout_s: float | None, *, timeout_hint: str = "", connect: bool = False
) -> Iterator[None]:
    """Re-raise low-level I/O exceptions from the block as runtime errors (``map_exception``)."""
    try:
        yield
    except Exception as exc:
        mapped = map_exception(
            exc, op=op, url=url, timeout_s=timeout_s, timeout_hint=timeout_hint, connect=connect
        )
        if mapped is None or mapped is exc:
            raise
        raise mapped from exc
