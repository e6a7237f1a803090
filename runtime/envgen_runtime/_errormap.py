"""The one place where low-level exceptions become the runtime's own (see ``_exceptions``).

Transports wrap their I/O in ``translate(...)``; the codec calls ``validation_error(...)``;
reply parsing goes through ``parse_json_object(...)`` and ``ws_error(...)`` (HTTP error
replies: ``_http_engine.http_error``). websockets and the docker SDK are looked up in
``sys.modules`` rather than imported, so this module stays cheap to import: an exception
from a library that was never imported cannot occur. Built-in ``OSError`` and
``TimeoutError`` map here, the HTTP engine's own ``_http_wire.HttpProtocolError`` among them.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ._exceptions import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    ProtocolError,
    ProviderError,
    ServerError,
    ServerValidationError,
    ValidationIssue,
)

if TYPE_CHECKING:
    import pydantic

RECEIVED_LIMIT = 500
"""How much of an unexpected reply is quoted in an error (characters)."""

BODY_LIMIT = 2000
"""How much of an error reply's body is kept on a ServerError (characters)."""

# Server error codes after which an OpenEnv server closes the WebSocket itself.
SESSION_ENDING_CODES = frozenset({"CAPACITY_REACHED", "FACTORY_ERROR", "SESSION_ERROR"})

_MESSAGE_TOO_BIG = 1009  # the WebSocket close code a client sends for a message too big

_REQUEST_ROLES = {"step": "action", "reset": "reset request", "state": "state request"}


def truncate(text: str, limit: int = RECEIVED_LIMIT) -> str:
    """Shorten ``text`` for a message, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def quote(data: bytes | str | Any, limit: int = RECEIVED_LIMIT) -> str:
    """Printable, truncated form of whatever arrived, for ProtocolError.received."""
    if isinstance(data, bytes | bytearray):
        text = bytes(data).decode("utf-8", errors="replace")
    elif isinstance(data, str):
        text = data
    else:
        try:  # a decoded reply: show it as the JSON text it came as, not a Python repr
            text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            text = repr(data)
    return truncate(text, limit)


@functools.lru_cache(maxsize=256)
def redact_url(url: str) -> str:
    """Drop credentials and query values from a URL before it goes into a message.

    Cached: a client has a handful of URLs, and each reply names one.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = "..." if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def request_role(op: str) -> str:
    """What a server-side validation error is about, named for the caller."""
    return _REQUEST_ROLES.get(op, f"{op} request")


# --------------------------------------------------------------------------- validation


def _loc_part(part: Any) -> str | int:
    return part if isinstance(part, str | int) and not isinstance(part, bool) else str(part)


def _input_repr(value: Any) -> str:
    return truncate(repr(value), 60)


def issues_from_pydantic(exc: pydantic.ValidationError) -> list[ValidationIssue]:
    """One ValidationIssue per pydantic error, keeping loc, message and error type."""
    return [
        ValidationIssue(
            loc=tuple(_loc_part(p) for p in err["loc"]),
            message=err["msg"],
            type=err["type"],
            input_repr=_input_repr(err.get("input")),
        )
        for err in exc.errors(include_url=False)
    ]


def issues_from_wire(errors: Any) -> list[ValidationIssue] | None:
    """Parse a pydantic-style error list sent by a server (422 ``detail``, WS ``errors``).

    Returns None when the list is not in that shape, so the caller falls back to a plain
    ServerError instead of inventing field names.
    """
    if not isinstance(errors, list) or not errors:
        return None
    issues: list[ValidationIssue] = []
    for err in errors:
        if not isinstance(err, Mapping) or not isinstance(err.get("msg"), str):
            return None
        loc = err.get("loc", [])
        if not isinstance(loc, list | tuple):
            loc = [loc]
        issues.append(
            ValidationIssue(
                loc=tuple(_loc_part(p) for p in loc),
                message=err["msg"],
                type=str(err.get("type", "")),
                input_repr=_input_repr(err["input"]) if "input" in err else None,
            )
        )
    return issues


