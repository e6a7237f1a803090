"""Serve echo_env: `python -m examples.echo_env.server --protocol websocket|http`.

The models are generated from schemas/echo_env/ (`generated/echo_env/server.py`); the episode
logic is `examples/echo_env/logic.py`.
"""

from examples._serve import EnvInfo, main
from examples.echo_env.logic import EchoLogic
from generated.echo_env import EchoEnv
from generated.echo_env.server import EchoAction, EchoObservation, EchoState

INFO = EnvInfo(
    name="echo_env",
    description="Echoes each message back; the simplest possible environment.",
    version=EchoEnv.SPEC.version,  # env.toml's, through `envgen generate`
)

if __name__ == "__main__":
    main(INFO, EchoLogic, EchoAction, EchoObservation, EchoState)
