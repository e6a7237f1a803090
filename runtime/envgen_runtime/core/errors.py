"""The runtime's exception tree.

Every failure a generated client can raise is an ``EnvgenRuntimeError``, so callers can catch
one type; the subclasses say what went wrong and carry the data needed to act on it::

    EnvgenRuntimeError              base; also raised when a closed client is used
    ├── EnvConnectionError          server unreachable, or the connection dropped mid-request
    │   └── SessionLostError        the episode's server-side environment is gone
    ├── EnvTimeoutError             no reply in time (a WebSocket is dropped: episode lost)
    ├── ProtocolError               a reply that breaks the wire protocol
    ├── ProviderError               a server process could not be started or never got ready
    ├── MissingExtraError           an optional library is missing (also an ``ImportError``)
    ├── ServerError                 the server answered with an error
    │   ├── EpisodeEndedError       a step after the episode ended (done): reset first
    │   ├── ToolError               a tool call failed on the server; the session goes on
    │   └── ServerValidationError   the server rejected a request as invalid
    ├── SchemaDriftError            the server's schemas break this client (checked at connect)
    └── EnvValidationError          a value failed the generated models on the client side
        └── ServerValidationError   (the same class as above: it has both parents)

``SchemaDriftWarning`` (a ``UserWarning``) says the server's schemas changed compatibly.

So ``except ServerError`` catches every error the server reported, and
``except EnvValidationError`` catches every validation failure wherever it was detected.

Low-level exceptions are translated next to the code that meets them
(``transport.errormap``, ``transport.websocket.errors``, ``transport.http.engine``,
``providers.docker``; pydantic's and a server's validation errors here). Messages never
contain header values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .text import truncate

if TYPE_CHECKING:
    import pydantic


def _restore(cls: type[EnvgenRuntimeError], message: str, state: dict[str, Any]) -> Any:
    """Rebuild a pickled runtime error without calling its keyword-only constructor."""
    obj = cls.__new__(cls, message)
    Exception.__init__(obj, message)
    obj.__dict__.update(state)
    return obj


class EnvgenRuntimeError(Exception):
    """Base of every error raised by the runtime, so callers can catch one type."""

    attempts: int = 1
    """How many times the operation was tried before this error (see ``RetryPolicy``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)

    @property
    def message(self) -> str:
        """The human-readable message (the same text as ``str(error)``)."""
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[Any, ...]:
        # Subclasses take keyword-only data; rebuild from state so errors survive pickling
        # (multiprocessing workers send them back to the parent).
        return (_restore, (type(self), self.message, dict(self.__dict__)))


class EnvConnectionError(EnvgenRuntimeError):
    """The server could not be reached, or it dropped the connection during a request.

    ``during_connect`` is True when the connection could not even be opened (refused, no
    route, handshake failed): the request was certainly not delivered.
    """

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        url: str | None = None,
        during_connect: bool = False,
    ) -> None:
        super().__init__(message)
        self.op = op
        self.url = url
        self.during_connect = during_connect


class SessionLostError(EnvConnectionError):
    """The server-side environment of this episode is gone; ``episode_id`` is cleared.

    Over WebSocket the session was lost: every later ``step()``/``state()`` raises this too,
    instead of talking to a fresh environment. Over HTTP the server restarted (its step
    count went back) and that step's result is discarded. ``reset()`` starts a new episode.
    """


class EnvTimeoutError(EnvgenRuntimeError):
    """No reply arrived in time; a WebSocket session is dropped (its episode is lost).

    ``during_connect`` is True when the connection could not be opened in time (the request
    was not sent); ``timeout_s`` is the limit that ran out.
    """

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        url: str | None = None,
        timeout_s: float | None = None,
        during_connect: bool = False,
    ) -> None:
        super().__init__(message)
        self.op = op
        self.url = url
        self.timeout_s = timeout_s
        self.during_connect = during_connect


