"""Raw wire traffic with the example servers, every reply checked against the env's schemas.

No generated client is involved: requests for HTTP, `websockets.sync.client` for `/ws`. A
reply that violates the committed JSON Schema raises `SchemaViolation`, which fails the test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import requests
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from websockets.sync.client import ClientConnection, connect

from .serving import SCHEMAS, RunningServer

TIMEOUT_S = 30.0
ROLES = ("action", "observation", "state")

# obs -> next action, or None to stop; `index` counts steps taken so far.
Policy = Callable[[dict[str, Any], int], dict[str, Any] | None]


class SchemaViolation(AssertionError):
    """A server reply (or a scripted action) the committed schema rejects."""


def _retrieve(uri: str) -> Resource:
    # Cross-file refs resolve against file:// ids: only files under schemas/ are served.
    path = Path(unquote(urlparse(uri).path)).resolve()
    if not path.is_relative_to(SCHEMAS):
        raise LookupError(f"refusing to load {uri}: outside schemas/")
    return Resource.from_contents(json.loads(path.read_text(encoding="utf-8")))


REGISTRY: Registry = Registry(retrieve=_retrieve)  # type: ignore[call-arg]


def schema_path(env: str, role: str) -> Path:
    return SCHEMAS / env / f"{role}.schema.json"


def load_schema(env: str, role: str) -> dict[str, Any]:
    return dict(json.loads(schema_path(env, role).read_text(encoding="utf-8")))


@cache
def validator(env: str, role: str) -> Draft202012Validator:
    """A 2020-12 validator whose relative `$ref`s resolve to sibling files."""
    path = schema_path(env, role)
    schema = {"$id": path.as_uri(), **load_schema(env, role)}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=REGISTRY)


def check(env: str, role: str, instance: Any, where: str = "") -> None:
    """Raise SchemaViolation listing every error, each with its JSON path."""
    errors = sorted(validator(env, role).iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        lines = [f"  {e.json_path}: {e.message}" for e in errors]
        raise SchemaViolation(
            f"{env} {role} {where} violates {schema_path(env, role).name}:\n"
            + "\n".join(lines)
            + f"\ninstance: {json.dumps(instance)[:2000]}"
        )


def check_reply(env: str, protocol: str, reply: Any, where: str) -> None:
    """The envelope the protocol promises, then the observation against its schema."""
    assert isinstance(reply, dict), f"{where}: reply is not an object: {reply!r}"
    # Both protocols reply in openenv 0.10's shape (envgen's stateful HTTP app reuses its
    # serializer): metadata inside the observation, copied out when it is not empty.
    assert (
        {"observation", "reward", "done"}
        <= set(reply)
        <= {"observation", "reward", "done", "metadata"}
    ), f"{where}: keys {sorted(reply)}"
    inner = reply["observation"].get("metadata")
    assert reply.get("metadata") == (inner or None), f"{where}: metadata placement"
    reward = reply["reward"]
    assert reward is None or (isinstance(reward, int | float) and not isinstance(reward, bool)), (
        f"{where}: reward {reward!r}"
    )
    assert isinstance(reply["done"], bool), f"{where}: done {reply['done']!r}"
    check(env, "observation", reply["observation"], where)


@dataclass
class Transcript:
    """Everything an episode produced, comparable across runs."""

    replies: list[dict[str, Any]] = field(default_factory=list)
    states: list[dict[str, Any]] = field(default_factory=list)

    def observable(self) -> list[Any]:
        """Replies plus states without the episode id, which need not repeat."""
        states = [{k: v for k, v in s.items() if k != "episode_id"} for s in self.states]
        return [self.replies, states]


class WsSession:
    """One `/ws` connection speaking openenv 0.10's message protocol."""

    def __init__(self, server: RunningServer, env: str) -> None:
        self.env = env
        # websockets 17 warns unless connect() is a context manager or says legacy=True.
        self.conn: ClientConnection = connect(server.ws_url, open_timeout=TIMEOUT_S, legacy=True)

    def __enter__(self) -> WsSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.conn.send(json.dumps({"type": "close"}))
        finally:
            self.conn.close()

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.conn.send(json.dumps(message))
        reply = json.loads(self.conn.recv(timeout=TIMEOUT_S))
        assert isinstance(reply, dict) and "type" in reply, reply
        return reply

    def reset(self, **data: Any) -> dict[str, Any]:
        reply = self.request({"type": "reset", "data": data})
        assert reply["type"] == "observation", reply
        check_reply(self.env, "websocket", reply["data"], "reset")
        return dict(reply["data"])

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        reply = self.request({"type": "step", "data": action})
        assert reply["type"] == "observation", reply
        check_reply(self.env, "websocket", reply["data"], f"step {action}")
        return dict(reply["data"])

    def state(self) -> dict[str, Any]:
        reply = self.request({"type": "state"})
        assert reply["type"] == "state", reply
        check(self.env, "state", reply["data"], "ws state")
        return dict(reply["data"])


class HttpSession:
    """The stateful HTTP protocol (envgen_runtime.server's app): one environment per server."""

    def __init__(self, server: RunningServer, env: str) -> None:
        self.env = env
        self.base = server.base_url
        # No keep-alive session: after a 500 uvicorn may close the connection under us.
        self.http = requests

    def __enter__(self) -> HttpSession:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def _json(self, reply: requests.Response) -> dict[str, Any]:
        assert reply.status_code == 200, f"{reply.request.method} {reply.url}: {reply.text}"
        return dict(reply.json())

    def reset(self, **body: Any) -> dict[str, Any]:
        data = self._json(self.http.post(self.base + "/reset", json=body, timeout=TIMEOUT_S))
        check_reply(self.env, "http", data, "reset")
        return data

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        reply = self.http.post(self.base + "/step", json={"action": action}, timeout=TIMEOUT_S)
        data = self._json(reply)
        check_reply(self.env, "http", data, f"step {action}")
        return data

    def state(self) -> dict[str, Any]:
        data = self._json(self.http.get(self.base + "/state", timeout=TIMEOUT_S))
        check(self.env, "state", data, "http state")
        return data


def session(server: RunningServer) -> WsSession | HttpSession:
    if server.protocol == "websocket":
        return WsSession(server, server.env)
    return HttpSession(server, server.env)


def play(
    server: RunningServer, policy: Policy, seed: int | None, max_steps: int = 60
) -> Transcript:
    """Reset (with `seed` when given), then follow `policy`.

    Every action is checked against the action schema before it is sent, so the scripts
    themselves keep to the contract; every reply and state is checked on arrival.
    """
    transcript = Transcript()
    with session(server) as conn:
        reset_args = {} if seed is None else {"seed": seed}
        reply = conn.reset(**reset_args)
        transcript.replies.append(reply)
        transcript.states.append(conn.state())
        for index in range(max_steps):
            if reply["done"]:
                break
            action = policy(reply["observation"], index)
            if action is None:
                break
            check(server.env, "action", action, "scripted")
            reply = conn.step(action)
            transcript.replies.append(reply)
            transcript.states.append(conn.state())
    return transcript
