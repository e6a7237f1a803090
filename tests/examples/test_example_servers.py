"""The example servers over the wire: real processes, raw traffic, schemas as the contract."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from .serving import ENVS, PROTOCOLS, Fleet, manifest
from .wire import (
    TIMEOUT_S,
    HttpSession,
    Policy,
    WsSession,
    check,
    check_reply,
    load_schema,
    play,
)

# -- scripted episodes ------------------------------------------------------------------------


def scripted(actions: list[dict[str, Any]]) -> Policy:
    return lambda obs, index: actions[index] if index < len(actions) else None


ECHO = scripted(
    [
        {"message": "hello"},
        {"message": ""},
        {"message": 'ünïcødé ✓ "quoted"'},
        {"message": "x" * 64, "metadata": {"trace": "t-1"}},  # the Action base's metadata
    ]
)

CODING = scripted(
    [
        {"code": "print('hello')"},
        {"code": "import sys; print('oops', file=sys.stderr); sys.exit(3)", "timeout_s": 5},
        {"code": "print(hash('envgen'))"},  # fixed by the seed through PYTHONHASHSEED
        {"code": "raise ValueError('boom')", "timeout_s": 2.5},
        {"code": "import time; time.sleep(10)", "timeout_s": 0.4},
    ]
)

GRID_MOVES: list[dict[str, Any]] = [
    {"type": "move", "direction": "south", "steps": 2},
    {"type": "move", "direction": "east", "steps": 2},
    {"type": "turn", "rotation": "left"},
    {"type": "move", "direction": "south", "steps": 2},
    {"type": "turn", "rotation": "right"},
    {"type": "move", "direction": "east", "steps": 2},
    {"type": "move", "direction": "north", "steps": 3},
    {"type": "move", "direction": "west", "steps": 3},
]


def grid(obs: dict[str, Any], index: int) -> dict[str, Any] | None:
    """Alternate a move with picking at the agent's cell and its four neighbours."""
    if index >= 2 * len(GRID_MOVES):
        return None
    if index % 2 == 0:
        return GRID_MOVES[index // 2]
    r, c = obs["position"]["row"], obs["position"]["col"]
    return {"type": "pick", "cells": [[r, c], [r - 1, c], [r + 1, c], [r, c - 1], [r, c + 1]]}


REACHER = scripted(
    [{"torques": [1.0, -0.5]}, {"torques": [0.25, 0.75]}, {"torques": [-1, 1]}, {"torques": [0, 0]}]
    * 3
)


def quiz(obs: dict[str, Any], index: int) -> dict[str, Any] | None:
    """Miss once with every optional field set, then answer right (answers from the bank)."""
    from examples.quiz_env.logic import BANK

    answer = {q.text: q.answer for q in BANK}[obs["question"]]
    if index == 0:
        return {
            "answer": "no idea",
            "hint_requested": True,
            "confidence": 0.25,
            "note": "first try",
            "from": "tester",
        }
    if index == 1:
        return {"answer": answer.upper(), "confidence": None}
    return {"answer": answer, "confidence": 1}


POLICIES: dict[str, Policy] = {
    "echo_env": ECHO,
    "coding_env": CODING,
    "grid_env": grid,
    "reacher_env": REACHER,
    "quiz_env": quiz,
}
SEEDS = {"echo_env": 3, "coding_env": 11, "grid_env": 8, "reacher_env": 5, "quiz_env": 2}
SEEDED = ("grid_env", "reacher_env", "quiz_env")  # the envs whose episodes depend on the seed

both = pytest.mark.parametrize("protocol", PROTOCOLS)
each_env = pytest.mark.parametrize("env", ENVS)


def seed_for(env: str, protocol: str) -> int | None:
    return SEEDS[env]  # both protocols pass the seed to the environment


# -- every env, both protocols ----------------------------------------------------------------


@each_env
@both
def test_episode_replies_follow_the_schemas(fleet: Fleet, env: str, protocol: str) -> None:
    server = fleet.get(env, protocol)
    transcript = play(server, POLICIES[env], seed_for(env, protocol))

    assert len(transcript.replies) >= 4
    assert transcript.replies[0]["reward"] is None
    assert [s["step_count"] for s in transcript.states] == list(range(len(transcript.states)))
    assert len({s["episode_id"] for s in transcript.states}) == 1
    rewards = [r["reward"] for r in transcript.replies[1:]]
    assert all(isinstance(r, int | float) for r in rewards)


@each_env
@both
def test_same_seed_same_actions_same_episode(fleet: Fleet, env: str, protocol: str) -> None:
    server = fleet.get(env, protocol)
    first = play(server, POLICIES[env], seed_for(env, protocol))
    second = play(server, POLICIES[env], seed_for(env, protocol))
    assert first.observable() == second.observable()


@pytest.mark.parametrize("env", SEEDED)
def test_the_seed_changes_the_episode(fleet: Fleet, env: str) -> None:
    server = fleet.get(env, "websocket")
    with WsSession(server, env) as ws:
        one = ws.reset(seed=1)["observation"]
        two = ws.reset(seed=2)["observation"]
    assert one != two


@each_env
@both
def test_invalid_action_is_refused_and_the_session_survives(
    fleet: Fleet, env: str, protocol: str
) -> None:
    server = fleet.get(env, protocol)
    bad = {"definitely_not_a_field": 1}
    with pytest.raises(AssertionError):
        check(env, "action", bad)  # the schema refuses it too
    if protocol == "websocket":
        with WsSession(server, env) as ws:
            ws.reset(seed=0)
            reply = ws.request({"type": "step", "data": bad})
            assert reply["type"] == "error"
            assert reply["data"]["code"] == "VALIDATION_ERROR"
            assert ws.state()["step_count"] == 0
    else:
        with HttpSession(server, env) as http:
            http.reset()
            reply = http.http.post(server.base_url + "/step", json={"action": bad}, timeout=10)
            assert reply.status_code == 422, reply.text  # validated like openenv's own /step
            detail = reply.json()["detail"]  # pydantic's errors, as openenv sends them
            assert detail and all({"type", "loc", "msg"} <= set(e) for e in detail)
            assert http.state()["step_count"] == 0


# -- the WebSocket servers' discovery endpoints -----------------------------------------------

IGNORED = {"action": {"metadata"}, "observation": {"done", "reward"}, "state": set()}


def _variants(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A union's variants by def name, or the schema itself under ''."""
    if "oneOf" not in schema:
        return {"": schema}
    defs = schema.get("$defs", {})
    return {
        item["$ref"].rsplit("/", 1)[-1]: defs[item["$ref"].rsplit("/", 1)[-1]]
        for item in schema["oneOf"]
    }


def _shape(schema: dict[str, Any], role: str) -> dict[str, Any]:
    """Property names, required names, and enum/const values: what must not drift."""
    shape = {}
    for name, variant in _variants(schema).items():
        props = {k: v for k, v in variant.get("properties", {}).items() if k not in IGNORED[role]}
        shape[name] = {
            "properties": sorted(props),
            "required": sorted(set(variant.get("required", [])) - IGNORED[role]),
            "values": {
                k: v.get("enum", v.get("const"))
                for k, v in props.items()
                if "enum" in v or "const" in v
            },
        }
    return shape


@each_env
@both
def test_schema_endpoint_agrees_with_the_committed_schemas(
    fleet: Fleet, env: str, protocol: str
) -> None:
    server = fleet.get(env, protocol)
    served = requests.get(server.base_url + "/schema", timeout=TIMEOUT_S).json()
    for role in ("action", "observation", "state"):
        assert _shape(served[role], role) == _shape(load_schema(env, role), role), role
    assert _shape(served["reset_observation"], "observation") == _shape(
        served["observation"], "observation"
    )


@each_env
@both
def test_metadata_endpoint_matches_the_manifest(fleet: Fleet, env: str, protocol: str) -> None:
    server = fleet.get(env, protocol)
    meta = requests.get(server.base_url + "/metadata", timeout=TIMEOUT_S).json()
    toml = manifest(env)
    assert (meta["name"], meta["version"], meta["description"]) == (
        toml["name"],
        toml["version"],
        toml["description"],
    )


@each_env
def test_websocket_server_plain_http_builds_a_fresh_env_per_request(fleet: Fleet, env: str) -> None:
    """openenv 0.10 over plain HTTP: valid replies, but no episode survives a request."""
    server = fleet.get(env, "websocket")
    reply = requests.post(server.base_url + "/reset", json={"seed": 4}, timeout=TIMEOUT_S)
    assert reply.status_code == 200, reply.text
    check_reply(env, "websocket", reply.json(), "plain HTTP reset")
    state = requests.get(server.base_url + "/state", timeout=TIMEOUT_S).json()
    check(env, "state", state, "plain HTTP state")
    assert state["step_count"] == 0


# -- particular wire features -----------------------------------------------------------------


@both
def test_wire_names_keyword_and_non_identifier(fleet: Fleet, protocol: str) -> None:
    """`class`, `from` and `time-left` travel under those names, never `class_` & co."""
    with _session(fleet, "grid_env", protocol) as conn:
        obs = conn.reset(**_seed_args(protocol))["observation"]
        assert "class" in obs and "class_" not in obs
    with _session(fleet, "quiz_env", protocol) as conn:
        first = conn.reset(**_seed_args(protocol))
        assert "time-left" in first["observation"] and "time_left" not in first["observation"]
        assert "feedback" not in first["observation"]  # optional, absent rather than null
        assert first["observation"]["hint"] is None  # required but nullable: present
        reply = conn.step({"answer": "?", "from": "alice", "hint_requested": True})
        assert reply["observation"]["feedback"].startswith("wrong")
        assert isinstance(reply["observation"]["hint"], str)
        assert conn.state()["history"][-1]["answered_by"] == "alice"


@both
def test_quiz_metadata_sits_inside_and_beside_the_observation(fleet: Fleet, protocol: str) -> None:
    with _session(fleet, "quiz_env", protocol) as conn:
        reply = conn.reset(seed=1)
    assert reply["metadata"] == reply["observation"]["metadata"]
    assert reply["metadata"]["question_number"] == 1


@both
def test_step_after_the_episode_ended_is_refused(fleet: Fleet, protocol: str) -> None:
    server = fleet.get("quiz_env", protocol)
    with _session(fleet, "quiz_env", protocol) as conn:
        reply = conn.reset(**_seed_args(protocol))
        index = 0
        while not reply["done"]:
            action = quiz(reply["observation"], index)
            assert action is not None
            reply = conn.step(action)
            index += 1
        # A miss with the hint shown, then right at half points, then right twice.
        assert index == 4
        assert reply["observation"]["score"] == pytest.approx(2.5)
        assert conn.state()["question_index"] == 3
        late = {"answer": "too late"}
        if protocol == "websocket":
            error = conn.request({"type": "step", "data": late})
            assert error["type"] == "error" and error["data"]["code"] == "EXECUTION_ERROR"
            assert error["data"]["message"].startswith("EPISODE_ENDED: ")  # envgen_runtime.server
            assert "reset" in error["data"]["message"]
        else:
            refused = conn.http.post(server.base_url + "/step", json={"action": late}, timeout=10)
            assert refused.status_code == 409 and refused.json()["code"] == "EPISODE_ENDED"


def test_grid_seed_8_collects_every_item(fleet: Fleet) -> None:
    transcript = play(fleet.get("grid_env", "websocket"), grid, 8)
    last = transcript.replies[-1]
    assert last["done"] is True
    assert sorted(last["observation"]["inventory"]) == ["coin", "gem", "key"]
    assert sum(r["reward"] or 0 for r in transcript.replies) == 3.0
    assert transcript.states[-1]["items_left"] == 0


def test_coding_reports_exit_codes_and_timeouts(fleet: Fleet) -> None:
    transcript = play(fleet.get("coding_env", "http"), CODING, None)
    results = [r["observation"]["result"] for r in transcript.replies[1:]]
    assert results[0] == {"stdout": "hello\n", "stderr": "", "exit_code": 0, "timed_out": False}
    assert results[1]["exit_code"] == 3 and results[1]["stderr"] == "oops\n"
    assert "ValueError: boom" in results[3]["stderr"]
    assert results[4]["timed_out"] is True and results[4]["exit_code"] == -1
    assert [r["reward"] for r in transcript.replies[1:]] == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert transcript.states[-1]["last_exit_code"] == -1


def test_http_environment_is_kept_across_requests(fleet: Fleet) -> None:
    with _session(fleet, "echo_env", "http") as http:
        http.reset()
        http.step({"message": "a"})
        reply = http.step({"message": "abcd"})
        assert reply["reward"] == pytest.approx(0.4)
        assert http.state()["step_count"] == 2


def test_websocket_sessions_are_isolated(fleet: Fleet) -> None:
    """Two interleaved sessions with one seed see exactly what a lone session sees."""
    server = fleet.get("reacher_env", "websocket")
    alone = play(server, REACHER, 9).replies
    with WsSession(server, "reacher_env") as one, WsSession(server, "reacher_env") as two:
        replies: list[list[dict[str, Any]]] = [[one.reset(seed=9)], [two.reset(seed=9)]]
        for index in range(len(alone) - 1):
            action = REACHER(replies[0][-1]["observation"], index)
            assert action is not None
            replies[0].append(one.step(action))
            replies[1].append(two.step(action))
    assert replies[0] == replies[1] == alone


def test_websocket_refuses_a_non_integer_seed(fleet: Fleet) -> None:
    with _session(fleet, "grid_env", "websocket") as ws:
        reply = ws.request({"type": "reset", "data": {"seed": "eight"}})
    assert reply["type"] == "error", json.dumps(reply)


# -- helpers ----------------------------------------------------------------------------------


def _session(fleet: Fleet, env: str, protocol: str) -> Any:
    """A session of the protocol's kind; typed Any so tests may use either's extras."""
    server = fleet.get(env, protocol)
    return WsSession(server, env) if protocol == "websocket" else HttpSession(server, env)


def _seed_args(protocol: str) -> dict[str, Any]:
    return {"seed": 1}
