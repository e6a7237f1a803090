"""The drift check at connect: the server's ``GET /schema`` against the client's schemas.

A generated package carries the schemas it was generated from (``schemas.json``, named by
``EnvSpec.schemas_package``). On a client's first reset its server's ``/schema`` is fetched
once per process and server (the answer is kept by base URL and schema hash, so a pool of
clients on one server asks once) and judged by ``envgen diff``'s direction-aware rules
(``envgen_runtime.schemadiff``): equal or unnoticeable changes pass silently, compatible
ones give one ``SchemaDriftWarning``, a break raises ``SchemaDriftError`` naming the first
breaking change and the fix. A server without ``/schema`` (404/405) is remembered and not
asked again; a server that cannot answer is left to the reset to report.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..core.errors import SchemaDriftError, SchemaDriftWarning
from ..core.spec import EnvSpec

_HTTP_SCHEME = {"http": "http", "https": "https", "ws": "http", "wss": "https"}
_MISSING_STATUSES = (404, 405)


@dataclass(frozen=True)
class _Verdict:
    """What one server's ``/schema`` said about one set of committed schemas."""

    error: SchemaDriftError | None = None
    warning: str | None = None


_VERDICTS: dict[tuple[str, str], _Verdict] = {}
_WARNED: set[tuple[str, str]] = set()
_LOCK = threading.Lock()  # guards the tables; each server's request has a lock of its own
_ASKING: dict[tuple[str, str], threading.Lock] = {}


def forget() -> None:
    """Drop what this process learnt of servers' schemas (the next reset asks again)."""
    with _LOCK:
        _VERDICTS.clear()
        _WARNED.clear()
        _ASKING.clear()


@cache
def committed_schemas(package: str) -> dict[str, Any] | None:
    """The ``schemas.json`` of a generated package, or None when it has none."""
    from importlib import resources

    try:
        text = resources.files(package).joinpath("schemas.json").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        return None
    document = json.loads(text)
    return document if isinstance(document, dict) else None


def schema_url(base_url: str) -> str:
    """``GET /schema``'s address on the server's HTTP side (``ws://h/ws`` -> ``http://h/schema``)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    path = path.removesuffix("/ws") if parts.scheme in ("ws", "wss") else path
    scheme = _HTTP_SCHEME.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, path + "/schema", "", ""))


def check_schema(
    spec: EnvSpec, base_url: str, headers: Mapping[str, str], timeout_s: float
) -> None:
    """Judge the server's schemas once per process (blocking); warn or raise as they say."""
    committed = committed_schemas(spec.schemas_package) if spec.schemas_package else None
    if committed is None:
        return
    url = schema_url(base_url)
    key = (url, str(committed.get("schema_hash", "")))
    with _LOCK:
        asking = _ASKING.setdefault(key, threading.Lock())
    with asking:  # held across the request: N clients of one server make one request
        verdict = _VERDICTS.get(key)
        if verdict is None:
            body = _fetch(url, headers, timeout_s)
            if body is _UNANSWERED:
                return  # the reset reports an unreachable server; a later client asks again
            verdict = _judge(spec, url, committed, body)
            with _LOCK:
                _VERDICTS[key] = verdict
    with _LOCK:
        first_warning = verdict.warning is not None and key not in _WARNED
        _WARNED.add(key)
    if verdict.error is not None:
        raise verdict.error
    if first_warning:
        import warnings

        warnings.warn(verdict.warning or "", SchemaDriftWarning, stacklevel=4)


_UNANSWERED: Any = object()
_NO_SCHEMA: Any = object()


def _fetch(url: str, headers: Mapping[str, str], timeout_s: float) -> Any:
    """The decoded ``/schema`` reply, ``_NO_SCHEMA`` (404/405, not JSON) or ``_UNANSWERED``.

    One plain ``http.client`` request (urllib.request would cost another 20 ms to import).
    """
    import http.client

    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        connection = kind(parts.netloc, timeout=timeout_s)
        try:
            connection.request("GET", parts.path, headers={**headers, "Accept": "application/json"})
            reply = connection.getresponse()
            status, data = reply.status, reply.read()
        finally:
            connection.close()
    except (OSError, http.client.HTTPException, ValueError):
        return _UNANSWERED
    if status in _MISSING_STATUSES:
        return _NO_SCHEMA
    if status != 200:
        return _UNANSWERED
    try:
        return json.loads(data)
    except ValueError:
        return _NO_SCHEMA


def _judge(spec: EnvSpec, url: str, committed: dict[str, Any], body: Any) -> _Verdict:
    if body is _NO_SCHEMA:
        return _Verdict()
    from ..schemadiff import canonical_hash, drift, role_schemas

    theirs, ours = role_schemas(body), role_schemas(committed)
    if theirs is None or ours is None or canonical_hash(theirs) == canonical_hash(ours):
        return _Verdict()
    report = drift(committed, body)
    regenerate = (
        f"envgen pull {url.removesuffix('/schema')} --name {spec.name} --force, then "
        f"envgen generate {spec.name}"
    )
    first = report.first_breaking
    if first is not None:
        more = len(report.breaking) - 1
        also = f" (and {more} more breaking change{'s' if more > 1 else ''})" if more else ""
        example = f" For example: {_shown(first.witness)}." if first.has_witness else ""
        message = (
            f"the server at {url} publishes schemas that break the {spec.name} client: "
            f"{first.role} {first.pointer}: {first.message} [{first.rule}]{also}.{example} "
            f"Fix: {regenerate} (or pass check_schema=False to connect anyway)"
        )
        return _Verdict(
            error=SchemaDriftError(
                message, url=url, role=first.role, pointer=first.pointer, rule=first.rule
            )
        )
    if not report.compatible:
        return _Verdict()
    listed = "; ".join(f"{c.role} {c.pointer}: {c.message}" for c in report.compatible[:3])
    more = len(report.compatible) - 3
    listed += f"; and {more} more" if more > 0 else ""
    return _Verdict(
        warning=f"the server at {url} publishes schemas that differ compatibly from the "
        f"{spec.name} client's: {listed}. To use them: {regenerate} "
        "(check_schema=False turns the check off)"
    )


def _shown(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."