def validation_error(
    role: str, exc: pydantic.ValidationError, *, hint: str = ""
) -> EnvValidationError:
    """Client-side validation failure of a generated model, naming every failing field."""
    issues = issues_from_pydantic(exc)
    count = len(issues)
    noun = "error" if count == 1 else "errors"
    lines = "\n".join(f"  - {issue.describe()}" for issue in issues[:20])
    if count > 20:
        lines += f"\n  ... and {count - 20} more"
    suffix = f"; {hint}" if hint else ""
    message = f"{role} failed validation ({count} {noun}){suffix}:\n{lines}"
    return EnvValidationError(role, issues, message=message)


# --------------------------------------------------------------------------- replies


def parse_json_object(data: bytes | str, *, op: str, source: str) -> dict[str, Any]:
    """Decode a reply that must be a JSON object, else ProtocolError quoting it."""
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(
            f"{op} failed: {source} is not valid JSON ({exc}); received: {quote(data)}",
            received=quote(data),
            op=op,
        ) from exc
    if not isinstance(value, dict):
        raise ProtocolError(
            f"{op} failed: {source} must be a JSON object, got {type(value).__name__}; "
            f"received: {quote(data)}",
            received=quote(data),
            op=op,
        )
    return value


def dumps_body(body: Mapping[str, Any], *, op: str) -> str:
    """Serialise a request body; an unserialisable value is the caller's validation error."""
    try:
        return json.dumps(body, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        issue = ValidationIssue(loc=(), message=str(exc), type="json_serialization")
        raise EnvValidationError(
            request_role(op),
            [issue],
            message=f"{op} failed: the request body cannot be sent as JSON: {exc}",
        ) from exc


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
    hint = ""
    if code_str == "CAPACITY_REACHED":
        hint = " (the server holds its maximum number of sessions; close other clients or retry)"
    elif code_str in SESSION_ENDING_CODES:
        hint = " (the server closed the session)"
    message = f"{op} failed: server error {code_str or 'UNKNOWN'}{hint}: {truncate(text_str)}"
    return ServerError(None, body, op, code=code_str, message=message)


# --------------------------------------------------------------------------- I/O errors


def _chain(exc: BaseException) -> list[BaseException]:
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


def _reason(exc: BaseException) -> str:
    """The most specific human text in an exception chain, e.g. 'Connection refused'."""
    for item in reversed(_chain(exc)):
        if isinstance(item, OSError) and item.strerror:
            return item.strerror
    return truncate(str(exc) or type(exc).__name__, 300)


def _connection_error(
    exc: BaseException, op: str, url: str, *, during_connect: bool
) -> EnvConnectionError:
    chain = _chain(exc)
    where = redact_url(url)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        message = (
            f"{op} failed: connection refused by {where}. Is the server running on that "
            "host and port? (EnvClient.from_local_process(...) can start it for you)"
        )
        during_connect = True
    elif during_connect:
        message = f"{op} failed: could not connect to {where}: {_reason(exc)}"
    else:
        message = f"{op} failed: lost or could not open the connection to {where}: {_reason(exc)}"
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
    ws_exc = sys.modules.get("websockets.exceptions")
    if ws_exc is not None and isinstance(exc, ws_exc.WebSocketException):
        return _map_websockets(exc, ws_exc, op=op, url=url, connect=connect)
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


def _map_websockets(
    exc: BaseException, ws_exc: Any, *, op: str, url: str, connect: bool
) -> EnvgenRuntimeError:
    where = redact_url(url)
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
        message = (
            f"{op} failed: the WebSocket handshake with {where} was answered with HTTP {status}. "
            "Does this server speak the OpenEnv WebSocket protocol (/ws)? For a stateful HTTP "
            "server use transport='http'."
        )
        if status in (502, 503, 504):
            message = (
                f"{op} failed: the WebSocket handshake with {where} was answered with HTTP "
                f"{status} (the server or a proxy in front of it is unavailable)"
            )
        return ServerError(status, body, op, message=message)
    if isinstance(exc, ws_exc.InvalidURI):
        return EnvConnectionError(f"{op} failed: invalid WebSocket URL {where}", op=op, url=url)
    if connect and isinstance(exc, ws_exc.InvalidHandshake):
        return EnvConnectionError(
            f"{op} failed: the WebSocket handshake with {where} failed: {truncate(str(exc), 300)}",
            op=op,
            url=url,
            during_connect=True,
        )
    received = quote(str(exc))
    return ProtocolError(
        f"{op} failed: WebSocket protocol error with {where}: {received}",
        received=received,
        op=op,
    )


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


# --------------------------------------------------------------------------- Docker
# The docker SDK is imported only by ``_docker``; its exceptions are looked up here in
# ``sys.modules`` like the other libraries'. Every failure becomes a ProviderError.

DOCKER_START_HINT = (
    "Start an engine: as root run `dockerd &` (on Debian install it first with "
    "`apt-get install docker.io`) or `systemctl start docker`; in the envgen repository "
    "`scripts/ensure-docker.sh` does both. For a remote engine set DOCKER_HOST."
)


def _docker_unreachable(exc: BaseException, chain: list[BaseException]) -> bool:
    requests_mod = sys.modules.get("requests")
    if requests_mod is not None and any(isinstance(e, requests_mod.ConnectionError) for e in chain):
        return True
    if any(isinstance(e, FileNotFoundError | ConnectionError) for e in chain):
        return True
    # docker.from_env() probes the API version and wraps what went wrong in a message.
    return "Error while fetching server API version" in str(exc)


def map_docker_exception(
    exc: BaseException, *, action: str, engine: str
) -> EnvgenRuntimeError | None:
    """The ProviderError for an exception from the docker SDK, or None for a bug.

    ``action`` says what was being done (``starting container of image 'x'``), ``engine``
    where the engine was expected (``unix:///var/run/docker.sock``). An unreachable engine
    gets a message that says how to start one.
    """
    if isinstance(exc, EnvgenRuntimeError):
        return exc
    errors = sys.modules.get("docker.errors")
    if errors is not None and isinstance(exc, errors.APIError):
        explanation = exc.explanation or str(exc)
        if isinstance(explanation, bytes):
            explanation = explanation.decode("utf-8", errors="replace")
        status = f" HTTP {exc.status_code}" if exc.status_code else " with an error"
        return ProviderError(
            f"{action} failed: the Docker engine answered{status}: "
            f"{truncate(str(explanation).strip(), 1000)}"
        )
    chain = _chain(exc)
    if any(isinstance(e, PermissionError) for e in chain):
        return ProviderError(
            f"{action} failed: permission denied on the Docker engine's socket {engine}: "
            "run as root or add this user to the docker group"
        )
    requests_mod = sys.modules.get("requests")
    timed_out = any(isinstance(e, TimeoutError) for e in chain) or (
        requests_mod is not None and any(isinstance(e, requests_mod.Timeout) for e in chain)
    )
    if timed_out and not any(isinstance(e, ConnectionRefusedError) for e in chain):
        return ProviderError(
            f"{action} failed: the Docker engine at {engine} did not answer in time "
            f"({_reason(exc)})"
        )
    if _docker_unreachable(exc, chain):
        return ProviderError(
            f"{action} failed: cannot reach the Docker engine at {engine} ({_reason(exc)}). "
            + DOCKER_START_HINT
        )
    if errors is not None and isinstance(exc, errors.DockerException):
        return ProviderError(f"{action} failed: {truncate(str(exc), 1000)}")
    return None


@contextmanager
def translate_docker(action: str, engine: str) -> Iterator[None]:
    """Re-raise docker SDK (and underlying I/O) exceptions from the block as ProviderError."""
    try:
        yield
    except EnvgenRuntimeError:
        raise
    except Exception as exc:
        mapped = map_docker_exception(exc, action=action, engine=engine)
        if mapped is None:
            raise
        raise mapped from exc
