"""The lean backend against the openenv backend: the same frames and replies, byte for byte,
for an env on openenv's Environment and one on envgen_runtime.server's; and no openenv."""

from __future__ import annotations

import datetime
import decimal
import enum
import subprocess
import sys
import textwrap
from typing import Annotated, Any, ClassVar

import pytest
from envgen_runtime.server import OMIT_NONE, Environment, ServerObservation, build_app
from envgen_runtime.server.bases import Action, Observation, State
from fastapi.testclient import TestClient
from openenv.core.env_server import types as openenv_types
from pydantic import Field

from tests.runtime.server.test_server import MODELS, Cell, StackEnvironment

WS_FRAMES = [
    '{"type":"reset","data":{"seed":1,"episode_id":"ep"}}',
    '{"type":"step","data":{"kind":"push","amount":1}}',
    '{"type":"state"}',
    '{"type":"step","data":{"kind":"push","amount":0}}',
    '{"type":"step","data":{"kind":"jump"}}',
    '{"type":"step","data":{"kind":"push"}}',
    '{"type":"step","data":{"kind":"pop"}}',
    '{"type":"reset","data":{"seed":0}}',
    '{"type":"step","data":{"kind":"pop"}}',
    '{"type":"step","data":{"kind":"push"},"extra":1}',
    '{"type":"step","data":[1]}',
    '{"type":"step","data":null}',
    "not json",
    '{"type":"dance"}',
    '{"type":"state","extra":1}',
    '{"type":"step"}',
    "[1]",
]


