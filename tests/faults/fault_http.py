"""The fault server's HTTP side: the stateful OpenEnv routes, each fault as HTTP/1.1 bytes."""

from __future__ import annotations

import asyncio
import json

from fault_env import (
    HUGE_MB,
    SLOW_S,
    Case,
    Counter,
    extra_reply,
    fields_reply,
    fires,
    huge_reply,
)
from fault_io import hold, rst_close, trickle, truncate

HTTP_STATUS = {200: "OK", 404: "Not Found", 422: "Unprocessable Entity", 500: "Internal Error"}
HTTP_STATUS[503] = "Service Unavailable"
HTML_PAGE = b"<html><body><h1>Gateway</h1>the service is warming up</body></html>"
"""The ``wrongtype`` fault's body: a proxy's page answered with 200 and text/html."""


def http_bytes(
    status: int, body: bytes, *, close: bool = False, content_type: str = "application/json"
) -> bytes:
    head = (
        f"HTTP/1.1 {status} {HTTP_STATUS.get(status, 'Status')}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    )
    return head.encode("latin-1") + body


def _json(status: int, reply: object) -> bytes:
    return http_bytes(status, json.dumps(reply).encode())


async def handle_http(
    case: Case | None,
    route: str,
    body: bytes,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> bool:
    """Answer one HTTP request; False when the connection must end."""
    if route == "health":
        writer.write(http_bytes(200, b'{"status":"healthy"}'))
        return True
    if case is not None and route == "stats":  # for load tests: what the server counted
        writer.write(_json(200, {"steps": case.steps, "requests": case.requests}))
        return True
    if case is None or route not in ("reset", "step", "state"):
        writer.write(http_bytes(404, b'{"detail":"Not Found"}'))
        return True
    request = json.loads(body) if body else {}
    data = request.get("action", {}) if route == "step" else request
    fault = case.fault
    # current OpenEnv builds a fresh environment for every HTTP request
    env = Counter() if fault == "stateless" else case.env
    fired = fires(case, route)
    if fired and fault == "reset-state":
        fired = False  # this fault only concerns state requests (see below)
    if fault == "reset-state" and route == "state":
        case.states += 1
        if case.states > 1:  # the client's own check after the first step is answered
            rst_close(writer)
            return False
    if not fired or fault in ("ok", "stateless", "error"):  # error: a WebSocket-only fault
        writer.write(_json(200, env.answer(route, data)))
        return True
    if case.acts(route) and fault in ("malformed", "shape", "fields", "truncated", *HUGE_MB):
        env.step(data)  # a real server acted on the step before its reply went wrong
    if fault == "malformed":
        writer.write(http_bytes(200, b'{"observation": {"echoed": "x", '))
    elif fault == "shape":
        writer.write(http_bytes(200, b'{"unexpected": true}'))
    elif fault == "fields":
        writer.write(_json(200, fields_reply(route)))
    elif fault == "wrongtype":
        writer.write(http_bytes(200, HTML_PAGE, content_type="text/html"))
    elif fault in ("503twice", "500"):
        status = 503 if fault == "503twice" else 500
        writer.write(http_bytes(status, b'{"detail":"fault injected"}'))
    elif fault == "422":
        detail = [{"loc": ["body", "action", "delta"], "msg": "bad delta", "type": "value_error"}]
        writer.write(_json(422, {"detail": detail}))
    elif fault == "slow":
        await asyncio.sleep(SLOW_S)
        writer.write(_json(200, case.late(env).answer(route, data)))
    elif fault == "trickle":
        await trickle(writer, http_bytes(200, json.dumps(env.state()).encode() + b" " * 40))
    elif fault == "frozen":
        await hold(reader)
        return False
    elif fault == "crash":
        writer.close()
        return False
    elif fault == "closed":
        rst_close(writer)
        return False
    elif fault == "truncated":
        await truncate(writer, _json(200, Counter().answer(route, data)))
        return False
    elif fault == "extra":
        writer.write(_json(200, extra_reply(env, data)))
    else:  # the huge replies: valid, and no limit applies over HTTP
        writer.write(http_bytes(200, huge_reply(HUGE_MB[fault])))
    return True
