"""Serve reacher_env: `python -m examples.reacher_env.server --protocol websocket|http`.

The models are generated from schemas/reacher_env/ (`generated/reacher_env/server.py`); the episode
logic is `examples/reacher_env/logic.py`.
"""

from examples._serve import EnvInfo, main
from examples.reacher_env.logic import ReacherLogic
from generated.reacher_env import ReacherEnv
from generated.reacher_env.server import ReacherAction, ReacherObservation, ReacherState

INFO = EnvInfo(
    name="reacher_env",
    description="A two-link planar arm reaching for a seeded target; continuous control.",
    version=ReacherEnv.SPEC.version,  # env.toml's, through `envgen generate`
)

if __name__ == "__main__":
    main(INFO, ReacherLogic, ReacherAction, ReacherObservation, ReacherState)
