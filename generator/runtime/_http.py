"""Stateful OpenEnv HTTP transport: ``POST /reset``, ``POST /step``, ``GET /state``.

Only openenv-core 0.1.x style servers keep one environment across HTTP requests; current
OpenEnv servers build a fresh environment per HTTP request, so use the WebSocket transport for
them. ``requests`` is imported on first use so importing the runtime stays cheap.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._errormap import dumps_body, http_error, parse_json_object, redact_url, translate
from ._exceptions import EnvgenRuntimeError
from ._transport import Op, is_loopback_url

if TYPE_CHECKING:
    import requests

__all__ = ["HttpTransport"]

_STEP_TIMEOUT_MARGIN_S = 5.0
_STEP_TIMEOUT_HINT = (
    "; the server may still complete this step, so the episode's state is now uncertain "
    "(call state() or reset())"
)


def _text(content: bytes, encoding: str | None) -> str:
    """Decode an error body for a message, whatever charset the server claimed."""
    try:
        return content.decode(encoding or "utf-8", errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


class HttpTransport:
    """One keep-alive ``requests.Session`` to a stateful OpenEnv HTTP server.

    ``step_timeout_s``, when given, is sent with every step as ``timeout_s`` (the server's
    own limit for running the action); the read timeout of a step is then stretched to cover
    it. Not safe for concurrent use from several threads: requests are serialised.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        step_timeout_s: float | None = None,
    ) -> None:
        scheme = urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            raise ValueError(
                f"HttpTransport needs an http:// or https:// base URL, got {redact_url(base_url)}"
            )
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if step_timeout_s is not None and step_timeout_s <= 0:
            raise ValueError("step_timeout_s must be positive")
        self._base_url = base_url.rstrip("/")
        self._timeout_s = timeout_s
        self._headers = dict(headers or {})
        self._step_timeout_s = step_timeout_s
        self._session: requests.Session | None = None
        self._closed = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HttpTransport({redact_url(self._base_url)!r}, timeout_s={self._timeout_s})"

    @property
    def base_url(self) -> str:
        """The server's base URL (no trailing slash)."""
        return self._base_url

    def _get_session(self) -> requests.Session:
        if self._session is None:
            import requests

            session = requests.Session()
            session.headers.update({"Accept": "application/json", **self._headers})
            if is_loopback_url(self._base_url):
                # Proxy settings from the environment must not capture local traffic.
                session.trust_env = False
            self._session = session
        return self._session

    def _read_timeout(self, op: Op) -> float:
        if op == "step" and self._step_timeout_s is not None:
            return max(self._timeout_s, self._step_timeout_s + _STEP_TIMEOUT_MARGIN_S)
        return self._timeout_s

    def request(self, op: Op, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send one operation; see the module docstring for the routes."""
        data: str | None
        if op == "reset":
            method, path, data = "POST", "/reset", dumps_body(body, op=op)
        elif op == "step":
            envelope: dict[str, Any] = {"action": dict(body), "request_id": uuid.uuid4().hex}
            if self._step_timeout_s is not None:
                envelope["timeout_s"] = self._step_timeout_s
            method, path, data = "POST", "/step", dumps_body(envelope, op=op)
        elif op == "state":
            method, path, data = "GET", "/state", None
        else:
            raise ValueError(f"unknown operation {op!r}; expected reset, step or state")
        url = self._base_url + path
        read_timeout = self._read_timeout(op)
        with self._lock:
            if self._closed:
                raise EnvgenRuntimeError(f"{op} failed: this HttpTransport is closed")
            session = self._get_session()
            headers = {"Content-Type": "application/json"} if data is not None else None
            hint = _STEP_TIMEOUT_HINT if op == "step" else ""
            with translate(op, url, read_timeout, timeout_hint=hint):
                response = session.request(
                    method,
                    url,
                    data=data.encode("utf-8") if data is not None else None,
                    headers=headers,
                    timeout=(self._timeout_s, read_timeout),
                    allow_redirects=False,
                )
                content = response.content  # read inside translate: timeouts can hit here
        if not 200 <= response.status_code < 300:
            raise http_error(
                response.status_code, _text(content, response.encoding), op=op, url=url
            )
        return parse_json_object(content, op=op, source=f"the reply from {redact_url(url)}")

    def close(self) -> None:
        """Close the session's pooled connections; idempotent."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            session.close()
