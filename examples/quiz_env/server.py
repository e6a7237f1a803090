"""Serve quiz_env: `python -m examples.quiz_env.server --protocol websocket|http`.

The models are generated from schemas/quiz_env/ (`generated/quiz_env/server.py`); the episode
logic is `examples/quiz_env/logic.py`.
"""

from examples._serve import EnvInfo, main
from examples.quiz_env.logic import QuizLogic
from generated.quiz_env import QuizEnv
from generated.quiz_env.server import QuizAction, QuizObservation, QuizState

INFO = EnvInfo(
    name="quiz_env",
    description="A short seeded quiz with hints, attempts and a running score.",
    version=QuizEnv.SPEC.version,  # env.toml's, through `envgen generate`
)

if __name__ == "__main__":
    main(INFO, QuizLogic, QuizAction, QuizObservation, QuizState)
