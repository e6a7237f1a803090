# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""The command line and the two app builders shared by every example server.

Frameworks are imported inside the builders, never at module level: openenv 0.10 pulls in
gradio (seconds of start-up) and a server started with `--protocol http` must not pay for it.

`--protocol websocket` builds an openenv 0.10 app (a factory, one environment per `/ws`
session). `--protocol http` builds an openenv-core 0.1.1 app (one environment kept across
requests: the original stateful protocol). Both wrap the same `EpisodeLogic`.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from examples._logic import EpisodeError, EpisodeLogic, Outcome

# Dataclass field metadata keys understood by the HTTP builder (openenv-core serialises with
# `dataclasses.asdict`, which knows nothing about wire names or omitted fields).
WIRE_NAME = "wire_name"
OMIT_IF_NONE = "omit_if_none"

MAX_CONCURRENT_ENVS = 16
# Tests of pools that meet CAPACITY_REACHED start servers with fewer sessions than the default.
MAX_CONCURRENT_ENVS_VAR = "ENVGEN_EXAMPLE_MAX_CONCURRENT_ENVS"


def max_concurrent_envs() -> int:
    """Sessions a WebSocket server holds: the default, or the environment variable's value."""
    return int(os.environ.get(MAX_CONCURRENT_ENVS_VAR, MAX_CONCURRENT_ENVS))


@dataclass(frozen=True)
class EnvInfo:
    """What `/metadata` reports; mirrors the env's `env.toml`."""

    name: str
    description: str
    version: str

    @property
    def class_name(self) -> str:
        """`echo_env` -> `EchoEnvironment`: the name sessions report for the environment."""
        base = self.name.removesuffix("_env")
        return "".join(part.capitalize() for part in base.split("_")) + "Environment"


