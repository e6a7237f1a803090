"""HttpTransport and EnvClient over the stateful HTTP protocol.

Features run against real servers: openenv-core 0.1.1 (stateful HTTP) and openenv 0.10.0
(for its 422 validation replies). Fakes only supply replies no real server sends.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    HttpTransport,
    ProtocolError,
    ServerError,
    ServerValidationError,
)

from tests.runtime.clients import CounterAction, CounterEnv, CounterState, LegacyCounterEnv
from tests.runtime.fakes import Reply, fake_http

SECRET = "Bearer s3cr3t-token-value"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --------------------------------------------------------------------------- real servers


def test_full_episode_on_stateful_http_server(legacy_url: str) -> None:
    with LegacyCounterEnv(legacy_url) as env:
        assert env.transport_name == "http"
        first = env.reset(seed=1, episode_id="ep-http")
        assert first.observation.total == 0 and first.reward is None and not first.done
        totals = []
        for delta in (2, 3, 4):
            result = env.step(CounterAction(message=f"m{delta}", delta=delta))
            totals.append(result.observation.total)
            assert result.observation.echoed == f"m{delta}"
            assert result.reward == float(delta)
        assert totals == [2, 5, 9]
        state = env.state()
        assert isinstance(state, CounterState)
        assert state.step_count == 3 and state.total == 9
        last = env.step(CounterAction(message="end", delta=1))
        assert last.done is True
        # fields the client models do not name are kept
        assert last.observation.model_extra == {"server_only": "kept"}
        assert last.extra == {} and last.metadata is None
        assert last.raw["observation"]["server_only"] == "kept"


def test_http_500_is_server_error(legacy_url: str) -> None:
    with LegacyCounterEnv(legacy_url) as env:
        env.reset()
        with pytest.raises(ServerError) as info:
            env.step(CounterAction(message="x", fail=True))  # openenv-core 0.1.1 raises TypeError
    err = info.value
    assert err.status == 500 and err.op == "step" and err.code is None
    assert "Internal Server Error" in err.body
    assert "HTTP 500" in str(err) and "server's log" in str(err)


def test_http_422_names_the_field(ws_url: str) -> None:
    # openenv 0.10.0 validates reset requests (seed >= 0) and answers 422 with a detail list.
    with CounterEnv(ws_url, transport="http") as env, pytest.raises(ServerValidationError) as info:
        env.reset(seed=-1)
    err = info.value
    assert isinstance(err, ServerError) and isinstance(err, EnvValidationError)
    assert err.status == 422 and err.role == "reset request"
    assert [issue.path for issue in err.errors] == ["body.seed"]
    assert "greater than or equal to 0" in str(err)


def test_http_422_from_action_validation(ws_url: str) -> None:
    transport = HttpTransport(ws_url, timeout_s=10)
    try:
        with pytest.raises(ServerValidationError) as info:
            transport.request("step", {"message": 5})
    finally:
        transport.close()
    assert info.value.errors[0].loc == ("message",)
    assert info.value.role == "action"


def test_headers_are_sent_and_never_in_messages() -> None:
    routes = {("POST", "/reset"): Reply(503, "overloaded")}
    with fake_http(routes) as server:
        env = CounterEnv(server.url, transport="http", default_headers={"Authorization": SECRET})
        with env, pytest.raises(ServerError) as info:
            env.reset()
        assert server.seen[0][3]["Authorization"] == SECRET
    assert SECRET not in str(info.value) and "s3cr3t" not in repr(info.value)
    assert info.value.status == 503 and info.value.body == "overloaded"


# --------------------------------------------------------------------------- wire format


def test_step_envelope_has_request_id_and_timeout() -> None:
    obs = {"observation": {"echoed": "", "total": 0, "step": 0}, "reward": None, "done": False}
    routes = {("POST", "/step"): Reply(body=obs), ("POST", "/reset"): Reply(body=obs)}
    with fake_http(routes) as server:
        with CounterEnv(server.url, transport="http", step_timeout_s=2.5) as env:
            env.reset(seed=4)
            env.step(CounterAction(message="a"))
            env.step(CounterAction(message="b"))
        # (the client's one-off GET /state after the first step is not asserted on here)
        posts = [request for request in server.seen if request[0] == "POST"]
        (_, path0, body0, _), (_, _, body1, _), (_, _, body2, _) = posts
    assert path0 == "/reset" and json.loads(body0) == {"seed": 4}
    step1, step2 = json.loads(body1), json.loads(body2)
    assert step1["action"] == {"message": "a", "delta": 1}
    assert step1["timeout_s"] == 2.5
    assert len(step1["request_id"]) == 32 and step1["request_id"] != step2["request_id"]


def test_reset_body_only_has_given_keys() -> None:
    obs = {"observation": {"echoed": "", "total": 0, "step": 0}}
    with fake_http({("POST", "/reset"): Reply(body=obs)}) as server:
        with CounterEnv(server.url, transport="http") as env:
            env.reset()
            env.reset(episode_id="e", difficulty=3)
        bodies = [json.loads(body) for _, _, body, _ in server.seen]
    assert bodies == [{}, {"episode_id": "e", "difficulty": 3}]


# --------------------------------------------------------------------------- error paths


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(body="<html>oops</html>", content_type="text/html"), "not valid JSON"),
        (Reply(body=[1, 2]), "must be a JSON object"),
        (Reply(body="x" * 2000, content_type="text/plain"), "more characters"),
    ],
)
def test_malformed_2xx_is_protocol_error(reply: Reply, fragment: str) -> None:
    with fake_http({("GET", "/state"): reply}) as server:
        transport = HttpTransport(server.url, timeout_s=5)
        with pytest.raises(ProtocolError) as info:
            transport.request("state", {})
        transport.close()
    assert fragment in str(info.value)
    assert len(info.value.received) < 600
    assert info.value.op == "state"


def test_bad_envelope_is_protocol_error_with_op() -> None:
    with fake_http({("POST", "/reset"): Reply(body={"obs": {}})}) as server:
        env = CounterEnv(server.url, transport="http")
        with env, pytest.raises(ProtocolError) as info:
            env.reset()
    assert info.value.op == "reset" and "no 'observation' key" in str(info.value)
    assert str(info.value).startswith("reset failed: the reply has no")


def test_bad_state_is_validation_error() -> None:
    with fake_http({("GET", "/state"): Reply(body={"step_count": "many"})}) as server:
        env = CounterEnv(server.url, transport="http")
        with env, pytest.raises(EnvValidationError) as info:
            env.state()
    assert info.value.role == "state" and info.value.errors[0].path == "step_count"


def test_read_timeout() -> None:
    with fake_http({("GET", "/state"): Reply(body={}, delay_s=1.0)}) as server:
        transport = HttpTransport(server.url, timeout_s=0.2)
        with pytest.raises(EnvTimeoutError) as info:
            transport.request("state", {})
        transport.close()
    assert info.value.timeout_s == 0.2 and "0.2 s" in str(info.value)


def test_step_timeout_warns_that_the_step_may_still_happen() -> None:
    with fake_http({("POST", "/step"): Reply(body={}, delay_s=1.0)}) as server:
        env = CounterEnv(server.url, transport="http", request_timeout_s=0.2)
        with env, pytest.raises(EnvTimeoutError) as info:
            env.step(CounterAction(message="slow"))
    assert info.value.op == "step" and "may still complete this step" in str(info.value)


def test_dropped_connection_is_connection_error() -> None:
    with fake_http({("GET", "/state"): Reply(drop=True)}) as server:
        transport = HttpTransport(server.url, timeout_s=5)
        with pytest.raises(EnvConnectionError) as info:
            transport.request("state", {})
        transport.close()
    assert info.value.op == "state"


def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    env = CounterEnv(url, transport="http", default_headers={"X-Token": SECRET})
    with env, pytest.raises(EnvConnectionError) as info:
        env.reset()
    assert "connection refused" in str(info.value) and "from_local_process" in str(info.value)
    assert SECRET not in str(info.value)


def test_closed_transport_refuses_requests() -> None:
    transport = HttpTransport("http://127.0.0.1:1", timeout_s=1)
    transport.close()
    transport.close()
    with pytest.raises(EnvgenRuntimeError, match="closed"):
        transport.request("state", {})


@pytest.mark.parametrize("kwargs", [{"timeout_s": 0}, {"step_timeout_s": -1.0}])
def test_http_transport_argument_checks(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        HttpTransport("http://127.0.0.1:1", **kwargs)
    with pytest.raises(ValueError, match="http"):
        HttpTransport("ftp://127.0.0.1:1")


def test_unserialisable_reset_argument() -> None:
    env = CounterEnv("http://127.0.0.1:1", transport="http")
    with env, pytest.raises(EnvValidationError, match="cannot be sent as JSON"):
        env.reset(options={1, 2})
