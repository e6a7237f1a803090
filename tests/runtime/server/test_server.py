"""envgen_runtime.server: the bases generated server models use, and both protocols' apps."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Annotated, Any, Literal

import pytest
from envgen_runtime.server import (
    OMIT_NONE,
    ServerAction,
    ServerModel,
    ServerObservation,
    ServerState,
    UnionAction,
    http_app,
    websocket_app,
)
from fastapi.testclient import TestClient
from openenv.core.env_server.interfaces import Environment
from pydantic import Field


class Cell(ServerModel):
    row: int = Field(ge=0)


class Push(ServerAction):
    kind: Literal["push"] = "push"
    amount: Annotated[int, Field(ge=1)] = 1


class Pop(ServerAction):
    kind: Literal["pop"] = "pop"


class StackAction(UnionAction):
    """Push or pop."""

    union = Annotated[Push | Pop, Field(discriminator="kind")]


class StackObservation(ServerObservation):
    depth: int
    class_: Annotated[str, Field(alias="class")]
    cell: Cell
    # optional, not nullable (marked): left out while None, published without null
    note: Annotated[str | None, Field(json_schema_extra={OMIT_NONE: True})] = None
    hint: str | None = None  # optional and nullable: sent as null


class StackState(ServerState):
    depth: int = 0


class StackEnvironment(Environment):  # type: ignore[misc]
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.steps = 0
        self.episode: str | None = None

    def _obs(self, reward: float | None = None) -> StackObservation:
        return StackObservation(
            depth=self.depth,
            class_="deep" if self.depth > 1 else "flat",
            cell=Cell(row=0),
            reward=reward,
            done=self.depth >= 3,
        )

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        self.depth, self.steps, self.episode = seed or 0, 0, episode_id
        return self._obs()

    def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
        if isinstance(action, Pop) and self.depth == 0:
            raise ValueError("nothing to pop")
        self.steps += 1
        self.depth += action.amount if isinstance(action, Push) else -1
        return self._obs(reward=float(self.depth))

    @property
    def state(self) -> StackState:
        return StackState(episode_id=self.episode, step_count=self.steps, depth=self.depth)


MODELS = (StackEnvironment, StackAction, StackObservation, StackState)


def test_union_action_validates_to_the_tagged_member_and_publishes_the_union() -> None:
    assert isinstance(StackAction.model_validate({"kind": "push", "amount": 2}), Push)
    assert isinstance(StackAction.model_validate({"kind": "pop"}), Pop)
    schema = StackAction.model_json_schema()
    assert schema["title"] == "StackAction" and schema["description"] == "Push or pop."
    assert schema["discriminator"]["propertyName"] == "kind"
    push = schema["$defs"]["Push"]
    assert "kind" in push["required"] and "default" not in push["properties"]["kind"]
    assert Push().kind == "push"  # the constructor still fills the tag in
    with pytest.raises(ValueError):
        StackAction.model_validate({"kind": "push", "amount": 0})


def test_http_app_keeps_one_environment_across_requests() -> None:
    client = TestClient(http_app(*MODELS, name="stack_env", description="d", version="1.2.3"))
    first = client.post("/reset", json={"seed": 1, "episode_id": "ep-1"}).json()
    assert first == {
        "observation": {
            "depth": 1,
            "class": "flat",
            "cell": {"row": 0},
            "hint": None,
            "metadata": {},
        },
        "reward": None,
        "done": False,
    }
    reply = client.post("/step", json={"action": {"kind": "push", "amount": 1}}).json()
    assert reply["observation"]["depth"] == 2 and reply["observation"]["class"] == "deep"
    assert reply["reward"] == 2.0
    state = client.get("/state").json()
    assert state == {"episode_id": "ep-1", "step_count": 1, "depth": 2}
    assert client.post("/reset").json()["observation"]["depth"] == 0  # no body: defaults
    assert client.get("/state").json()["episode_id"] is None  # openenv's nullable field
    assert client.get("/health").json() == {"status": "healthy"}
    meta = client.get("/metadata").json()
    assert (meta["name"], meta["description"], meta["version"]) == ("stack_env", "d", "1.2.3")
    assert meta["max_concurrent_envs"] == 1  # what a pool packs by: one environment here
    schema = client.get("/schema").json()
    assert set(schema) == {"action", "observation", "reset_observation", "state"}
    props = schema["observation"]["properties"]
    assert "class" in props
    assert props["note"] == {"title": "Note", "type": "string"}  # no null, no mark
    assert {"type": "null"} in props["hint"]["anyOf"]


def test_http_app_invalid_action_is_a_422_with_pydantic_detail_and_env_errors_a_500() -> None:
    client = TestClient(http_app(*MODELS, name="stack_env"), raise_server_exceptions=False)
    client.post("/reset", json={})
    bad = client.post("/step", json={"action": {"kind": "push", "amount": 0}})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"][-1] == "amount"
    unknown = client.post("/step", json={"action": {"kind": "jump"}})
    assert unknown.status_code == 422
    failed = client.post("/step", json={"action": {"kind": "pop"}})
    assert failed.status_code == 500 and "nothing to pop" in failed.json()["detail"]
    assert client.post("/reset", json={"seed": -1}).status_code == 422
    assert client.get("/state").json()["step_count"] == 0  # the failed steps changed nothing


def test_websocket_app_plays_a_session_with_wire_names_and_metadata() -> None:
    app = websocket_app(
        *MODELS, name="stack_env", description="d", version="1.2.3", max_concurrent_envs=5
    )
    with TestClient(app) as client:
        meta = client.get("/metadata").json()
        assert (meta["name"], meta["max_concurrent_envs"]) == ("stack_env", 5)
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "reset", "data": {"seed": 2}})
            assert ws.receive_json()["data"]["observation"]["class"] == "deep"
            ws.send_json({"type": "step", "data": {"kind": "pop"}})
            reply = ws.receive_json()["data"]
            assert reply["observation"]["depth"] == 1 and reply["reward"] == 1.0
            ws.send_json({"type": "step", "data": {"kind": "push", "amount": 0}})
            assert ws.receive_json()["data"]["code"] == "VALIDATION_ERROR"


def test_http_app_refuses_a_step_after_done_with_409_and_code_until_reset() -> None:
    client = TestClient(http_app(*MODELS, name="stack_env"))
    client.post("/reset", json={"seed": 2})
    assert client.post("/step", json={"action": {"kind": "push"}}).json()["done"] is True
    refused = client.post("/step", json={"action": {"kind": "pop"}})
    assert refused.status_code == 409
    assert refused.json()["code"] == "EPISODE_ENDED"
    assert refused.json()["detail"].startswith("EPISODE_ENDED: ")
    assert client.get("/state").json()["step_count"] == 1  # the refused step changed nothing
    client.post("/reset", json={"seed": 0})
    assert client.post("/step", json={"action": {"kind": "push"}}).status_code == 200


def test_websocket_app_refuses_a_step_after_done_with_the_episode_ended_message() -> None:
    app = websocket_app(*MODELS, name="stack_env")
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"seed": 2}})
        ws.receive_json()
        ws.send_json({"type": "step", "data": {"kind": "push"}})
        assert ws.receive_json()["data"]["done"] is True
        ws.send_json({"type": "step", "data": {"kind": "pop"}})
        error = ws.receive_json()["data"]
        assert error["code"] == "EXECUTION_ERROR"  # openenv's code: the message says which
        assert error["message"].startswith("EPISODE_ENDED: ")
        ws.send_json({"type": "reset", "data": {"seed": 0}})
        ws.receive_json()
        ws.send_json({"type": "step", "data": {"kind": "push"}})
        assert ws.receive_json()["type"] == "observation"


def test_async_overrides_are_guarded_too() -> None:
    class AsyncStack(StackEnvironment):
        async def reset_async(self, **kwargs: Any) -> Any:
            return self.reset(**kwargs)

        async def step_async(self, action: Any, **kwargs: Any) -> Any:
            return StackEnvironment.step(self, action, **kwargs)

    app = websocket_app(AsyncStack, *MODELS[1:], name="stack_env")
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"seed": 2}})
        ws.receive_json()
        ws.send_json({"type": "step", "data": {"kind": "push"}})
        assert ws.receive_json()["data"]["done"] is True
        ws.send_json({"type": "step", "data": {"kind": "pop"}})
        assert ws.receive_json()["data"]["message"].startswith("EPISODE_ENDED: ")
        ws.send_json({"type": "reset", "data": {"seed": 0}})
        ws.receive_json()
        ws.send_json({"type": "step", "data": {"kind": "push"}})
        assert ws.receive_json()["type"] == "observation"


_BLOCK_OPENENV = textwrap.dedent(
    """
    import sys
    class _Block:
        def find_spec(self, name, path=None, target=None):
            if name == "openenv" or name.startswith("openenv."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, _Block())
    import envgen_runtime
    import envgen_runtime.server  # the lean backend and the models need no openenv
    assert "openenv" not in sys.modules
    """
)


def _without_openenv(code: str) -> str:
    """What `code` prints in a fresh interpreter where openenv cannot be imported."""
    proc = subprocess.run(
        [sys.executable, "-c", _BLOCK_OPENENV + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_missing_openenv_names_the_openenv_extra_when_the_openenv_backend_is_named() -> None:
    out = _without_openenv(
        """
        try:
            envgen_runtime.server.websocket_app
        except envgen_runtime.MissingExtraError as exc:
            print(exc.extra, exc.module, "|", exc)
        """
    )
    assert out.startswith("openenv openenv |"), out
    assert "pip install 'envgen-runtime[openenv]'" in out


def test_choosing_the_openenv_backend_without_openenv_says_to_install_the_openenv_extra() -> None:
    out = _without_openenv(
        """
        from envgen_runtime.server import Environment, ServerAction, ServerObservation
        from envgen_runtime.server import ServerState, build_app
        models = (Environment, ServerAction, ServerObservation, ServerState)
        for backend in ("lean", "openenv"):
            try:
                build_app(*models, name="plain_env", backend=backend)
                print(backend, "served")
            except envgen_runtime.MissingExtraError as exc:
                print(backend, exc.extra, "|", exc)
        """
    )
    lean, openenv = out.splitlines()
    assert lean == "lean served"  # the lean backend needs no openenv
    assert openenv.startswith("openenv openenv |"), openenv
    assert "pip install 'envgen-runtime[openenv]'" in openenv
    assert "backend lean needs no openenv" in openenv
