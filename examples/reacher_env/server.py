# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""Serve reacher_env: `python -m examples.reacher_env.server --protocol websocket|http`."""

import math
from dataclasses import dataclass
from typing import Annotated, Any

from examples._serve import EnvInfo, http_app, import_openenv_core, main, websocket_app
from examples.reacher_env.logic import MAX_VELOCITY, ReacherLogic

INFO = EnvInfo(
    name="reacher_env",
    description="A two-link planar arm reaching for a seeded target; continuous control.",
    version="0.1.0",
)


def build_websocket_app() -> Any:
    """openenv 0.10 app with pydantic models."""
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import Field

    Torque = Annotated[float, Field(ge=-1.0, le=1.0)]
    Angle = Annotated[float, Field(ge=-math.pi, le=math.pi)]
    Velocity = Annotated[float, Field(ge=-MAX_VELOCITY, le=MAX_VELOCITY)]
    Coordinate = Annotated[float, Field(ge=-2.0, le=2.0)]

    class ReacherAction(Action):
        """Torques for the shoulder and elbow joints."""

        torques: list[Torque] = Field(
            min_length=2, max_length=2, description="Shoulder and elbow torque, each in [-1, 1]."
        )

    class ReacherObservation(Observation):
        """Joint positions and speeds, the target, and how far the fingertip is from it."""

        joint_angles: list[Angle] = Field(
            min_length=2, max_length=2, description="Joint angles in radians."
        )
        joint_velocities: list[Velocity] = Field(
            min_length=2, max_length=2, description="Joint angular velocities in rad/s."
        )
        target: list[Coordinate] = Field(
            min_length=2, max_length=2, description="Target position (x, y)."
        )
        fingertip: list[Coordinate] = Field(
            min_length=2, max_length=2, description="Fingertip position (x, y)."
        )
        distance: float = Field(ge=0, description="Fingertip to target distance.")

    class ReacherState(State):
        """Base state plus the episode's target and step limit."""

        target: list[Coordinate] = Field(
            min_length=2, max_length=2, description="Target position (x, y)."
        )
        max_steps: int = Field(ge=1, description="Steps after which the episode ends.")

    return websocket_app(INFO, ReacherLogic, ReacherAction, ReacherObservation, ReacherState)


def build_http_app() -> Any:
    """openenv-core 0.1.1 app with dataclass models."""
    import_openenv_core()  # before importing from openenv_core: see its docstring
    from openenv_core.env_server.types import Action, Observation, State

    @dataclass(kw_only=True)
    class ReacherAction(Action):
        torques: list[float]

    @dataclass(kw_only=True)
    class ReacherObservation(Observation):
        joint_angles: list[float]
        joint_velocities: list[float]
        target: list[float]
        fingertip: list[float]
        distance: float

    @dataclass
    class ReacherState(State):
        target: list[float] | None = None
        max_steps: int = 0

    return http_app(INFO, ReacherLogic, ReacherAction, ReacherObservation, ReacherState)


if __name__ == "__main__":
    main(INFO, build_websocket_app, build_http_app)
