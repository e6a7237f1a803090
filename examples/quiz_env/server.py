# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""Serve quiz_env: `python -m examples.quiz_env.server --protocol websocket|http`.

The wire names `from` (a keyword, in the action) and `time-left` (not an identifier, in the
observation) are fields `from_` and `time_left` in Python. openenv 0.10 validates actions by
alias and serialises observations with a bare `model_dump()`, so the observation model sets
`serialize_by_alias`; on openenv-core the HTTP builder renames dataclass fields itself.
`feedback` is optional rather than nullable on the wire: left out while it is None.
"""

from dataclasses import dataclass, field
from typing import Any

from examples._serve import (
    OMIT_IF_NONE,
    WIRE_NAME,
    EnvInfo,
    http_app,
    import_openenv_core,
    main,
    websocket_app,
)
from examples.quiz_env.logic import ATTEMPTS, QuizLogic

INFO = EnvInfo(
    name="quiz_env",
    description="A short seeded quiz with hints, attempts and a running score.",
    version="0.1.0",
)


def build_websocket_app() -> Any:
    """openenv 0.10 app with pydantic models."""
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import BaseModel, ConfigDict, Field

    class QuizAction(Action):
        """An answer to the current question, with optional extras."""

        answer: str = Field(description="The answer; compared case-insensitively.")
        hint_requested: bool = Field(
            default=False, description="Show the hint; a correct answer then scores half."
        )
        confidence: float | None = Field(
            default=None, ge=0.0, le=1.0, description="Self-reported confidence, or null."
        )
        note: str | None = Field(default=None, description="Free text kept in the history.")
        from_: str | None = Field(
            default=None, alias="from", description="Who answered; kept in the history."
        )

    class QuizObservation(Observation):
        """The current question and how the last answer went."""

        model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

        question: str = Field(description="The current question; empty once the quiz is over.")
        hint: str | None = Field(description="The hint, when one was requested; else null.")
        feedback: str | None = Field(
            default=None,
            exclude_if=lambda value: value is None,
            description="How the last answer went; absent after reset.",
        )
        attempts_left: int = Field(
            default=ATTEMPTS, ge=0, description="Answers left for this question."
        )
        score: float = Field(default=0.0, ge=0, description="Points so far.")
        correct: bool | None = Field(
            default=None, description="Whether the last answer was right; null after reset."
        )
        time_left: int = Field(alias="time-left", description="Steps left in the episode.")

    class HistoryEntry(BaseModel):
        """One answer given during the episode."""

        question_id: str = Field(description="Which question was answered.")
        answer: str = Field(description="The answer as given.")
        correct: bool = Field(description="Whether it was right.")
        hint_used: bool = Field(default=False, description="Whether the hint had been shown.")
        confidence: float | None = Field(default=None, description="Confidence as given.")
        note: str | None = Field(default=None, description="Note as given.")
        answered_by: str | None = Field(default=None, description="The action's `from`.")

    class QuizState(State):
        """Base state plus progress and the full answer history."""

        question_index: int = Field(ge=0, description="Index of the current question.")
        total_score: float = Field(ge=0, description="Points so far.")
        history: list[HistoryEntry] = Field(
            default_factory=list, description="Every answer, oldest first."
        )

    return websocket_app(INFO, QuizLogic, QuizAction, QuizObservation, QuizState)


def build_http_app() -> Any:
    """openenv-core 0.1.1 app with dataclass models."""
    import_openenv_core()  # before importing from openenv_core: see its docstring
    from openenv_core.env_server.types import Action, Observation, State

    @dataclass(kw_only=True)
    class QuizAction(Action):
        answer: str
        hint_requested: bool = False
        confidence: float | None = None
        note: str | None = None
        from_: str | None = field(default=None, metadata={WIRE_NAME: "from"})

    @dataclass(kw_only=True)
    class QuizObservation(Observation):
        question: str
        hint: str | None
        feedback: str | None = field(default=None, metadata={OMIT_IF_NONE: True})
        attempts_left: int = ATTEMPTS
        score: float = 0.0
        correct: bool | None = None
        time_left: int = field(metadata={WIRE_NAME: "time-left"})

    @dataclass
    class QuizState(State):
        question_index: int = 0
        total_score: float = 0.0
        history: list[dict[str, Any]] = field(default_factory=list)

    return http_app(INFO, QuizLogic, QuizAction, QuizObservation, QuizState)


if __name__ == "__main__":
    main(INFO, build_websocket_app, build_http_app)
