# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""Serve coding_env: `python -m examples.coding_env.server --protocol websocket|http`."""

from dataclasses import dataclass
from typing import Any

from examples._serve import EnvInfo, http_app, import_openenv_core, main, websocket_app
from examples.coding_env.logic import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, CodingLogic

INFO = EnvInfo(
    name="coding_env",
    description="Runs Python code in a subprocess and reports stdout, stderr and exit code.",
    version="0.1.0",
)


def build_websocket_app() -> Any:
    """openenv 0.10 app with pydantic models."""
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import BaseModel, Field

    class ExecResult(BaseModel):
        """What one run of the code produced."""

        stdout: str = Field(description="Everything the code wrote to standard output.")
        stderr: str = Field(description="Everything the code wrote to standard error.")
        exit_code: int = Field(description="Process exit code; -1 when it timed out.")
        timed_out: bool = Field(description="Whether the run was killed at its timeout.")

    class CodingAction(Action):
        """Python source to run with `python -c`."""

        code: str = Field(description="Python source code.")
        timeout_s: float = Field(
            default=DEFAULT_TIMEOUT_S,
            gt=0,
            le=MAX_TIMEOUT_S,
            description="Seconds before the run is killed.",
        )

    class CodingObservation(Observation):
        """The result of the last run."""

        result: ExecResult = Field(description="Output and exit status of the last run.")

    class CodingState(State):
        """Base state plus the last exit code."""

        last_exit_code: int | None = Field(
            description="Exit code of the last run; null before the first."
        )

    return websocket_app(INFO, CodingLogic, CodingAction, CodingObservation, CodingState)


def build_http_app() -> Any:
    """openenv-core 0.1.1 app with dataclass models."""
    import_openenv_core()  # before importing from openenv_core: see its docstring
    from openenv_core.env_server.types import Action, Observation, State

    @dataclass
    class ExecResult:
        stdout: str
        stderr: str
        exit_code: int
        timed_out: bool

    @dataclass(kw_only=True)
    class CodingAction(Action):
        code: str
        timeout_s: float = DEFAULT_TIMEOUT_S

    @dataclass(kw_only=True)
    class CodingObservation(Observation):
        result: ExecResult

    @dataclass
    class CodingState(State):
        last_exit_code: int | None = None

    def observation(fields: dict[str, Any]) -> dict[str, Any]:
        return {"result": ExecResult(**fields["result"])}

    return http_app(
        INFO,
        CodingLogic,
        CodingAction,
        CodingObservation,
        CodingState,
        make_observation=observation,
    )


if __name__ == "__main__":
    main(INFO, build_websocket_app, build_http_app)
