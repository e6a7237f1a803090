"""The lean backend runs an env's sync methods off the event loop, on one thread per session
(as openenv 0.10 does): a slow step in one session blocks no other session, nor `/health`.
A class that sets RUNS_ON_EVENT_LOOP has them called on the loop instead, with no thread.

Real servers (`sleepy_server`, one per variant, started once for the module): an env whose
sync step sleeps as long as the action asks, reporting the threads it runs on.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import pytest
from envgen_runtime import LocalProcessProvider
from websockets.sync.client import ClientConnection, connect

from tests.helpers import REPO

SLOW_S = 0.5
HEAD_START_S = 0.1  # the slow step is under way before the other request is sent
SLOW_HTTP_S = 2.0  # long enough that a /health held up by it cannot pass for a quick one

VARIANTS: dict[str, tuple[str, ...]] = {
    "plain": (),
    "openenv-base": ("--openenv-base",),
    "single-thread": ("--single-thread",),
    "http": ("--protocol", "http"),
    "on-loop": ("--on-loop",),
    "on-loop-single": ("--on-loop", "--single-thread"),
}


def _start(extra: tuple[str, ...]) -> LocalProcessProvider:
    command = ["{python}", "-m", "tests.runtime.server.sleepy_server", "--port", "{port}"]
    provider = LocalProcessProvider([*command, *extra], cwd=REPO, startup_timeout_s=120)
    provider.start()
    return provider


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with ThreadPoolExecutor(max_workers=len(VARIANTS)) as pool:
        futures = {name: pool.submit(_start, extra) for name, extra in VARIANTS.items()}
    started = {name: f.result() for name, f in futures.items() if f.exception() is None}
    try:
        failed = [f"{n}: {f.exception()}" for n, f in futures.items() if n not in started]
        if failed:
            pytest.fail("servers failed to start:\n" + "\n".join(failed))
        yield {name: p.base_url or "" for name, p in started.items()}
    finally:
        for provider in started.values():
            provider.stop()


def _ws(url: str) -> ClientConnection:
    return connect(url.replace("http://", "ws://") + "/ws", open_timeout=30)


def _call(ws: ClientConnection, kind: str, data: dict[str, Any] | None = None) -> Any:
    ws.send(json.dumps({"type": kind, "data": data or {}}))
    return _reply(ws)


def _reply(ws: ClientConnection) -> Any:
    reply = json.loads(ws.recv(timeout=30))
    assert reply["type"] == "observation", reply
    return reply["data"]["observation"]


@pytest.mark.parametrize("variant", ["plain", "openenv-base"])
def test_a_slow_sync_step_blocks_no_other_session(urls: dict[str, str], variant: str) -> None:
    with _ws(urls[variant]) as slow, _ws(urls[variant]) as other:
        _call(slow, "reset")
        _call(other, "reset")
        slow.send(json.dumps({"type": "step", "data": {"sleep_s": SLOW_S}}))
        time.sleep(HEAD_START_S)
        started = time.monotonic()
        _call(other, "step", {"sleep_s": 0})
        other_s = time.monotonic() - started
        slow_step = _reply(slow)
    # The other session's step completed while the slow one slept (the server counts it):
    # on the event loop, it could only have run after.
    assert slow_step["others"] == 1, f"the other session's step waited ({other_s:.2f} s)"
    assert other_s < SLOW_S


def test_each_session_s_env_is_built_reset_and_stepped_on_one_thread_of_its_own(
    urls: dict[str, str],
) -> None:
    with _ws(urls["plain"]) as a, _ws(urls["plain"]) as b:
        seen = [_call(ws, "reset") for ws in (a, b)] + [_call(ws, "step") for ws in (a, b)]
    reset_a, reset_b, step_a, step_b = seen
    assert reset_a["born"] == reset_a["on"] == step_a["on"] != reset_a["main"]
    assert reset_b["born"] == reset_b["on"] == step_b["on"] != reset_b["main"]
    assert reset_a["born"] != reset_b["born"]


def test_a_class_requiring_a_single_thread_gets_one_shared_by_its_sessions(
    urls: dict[str, str],
) -> None:
    with _ws(urls["single-thread"]) as a, _ws(urls["single-thread"]) as b:
        seen = [_call(ws, "reset") for ws in (a, b)] + [_call(ws, "step") for ws in (a, b)]
    threads = {obs["on"] for obs in seen} | {obs["born"] for obs in seen}
    assert len(threads) == 1 and seen[0]["main"] not in threads


@pytest.mark.parametrize("variant", ["on-loop", "on-loop-single"])
def test_a_class_that_runs_on_the_event_loop_is_built_reset_and_stepped_there(
    urls: dict[str, str], variant: str
) -> None:
    with _ws(urls[variant]) as a, _ws(urls[variant]) as b:
        seen = [_call(ws, "reset") for ws in (a, b)] + [_call(ws, "step") for ws in (a, b)]
    # uvicorn runs the loop on the main thread: every call was made there, with no hop
    assert {obs["on"] for obs in seen} | {obs["born"] for obs in seen} == {seen[0]["main"]}


def test_on_the_event_loop_a_slow_step_holds_other_sessions_up(urls: dict[str, str]) -> None:
    # The flag's price, and why it is only for envs that never block: what the threads buy.
    with _ws(urls["on-loop"]) as slow, _ws(urls["on-loop"]) as other:
        _call(slow, "reset")
        _call(other, "reset")
        slow.send(json.dumps({"type": "step", "data": {"sleep_s": SLOW_S}}))
        time.sleep(HEAD_START_S)
        started = time.monotonic()
        _call(other, "step", {"sleep_s": 0})
        other_s = time.monotonic() - started
        assert _reply(slow)["others"] == 0
    assert other_s > (SLOW_S - HEAD_START_S) / 2


def _http(url: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        payload = None if body is None else json.dumps(body)
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        conn.close()


def test_a_slow_http_step_runs_on_the_env_s_thread_and_blocks_no_other_request(
    urls: dict[str, str],
) -> None:
    url = urls["http"]
    assert _http(url, "POST", "/reset", {})[0] == 200
    replies: list[tuple[int, Any]] = []
    step = {"action": {"sleep_s": SLOW_HTTP_S}}
    slow = threading.Thread(target=lambda: replies.append(_http(url, "POST", "/step", step)))
    slow.start()
    try:
        time.sleep(HEAD_START_S)
        started = time.monotonic()
        assert _http(url, "GET", "/health")[0] == 200
        health_s = time.monotonic() - started
        stepping = slow.is_alive()
    finally:
        slow.join(timeout=30)
    # held up by the step, /health would take about SLOW_HTTP_S - HEAD_START_S
    assert health_s < SLOW_HTTP_S / 2 and stepping, f"/health waited {health_s:.2f} s"
    ((status, body),) = replies
    assert status == 200, body
    observation = body["observation"]
    assert observation["born"] == observation["on"] != observation["main"]
    assert _http(url, "GET", "/state")[1]["step_count"] == 1


def _env_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "envgen-env"]


@pytest.mark.parametrize("protocol", ["websocket", "http"])
def test_an_app_of_a_class_on_the_event_loop_starts_no_env_thread(protocol: str) -> None:
    from envgen_runtime.server import Environment, build_app
    from fastapi.testclient import TestClient

    from tests.runtime.server.sleepy_server import (
        SleepyAction,
        SleepyObservation,
        SleepyState,
        environment,
    )

    before = set(_env_threads())
    env = environment(Environment, single_thread=False, on_loop=True)
    models = (SleepyAction, SleepyObservation, SleepyState)
    app = build_app(env, *models, name="sleepy_env", protocol=protocol, backend="lean")
    with TestClient(app) as client:
        if protocol == "websocket":
            with client.websocket_connect("/ws") as ws:
                ws.send_text('{"type":"step","data":{}}')
                observation = ws.receive_json()["data"]["observation"]
            assert observation["on"] == observation["born"]  # a session's env: on the loop
        else:  # the one HTTP env is built with the app, before any loop runs
            assert client.post("/step", json={"action": {}}).status_code == 200
        assert not set(_env_threads()) - before


@pytest.mark.parametrize("protocol", ["websocket", "http"])
@pytest.mark.parametrize("single", [False, True], ids=["own", "shared"])
def test_a_stopped_app_leaves_no_env_thread_behind(protocol: str, single: bool) -> None:
    # In this process (no server): threads left running would also change how `envgen
    # generate` renders here (it forks workers only from a single-threaded process).
    from envgen_runtime.server import Environment, build_app
    from fastapi.testclient import TestClient

    from tests.runtime.server.sleepy_server import (
        SleepyAction,
        SleepyObservation,
        SleepyState,
        environment,
    )

    before = set(_env_threads())
    env = environment(Environment, single)
    models = (SleepyAction, SleepyObservation, SleepyState)
    app = build_app(env, *models, name="sleepy_env", protocol=protocol, backend="lean")
    with TestClient(app) as client:
        if protocol == "websocket":
            for _ in range(2):
                with client.websocket_connect("/ws") as ws:
                    ws.send_text('{"type":"step","data":{}}')
                    assert ws.receive_json()["type"] == "observation"
                    assert set(_env_threads()) - before  # the env's own thread
        else:
            assert client.post("/step", json={"action": {}}).status_code == 200
            assert set(_env_threads()) - before
    for thread in set(_env_threads()) - before:
        thread.join(timeout=10)
    assert not set(_env_threads()) - before