class ProtocolError(EnvgenRuntimeError):
    """A reply did not follow the wire protocol; ``received`` quotes it (truncated)."""

    def __init__(self, message: str, *, received: str, op: str | None = None) -> None:
        super().__init__(message)
        self.received = received
        self.op = op


class ProviderError(EnvgenRuntimeError):
    """A server could not be started; ``output`` holds the tail of what it printed."""

    def __init__(self, message: str, *, output: str = "", exit_code: int | None = None) -> None:
        super().__init__(message)
        self.output = output
        self.exit_code = exit_code


class MissingExtraError(EnvgenRuntimeError, ImportError):
    """An optional library is missing; ``extra`` names the ``envgen-runtime[...]`` extra."""

    def __init__(self, message: str, *, extra: str, module: str) -> None:
        super().__init__(message)
        self.extra = extra
        self.module = module


class ServerError(EnvgenRuntimeError):
    """The server answered with an error.

    ``status`` is the HTTP status (None over WebSocket), ``code`` the WebSocket error code
    (e.g. ``EXECUTION_ERROR``, ``CAPACITY_REACHED``; None over HTTP), ``body`` the reply text
    (truncated) and ``op`` the operation (``reset``, ``step``, ``state`` or ``connect``).
    """

    def __init__(
        self,
        status: int | None,
        body: str,
        op: str,
        *,
        code: str | None = None,
        message: str | None = None,
    ) -> None:
        if message is None:
            where = f"HTTP {status}" if status is not None else f"error {code or 'UNKNOWN'}"
            message = f"{op} failed: the server answered {where}: {body}"
        super().__init__(message)
        self.status = status
        self.code = code
        self.body = body
        self.op = op


EPISODE_ENDED = "EPISODE_ENDED"
"""The error code (HTTP reply ``code``, WebSocket message prefix) of a step after done."""


class EpisodeEndedError(ServerError):
    """The server refused a step because the episode had ended (its last reply had done).

    Raised alike over HTTP and WebSocket; ``reset()`` starts the next episode.
    """


class ToolError(ServerError):
    """A tool call failed on the server: the tool raised, refused its arguments, timed out or
    was not found. Nothing else went wrong: the session and its episode go on, so the next
    call or step is served as usual.

    ``tool`` is the tool's wire name, ``tool_message`` the server's message as sent,
    ``error_type`` OpenEnv's category (``execution_error``, ``invalid_args``,
    ``tool_not_found``, ``timeout``, ``transport_error``; ``tool_error`` for a result the tool
    itself marked ``is_error``; also ``code``). ``rpc_code``: the JSON-RPC error code when
    the call went over MCP's JSON-RPC and failed as an error reply (None otherwise).
    """

    def __init__(
        self,
        tool: str,
        tool_message: str,
        *,
        error_type: str = "tool_error",
        rpc_code: int | None = None,
    ) -> None:
        message = f"tool {tool!r} failed ({error_type}): {truncate(tool_message, 2000)}"
        super().__init__(None, tool_message, "step", code=error_type, message=message)
        self.tool = tool
        self.tool_message = tool_message
        self.error_type = error_type
        self.rpc_code = rpc_code


class SchemaDriftError(EnvgenRuntimeError):
    """The server publishes schemas that break this client; raised by its first reset.

    ``role`` and ``pointer`` (into the server's ``GET /schema``) locate the first breaking
    change, ``rule`` is its ``envgen diff`` rule id, ``url`` the server's ``/schema``.
    """

    def __init__(self, message: str, *, url: str, role: str, pointer: str, rule: str) -> None:
        super().__init__(message)
        self.url = url
        self.role = role
        self.pointer = pointer
        self.rule = rule


class SchemaDriftWarning(UserWarning):
    """The server's schemas differ from the client's compatibly: regenerating would help."""