def main(
    info: EnvInfo,
    build_websocket: Callable[[], Any],
    build_http: Callable[[], Any],
    argv: Sequence[str] | None = None,
) -> None:
    """Parse the command line that env.toml's `[server] command` fills in, and serve."""
    parser = argparse.ArgumentParser(
        prog=f"python -m examples.{info.name}.server", description=info.description
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--protocol", choices=("websocket", "http"), default="websocket")
    args = parser.parse_args(argv)
    app = build_websocket() if args.protocol == "websocket" else build_http()

    import uvicorn

    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


def _check_seed(seed: Any) -> int | None:
    # The WebSocket reset passes any JSON through; a string seed would silently seed
    # `random.Random` with a different stream, so refuse it.
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise EpisodeError(f"seed must be a non-negative integer or null, not {seed!r}")
    return seed


# -- openenv 0.10: WebSocket sessions -------------------------------------------------------


def websocket_app(
    info: EnvInfo,
    logic_factory: Callable[[], EpisodeLogic],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
) -> Any:
    """An openenv 0.10 FastAPI app: `/ws`, `/health`, `/schema`, `/metadata` and friends.

    Model classes are pydantic subclasses of openenv's Action/Observation/State; passing
    `state_cls` is what makes `/schema` publish the env's own state fields.
    """
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import EnvironmentMetadata

    def observation(outcome: Outcome) -> Any:
        return observation_cls.model_validate(
            {
                **outcome.observation,
                "reward": outcome.reward,
                "done": outcome.done,
                "metadata": dict(outcome.metadata),
            }
        )

    class LogicEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._logic = logic_factory()

        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Any:
            return observation(self._logic.reset(seed=_check_seed(seed), episode_id=episode_id))

        def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
            fields = action.model_dump(by_alias=False, exclude={"metadata"})
            return observation(self._logic.step(fields))

        @property
        def state(self) -> Any:
            return state_cls.model_validate(self._logic.state())

        def get_metadata(self) -> Any:
            return EnvironmentMetadata(
                name=info.name, description=info.description, version=info.version
            )

    LogicEnvironment.__name__ = LogicEnvironment.__qualname__ = info.class_name
    return create_app(
        LogicEnvironment,
        action_cls,
        observation_cls,
        env_name=info.name,
        max_concurrent_envs=max_concurrent_envs(),
        state_cls=state_cls,
    )


# -- openenv-core 0.1.1: stateful HTTP ------------------------------------------------------


def import_openenv_core() -> None:
    """Make `openenv_core.env_server.*` resolve to openenv-core 0.1.1's own modules.

    openenv 0.10 ships its own `openenv_core/__init__.py`, a shim that aliases
    `openenv_core.env_server` to `openenv.core.env_server`; both distributions own that path
    and the one installed last wins. Importing the package normally can therefore hand back
    openenv 0.10's per-request server (and gradio). Stub parent packages make Python find
    0.1.1's own modules on disk instead; the check below proves it did.
    """
    existing = sys.modules.get("openenv_core")
    if existing is None:
        spec = importlib.util.find_spec("openenv_core")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("openenv-core is not installed")
        root = Path(next(iter(spec.submodule_search_locations)))
        for name, folder in (
            ("openenv_core", root),
            ("openenv_core.env_server", root / "env_server"),
        ):
            stub = ModuleType(name)
            stub.__path__ = [str(folder)]
            stub.__envgen_stub__ = True  # type: ignore[attr-defined]
            sys.modules[name] = stub
    elif not getattr(existing, "__envgen_stub__", False):
        raise RuntimeError("openenv_core was imported already (possibly openenv 0.10's shim)")
    from openenv_core.env_server import http_server, types

    if not dataclasses.is_dataclass(types.Action):
        raise RuntimeError(f"{http_server.__file__} is not openenv-core 0.1.x")


def to_wire(cls: type[Any], data: dict[str, Any]) -> dict[str, Any]:
    """Rename fields to their wire names and drop optional ones that are None."""
    out = dict(data)
    for f in dataclasses.fields(cls):
        if f.name not in out:
            continue
        if f.metadata.get(OMIT_IF_NONE) and out[f.name] is None:
            del out[f.name]
        elif WIRE_NAME in f.metadata:
            out[f.metadata[WIRE_NAME]] = out.pop(f.name)
    return out


def from_wire(cls: type[Any], data: dict[str, Any]) -> dict[str, Any]:
    """Map wire names back to dataclass field names (the inverse of `to_wire`'s renames)."""
    renames = {
        f.metadata[WIRE_NAME]: f.name for f in dataclasses.fields(cls) if WIRE_NAME in f.metadata
    }
    return {renames.get(key, key): value for key, value in data.items()}


def http_app(
    info: EnvInfo,
    logic_factory: Callable[[], EpisodeLogic],
    action_cls: Callable[..., Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    make_observation: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Any:
    """An openenv-core 0.1.1 FastAPI app around one environment instance.

    `action_cls` is called with the action's fields, as openenv-core does; it may be a
    dataclass or a class whose construction dispatches on a tag. `make_observation` turns
    logic output into constructor arguments where nested dataclasses are wanted.
    """
    import_openenv_core()
    from fastapi import FastAPI
    from openenv_core.env_server.http_server import HTTPEnvServer
    from openenv_core.env_server.interfaces import Environment

    def observation(outcome: Outcome) -> Any:
        fields = make_observation(outcome.observation) if make_observation else outcome.observation
        return observation_cls(
            **fields, reward=outcome.reward, done=outcome.done, metadata=dict(outcome.metadata)
        )

    class LogicEnvironment(Environment):
        def __init__(self) -> None:
            super().__init__()
            self._logic = logic_factory()

        def reset(self) -> Any:
            # openenv-core 0.1.1 ignores the request body: every reset uses the default seed.
            return observation(self._logic.reset())

        def step(self, action: Any) -> Any:
            fields = dataclasses.asdict(action)
            fields.pop("metadata", None)
            return observation(self._logic.step(fields))

        @property
        def state(self) -> Any:
            return state_cls(**self._logic.state())

    class WireNameServer(HTTPEnvServer):
        """openenv-core's server, with wire names applied on the way in and out."""

        def _deserialize_action(self, action_data: dict[str, Any]) -> Any:
            if isinstance(action_cls, type) and dataclasses.is_dataclass(action_cls):
                action_data = from_wire(action_cls, action_data)
            return super()._deserialize_action(action_data)

        def _serialize_observation(self, observation: Any) -> dict[str, Any]:
            payload: dict[str, Any] = super()._serialize_observation(observation)
            payload["observation"] = to_wire(type(observation), payload["observation"])
            return payload

    LogicEnvironment.__name__ = LogicEnvironment.__qualname__ = info.class_name
    app = FastAPI(title=f"{info.name} (openenv-core 0.1.1)", version=info.version)
    WireNameServer(LogicEnvironment(), action_cls, observation_cls).register_routes(app)
    return app
