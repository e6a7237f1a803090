"""The fault server's environment, its per-case state and when a fault fires (no I/O).

A case is one URL prefix, ``/<fault>/<case>`` or ``/<fault>@<route>/<case>``. Without a
route the fault fires on the case's first ``step`` (``503twice``: its first two HTTP
requests or WebSocket handshakes), and a step the reply of which goes wrong was acted on
first, as a real server would have. With a route (``reset``, ``step`` or ``state``) the
fault fires once, on the first request of that route, which is not acted on (a reply from a
gateway or a failed handler): "one bad reply, then good ones".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

TRICKLE_S = 0.1
"""Seconds between bytes of a trickled reply."""
SLOW_S = 4.0
"""How late a slow reply comes (tests use read timeouts of about 1 s)."""
HUGE_MB = {"huge": 120, "big": 50}
"""Megabytes of observation text in the ``huge`` and ``big`` replies."""
ROUTES = frozenset({"reset", "step", "state"})
"""The routes a fault can be pinned to (``/<fault>@<route>/<case>``)."""

FAULTS = frozenset(
    {
        "ok",
        "malformed",
        "shape",
        "fields",
        "503twice",
        "500",
        "422",
        "slow",
        "trickle",
        "frozen",
        "crash",
        "closed",
        "truncated",
        "wrongtype",
        "error",
        "extra",
        "huge",
        "big",
        "stateless",
        "reset-state",
    }
)


@dataclass
class Counter:
    """The environment: a running total."""

    episode_id: str | None = None
    step_count: int = 0
    total: int = 0

    def reset(self, body: dict[str, Any]) -> dict[str, Any]:
        self.episode_id = body.get("episode_id") or "server-episode"
        self.step_count = 0
        self.total = 0
        return self._reply("", 0.0)

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        self.step_count += 1
        delta = int(action.get("delta", 1))
        self.total += delta
        return self._reply(str(action.get("message", "")), float(delta))

    def state(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "step_count": self.step_count, "total": self.total}

    def answer(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        """The healthy reply to ``route`` (``body``: the reset body or the step's action)."""
        if route == "reset":
            return self.reset(body)
        if route == "step":
            return self.step(body)
        return self.state()

    def _reply(self, echoed: str, reward: float) -> dict[str, Any]:
        observation = {
            "echoed": echoed,
            "total": self.total,
            "step": self.step_count,
            "episode_id": self.episode_id,
        }
        return {"observation": observation, "reward": reward, "done": False}


@dataclass
class Case:
    """What one test case's URL prefix has seen: its HTTP environment and fault budget."""

    fault: str
    at: str | None = None  # the route a once-only fault is pinned to
    env: Counter = field(default_factory=Counter)
    armed: int = 0  # requests left that the fault applies to
    fired: bool = False
    requests: int = 0
    steps: int = 0
    states: int = 0

    def acts(self, route: str) -> bool:
        """Whether a request that meets the fault is acted on before its reply goes wrong."""
        return route == "step" and self.at is None

    def late(self, env: Counter) -> Counter:
        """Where a late (``slow``) reply is made: ``env``, unless the fault is pinned."""
        return env if self.at is None else Counter()


CASES: dict[str, Case] = {}


def case_for(path: str) -> tuple[Case | None, str]:
    """The case named by ``/<fault>[@<route>]/<case>/<route>`` and the request's route."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if len(parts) < 3:
        return None, parts[-1] if parts else ""
    fault, pinned, at = parts[0].partition("@")
    if fault not in FAULTS or (pinned and at not in ROUTES):
        return None, parts[-1]
    key = f"{parts[0]}/{parts[1]}"
    case = CASES.get(key)
    if case is None:
        case = CASES[key] = Case(fault, at or None)
    return case, parts[2]


def fires(case: Case, route: str) -> bool:
    """Whether the fault applies to this request (see the module docstring)."""
    case.requests += 1
    if route == "step":
        case.steps += 1
    if case.at is not None:
        if route == case.at and not case.fired:
            case.fired = True
            return True
        return False
    if case.fault == "503twice":  # the first two HTTP requests or WebSocket handshakes
        return route != "message" and case.requests <= 2
    if not case.fired and route == "step" and case.fault != "ok":
        case.fired = True
        case.armed = 1
    if case.armed > 0:
        case.armed -= 1
        return True
    return False


_HUGE: dict[int, bytes] = {}


def huge_reply(megabytes: int) -> bytes:
    """A valid step reply whose observation carries ``megabytes`` MB of text (built once)."""
    if megabytes not in _HUGE:
        filler = "x" * (megabytes * 1024 * 1024)
        reply = {"observation": {"echoed": filler, "total": 0, "step": 1}, "reward": 0.0}
        _HUGE[megabytes] = json.dumps(reply).encode()
    return _HUGE[megabytes]


def fields_reply(route: str) -> dict[str, Any]:
    """The ``fields`` fault: the envelope right, what is inside it of the wrong fields."""
    if route == "state":
        return {"step_count": "many"}
    return {"observation": {"unexpected": True}, "reward": 0.0, "done": False}


def extra_reply(env: Counter, action: dict[str, Any]) -> dict[str, Any]:
    reply = env.step(action)
    reply["observation"]["server_only"] = {"nested": [1, 2]}
    reply["metadata"] = {"source": "faultserver"}
    reply["extra_top"] = "kept"
    return reply