@dataclass(frozen=True)
class ValidationIssue:
    """One failing field: where it is (``loc``) and what is wrong with it (``message``)."""

    loc: tuple[str | int, ...]
    message: str
    type: str = ""
    input_repr: str | None = None

    @property
    def path(self) -> str:
        """Dotted path with list indexes in brackets, e.g. ``moves[0].x``."""
        out = ""
        for part in self.loc:
            if isinstance(part, int):
                out += f"[{part}]"
            else:
                out += f".{part}" if out else str(part)
        return out or "<root>"

    @property
    def pointer(self) -> str:
        """JSON Pointer (RFC 6901) to the field, e.g. ``/moves/0/x``."""
        return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in self.loc)

    def describe(self) -> str:
        """One line for an error message: path, pydantic's message, error type, input."""
        line = f"{self.path}: {self.message}"
        details = [self.type] if self.type else []
        if self.input_repr is not None:
            details.append(f"input: {self.input_repr}")
        if details:
            line += f" [{'; '.join(details)}]"
        return line


def _summary(issues: Sequence[ValidationIssue], limit: int = 20) -> tuple[str, str]:
    """'N error(s)' and the issues, one line each (at most ``limit``), for a message."""
    lines = [f"  - {issue.describe()}" for issue in issues[:limit]]
    if len(issues) > limit:
        lines.append(f"  ... and {len(issues) - limit} more")
    return f"{len(issues)} error" + ("" if len(issues) == 1 else "s"), "\n".join(lines)


class EnvValidationError(EnvgenRuntimeError):
    """A value failed validation; ``errors`` names each failing field.

    ``role`` says what was being validated: ``action``, ``observation``, ``state`` (the
    generated models' roles) or, for a server rejection, the request that was rejected.
    """

    def __init__(
        self,
        role: str,
        errors: Sequence[ValidationIssue],
        *,
        message: str | None = None,
        hint: str = "",
    ) -> None:
        self.role = role
        self.errors: list[ValidationIssue] = list(errors)
        if message is None:
            count, summary = _summary(self.errors)
            message = f"{role} failed validation ({count}){f'; {hint}' if hint else ''}:\n{summary}"
        # Not super(): in ServerValidationError's MRO the next class is ServerError.
        EnvgenRuntimeError.__init__(self, message)


class ServerValidationError(EnvValidationError, ServerError):
    """The server rejected a request as invalid (HTTP 422 or WebSocket VALIDATION_ERROR)."""

    def __init__(
        self,
        role: str,
        errors: Sequence[ValidationIssue],
        *,
        status: int | None,
        body: str,
        op: str,
        code: str | None = None,
    ) -> None:
        where = f"HTTP {status}" if status is not None else (code or "VALIDATION_ERROR")
        count, summary = _summary(errors)
        message = (
            f"{op} failed: the server rejected the {role} ({where}, {count}); "
            "does the client match the server's schema?\n" + summary
        )
        EnvValidationError.__init__(self, role, errors, message=message)
        ServerError.__init__(self, status, body, op, code=code, message=message)


def issues_from_wire(errors: Any) -> list[ValidationIssue] | None:
    """Parse a pydantic-style error list (pydantic's own, a 422 ``detail``, WS ``errors``).

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
        issues.append(
            ValidationIssue(
                loc=tuple(
                    p if isinstance(p, str | int) and not isinstance(p, bool) else str(p)
                    for p in (loc if isinstance(loc, list | tuple) else [loc])
                ),
                message=err["msg"],
                type=str(err.get("type", "")),
                input_repr=truncate(repr(err["input"]), 60) if "input" in err else None,
            )
        )
    return issues


def validation_error(
    role: str, exc: pydantic.ValidationError, *, hint: str = ""
) -> EnvValidationError:
    """Client-side validation failure of a generated model, naming every failing field."""
    return EnvValidationError(
        role, issues_from_wire(exc.errors(include_url=False)) or [], hint=hint
    )
