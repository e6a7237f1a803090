# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""Serve echo_env: `python -m examples.echo_env.server --protocol websocket|http`."""

from dataclasses import dataclass
from typing import Any

from examples._serve import EnvInfo, http_app, import_openenv_core, main, websocket_app
from examples.echo_env.logic import EchoLogic

INFO = EnvInfo(
    name="echo_env",
    description="Echoes each message back; the simplest possible environment.",
    version="0.1.0",
)


def build_websocket_app() -> Any:
    """openenv 0.10 app with pydantic models."""
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import Field

    class EchoAction(Action):
        """A message for the environment to echo."""

        message: str = Field(description="Text to echo back.")

    class EchoObservation(Observation):
        """The echoed message and its length."""

        echoed_message: str = Field(description="The message from the last action.")
        message_length: int = Field(ge=0, description="Length of the message in characters.")

    class EchoState(State):
        """Only the base fields: episode id and step count."""

    return websocket_app(INFO, EchoLogic, EchoAction, EchoObservation, EchoState)


def build_http_app() -> Any:
    """openenv-core 0.1.1 app with dataclass models."""
    import_openenv_core()  # before importing from openenv_core: see its docstring
    from openenv_core.env_server.types import Action, Observation, State

    @dataclass(kw_only=True)
    class EchoAction(Action):
        message: str

    @dataclass(kw_only=True)
    class EchoObservation(Observation):
        echoed_message: str
        message_length: int

    @dataclass
    class EchoState(State):
        pass

    return http_app(INFO, EchoLogic, EchoAction, EchoObservation, EchoState)


if __name__ == "__main__":
    main(INFO, build_websocket_app, build_http_app)
