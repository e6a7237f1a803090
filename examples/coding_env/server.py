"""Serve coding_env: `python -m examples.coding_env.server --protocol websocket|http`.

The models are generated from schemas/coding_env/ (`generated/coding_env/server.py`); the episode
logic is `examples/coding_env/logic.py`.
"""

from examples._serve import EnvInfo, main
from examples.coding_env.logic import CodingLogic
from generated.coding_env import CodingEnv
from generated.coding_env.server import CodingAction, CodingObservation, CodingState

INFO = EnvInfo(
    name="coding_env",
    description="Runs Python code in a subprocess and reports stdout, stderr and exit code.",
    version=CodingEnv.SPEC.version,  # env.toml's, through `envgen generate`
    blocks=True,  # each step waits for a subprocess
)

if __name__ == "__main__":
    main(INFO, CodingLogic, CodingAction, CodingObservation, CodingState)