class PlainStack(Environment):
    """The same env on envgen's openenv-free base."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.steps = 0
        self.episode: str | None = None

    _obs = StackEnvironment._obs
    reset = StackEnvironment.reset  # type: ignore[assignment]
    step = StackEnvironment.step  # type: ignore[assignment]
    state = StackEnvironment.state


ENVS = {"openenv-base": StackEnvironment, "envgen-base": PlainStack}


def _app(backend: str, env: type[Any], protocol: str, **kw: Any) -> Any:
    return build_app(env, *MODELS[1:], name="stack_env", backend=backend, protocol=protocol, **kw)


def _frame_replies(client: TestClient, frames: list[str]) -> list[str]:
    """The reply to each of `frames`, sent in turn on one ``/ws`` session of `client`."""
    replies = []
    with client.websocket_connect("/ws") as ws:
        for frame in frames:
            ws.send_text(frame)
            replies.append(ws.receive_text())
    return replies


def _ws_replies(backend: str, env: type[Any]) -> list[str]:
    with TestClient(_app(backend, env, "websocket")) as client:
        replies = _frame_replies(client, WS_FRAMES)
        docs = [client.get(path).text for path in ("/health", "/schema", "/metadata")]
        return replies + docs


@pytest.mark.parametrize("env", ENVS.values(), ids=ENVS.keys())
def test_websocket_replies_equal_openenv_backend_byte_for_byte(env: type[Any]) -> None:
    lean, openenv = _ws_replies("lean", env), _ws_replies("openenv", env)
    labels = [*WS_FRAMES, "health", "schema", "meta"]
    for frame, mine, theirs in zip(labels, lean, openenv, strict=True):
        assert mine == theirs, frame
    assert '"EPISODE_ENDED: ' in lean[6] and '"SESSION_ERROR"' in lean[-4]


def _http_replies(backend: str, env: type[Any]) -> list[tuple[int, str]]:
    calls: list[tuple[str, str, Any]] = [
        ("post", "/reset", {"seed": 2, "episode_id": "e"}),
        ("get", "/state", None),
        ("post", "/step", {"action": {"kind": "push"}}),
        ("post", "/step", {"action": {"kind": "pop"}}),  # after done: 409
        ("post", "/reset", None),  # no body: the defaults
        ("post", "/step", {"action": {"kind": "pop"}}),  # the env's own failure: 500
        ("post", "/step", {"action": {"kind": "push", "amount": 0}}),  # 422
        ("get", "/metadata", None),
        ("get", "/schema", None),
    ]
    replies = []
    with TestClient(_app(backend, env, "http"), raise_server_exceptions=False) as client:
        for method, path, body in calls:
            reply = getattr(client, method)(path, **({} if body is None else {"json": body}))
            replies.append((reply.status_code, reply.text))
    return replies


@pytest.mark.parametrize("env", ENVS.values(), ids=ENVS.keys())
def test_http_replies_equal_openenv_backend_byte_for_byte(env: type[Any]) -> None:
    assert _http_replies("lean", env) == _http_replies("openenv", env)


def test_http_invalid_bodies_are_422s_naming_the_body_field() -> None:
    with TestClient(_app("lean", PlainStack, "http")) as client:
        for path, body in (("/reset", {"seed": -1}), ("/step", {"actions": {}})):
            bad = client.post(path, json=body)
            assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][0] == "body"


def test_websocket_sessions_past_max_concurrent_envs_get_capacity_reached() -> None:
    with TestClient(_app("lean", PlainStack, "websocket", max_concurrent_envs=1)) as client:
        assert client.get("/metadata").json()["max_concurrent_envs"] == 1
        with client.websocket_connect("/ws") as first:
            with client.websocket_connect("/ws") as second:
                refused = second.receive_json()
            assert refused == {
                "type": "error",
                "data": {
                    "message": "Server at capacity: 1/1 sessions active. "
                    "Cannot accept new connections.",
                    "code": "CAPACITY_REACHED",
                    "active_sessions": 1,
                    "max_sessions": 1,
                },
            }
            first.send_text('{"type":"close"}')
        with client.websocket_connect("/ws") as third:  # the closed session's place is free
            third.send_text('{"type":"reset","data":{}}')
            assert third.receive_json()["type"] == "observation"


def test_a_failing_constructor_is_a_factory_error() -> None:
    class Broken(PlainStack):
        def __init__(self) -> None:
            raise RuntimeError("no")

    with (
        TestClient(_app("lean", Broken, "websocket")) as client,
        client.websocket_connect("/ws") as ws,
    ):
        data = ws.receive_json()["data"]
    assert data["code"] == "FACTORY_ERROR" and data["factory_name"] == "Broken"


@pytest.mark.parametrize(
    ("mine", "theirs"),
    [
        (Action, openenv_types.Action),
        (Observation, openenv_types.Observation),
        (State, openenv_types.State),
    ],
)
def test_the_restated_bases_equal_openenv_s(mine: type[Any], theirs: type[Any]) -> None:
    assert mine.model_config == theirs.model_config
    assert mine.model_json_schema() == theirs.model_json_schema()


def test_the_lean_backend_imports_neither_openenv_nor_gradio() -> None:
    script = textwrap.dedent(
        """
        import sys
        class _Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("openenv", "gradio", "fastapi"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, _Block())
        from envgen_runtime.server import build_app
        from examples._serve import EnvInfo, environment_class
        from examples.grid_env.logic import GridLogic
        from generated.grid_env.server import GridAction, GridObservation, GridState
        info = EnvInfo("grid_env", "d", "1")
        env = environment_class(info, GridLogic, GridObservation, GridState)
        for protocol in ("websocket", "http"):
            build_app(env, GridAction, GridObservation, GridState, name="grid_env",
                      backend="lean", protocol=protocol)
        import uvicorn
        print(sorted({m.split(".")[0] for m in sys.modules} & {"openenv", "gradio", "fastapi"}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


class AsyncStack(PlainStack):
    """The same env with async methods, which both backends must call instead."""

    calls: ClassVar[list[str]] = []

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **kw: Any
    ) -> Any:
        self.calls.append("reset_async")
        return self.reset(seed=seed, episode_id=episode_id)

    async def step_async(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
        self.calls.append("step_async")
        return self.step(action)


def test_async_methods_are_awaited_alike_and_refused_after_done() -> None:
    replies = {}
    for backend in ("lean", "openenv"):
        AsyncStack.calls.clear()
        replies[backend] = _ws_replies(backend, AsyncStack)
        assert AsyncStack.calls[:3] == ["reset_async", "step_async", "step_async"], backend
    assert replies["lean"] == replies["openenv"]
    assert '"EPISODE_ENDED: ' in replies["lean"][6]


class NonFinite(PlainStack):
    """Non-finite floats in a step's observation (reward, metadata) and in its state."""

    def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
        observation = self._obs(reward=float("nan"))
        observation.metadata = {"inf": float("inf"), "ninf": float("-inf")}
        return observation


NON_FINITE_FRAMES = [
    '{"type":"reset","data":{}}',
    '{"type":"step","data":{"kind":"push","amount":1}}',
    '{"type":"step","data":{"kind":"push","amount":Infinity}}',  # the error's input: inf
    '{"type":"reset","data":{"seed":NaN}}',
    '{"type":"step","data":{"kind":"push","amount":1},"extra":-Infinity}',
]


def test_non_finite_floats_are_written_as_openenv_writes_them() -> None:
    """openenv's ``model_dump_json`` writes NaN and infinities as null, in observations and
    in the inputs an error frame echoes; json.loads reads NaN/Infinity literals in, as lean."""
    replies = {}
    for backend in ("lean", "openenv"):
        with TestClient(_app(backend, NonFinite, "websocket")) as client:
            replies[backend] = _frame_replies(client, NON_FINITE_FRAMES)
    for frame, mine, theirs in zip(NON_FINITE_FRAMES, *replies.values(), strict=True):
        assert mine == theirs, frame
    assert '"reward":null' in replies["lean"][1] and '"inf":null' in replies["lean"][1]


class OddFloats(PlainStack):
    """Floats that json.dumps and pydantic write apart (1e-07 / 1e-7) or not at all (NaN)."""

    def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
        observation = self._obs(reward=1e20)
        observation.metadata = {"small": 1e-7, "big": 1e16, "nan": float("nan"), "u": "é☃"}
        return observation

    @property
    def state(self) -> Any:
        return MODELS[3](step_count=self.steps, depth=self.depth, ratio=1e-7, gap=float("inf"))


def test_http_floats_are_written_as_openenv_writes_them() -> None:
    """openenv's app writes an observation's and the state's floats with pydantic's JSON:
    NaN and infinities as null, 1e-7 not 1e-07 (json.dumps's), no 500 for a NaN."""
    replies = {}
    for backend in ("lean", "openenv"):
        with TestClient(_app(backend, OddFloats, "http"), raise_server_exceptions=False) as client:
            client.post("/reset", json={})
            step = client.post("/step", json={"action": {"kind": "push", "amount": 1}})
            state = client.get("/state")
            replies[backend] = [
                (r.status_code, r.headers["content-type"], r.text) for r in (step, state)
            ]
    assert replies["lean"] == replies["openenv"]
    assert '"nan":null' in replies["lean"][0][2] and '"ratio":1e-7' in replies["lean"][1][2]


class Colour(enum.Enum):
    RED = "red"


class RichObservation(ServerObservation):
    """Fields whose Python dump and JSON differ in kind (floats, enums, dates, bytes, sets,
    tuples, decimals, nested and aliased models, a marked field): lean writes the model in
    JSON mode, openenv dumps it and then writes the dump."""

    ratio: float
    gap: float
    colour: Colour
    when: datetime.datetime
    span: datetime.timedelta
    raw: bytes
    tags: set[str]
    pair: tuple[int, str]
    amount: decimal.Decimal
    cell: Cell
    cells: list[Cell]
    class_: Annotated[str, Field(alias="class")]
    note: Annotated[str | None, Field(json_schema_extra={OMIT_NONE: True})] = None
    hint: str | None = None


class Rich(PlainStack):
    def _rich(self, note: str | None) -> RichObservation:
        return RichObservation(
            ratio=1e-7,
            gap=float("nan"),
            colour=Colour.RED,
            when=datetime.datetime(2026, 12, 4, 21, 0, 1, 5, tzinfo=datetime.UTC),
            span=datetime.timedelta(seconds=90.5),
            raw=b"\x00bytes",
            tags={"a"},
            pair=(1, "b"),
            amount=decimal.Decimal("1.50"),
            cell=Cell(row=1),
            cells=[Cell(row=2)],
            class_="c",
            note=note,
            reward=float("inf"),
            done=False,
            metadata={"cell": Cell(row=3), "when": datetime.date(2026, 1, 2), "big": 1e16},
        )

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        return self._rich(None)

    def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
        return self._rich("n")


def test_observations_of_every_kind_of_field_are_written_as_openenv_writes_them() -> None:
    frames = ['{"type":"reset","data":{}}', '{"type":"step","data":{"kind":"pop"}}']
    replies: dict[str, list[str]] = {}
    for backend in ("lean", "openenv"):
        with TestClient(_app(backend, Rich, "websocket")) as client:
            replies[backend] = _frame_replies(client, frames)
        with TestClient(_app(backend, Rich, "http")) as client:
            replies[backend] += [client.post("/reset", json={}).text]
            replies[backend] += [client.post("/step", json={"action": {"kind": "pop"}}).text]
    assert replies["lean"] == replies["openenv"]
    assert '"note"' not in replies["lean"][0] and '"note":"n"' in replies["lean"][1]
    assert '"ratio":1e-7' in replies["lean"][3] and '"gap":null' in replies["lean"][3]
