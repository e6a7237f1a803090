"""Serve grid_env: `python -m examples.grid_env.server --protocol websocket|http`.

The models are generated from schemas/grid_env/ (`generated/grid_env/server.py`); the episode
logic is `examples/grid_env/logic.py`. Reset takes the typed parameters of
schemas/grid_env/reset.schema.json (`size`, `difficulty`), checked by the generated model.
"""

from examples._serve import EnvInfo, main
from examples.grid_env.logic import GridLogic
from generated.grid_env import GridEnv
from generated.grid_env.server import GridAction, GridObservation, GridResetParams, GridState

INFO = EnvInfo(
    name="grid_env",
    description="A seeded gridworld: move, turn and pick up items.",
    version=GridEnv.SPEC.version,  # env.toml's, through `envgen generate`
)

if __name__ == "__main__":
    main(INFO, GridLogic, GridAction, GridObservation, GridState, reset_cls=GridResetParams)
