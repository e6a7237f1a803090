"""Raw requests to the server under test, each answered with a classified `Outcome`.

verify sends plain JSON (not generated models), so that it can send what a generated client
would refuse, and reads plain JSON, so that it sees exactly what the server sent. The
runtime's transports carry it: the same wire code the committed clients use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from envgen_runtime import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    HttpTransport,
    ProtocolError,
    ServerError,
    ServerValidationError,
    Transport,
    WebSocketTransport,
)

Kind = Literal["ok", "rejected", "server-error", "lost", "protocol"]


@dataclass(frozen=True)
class Outcome:
    """What one request came to: a reply, or the kind of failure and its message."""

    kind: Kind
    reply: dict[str, Any] | None = None
    message: str = ""


class WireSession:
    """One connection (for WebSocket: one session) to the server, reopened after a loss."""

    def __init__(self, base_url: str, transport: str, timeout_s: float) -> None:
        self.base_url = base_url
        self.transport_name = transport
        self._timeout_s = timeout_s
        self._transport: Transport = self._open()

    def _open(self) -> Transport:
        if self.transport_name == "http":
            return HttpTransport(self.base_url, timeout_s=self._timeout_s)
        return WebSocketTransport(self.base_url, timeout_s=self._timeout_s)

    def reset(
        self, seed: int | None, episode_id: str | None, params: Mapping[str, Any] | None = None
    ) -> Outcome:
        body: dict[str, Any] = dict(params or {})
        if seed is not None:
            body["seed"] = seed
        if episode_id is not None:
            body["episode_id"] = episode_id
        return self._send("reset", body)

    def step(self, action: Any) -> Outcome:
        return self._send("step", action)

    def state(self) -> Outcome:
        return self._send("state", {})

    def _send(self, op: Literal["reset", "step", "state"], body: Any) -> Outcome:
        try:
            return Outcome("ok", reply=self._transport.request(op, body))
        except ServerValidationError as exc:
            return Outcome("rejected", message=exc.message)
        except ServerError as exc:
            return Outcome("server-error", message=exc.message)
        except ProtocolError as exc:
            return Outcome("protocol", message=exc.message)
        except (EnvConnectionError, EnvTimeoutError) as exc:
            self.reopen()
            return Outcome("lost", message=exc.message)
        except EnvgenRuntimeError as exc:  # anything else the runtime maps: not a success
            return Outcome("server-error", message=exc.message)

    def reopen(self) -> None:
        """Drop the connection (and its session) and start a new one on the next request."""
        self.close()
        self._transport = self._open()

    def close(self) -> None:
        with contextlib.suppress(EnvgenRuntimeError):
            self._transport.close()
