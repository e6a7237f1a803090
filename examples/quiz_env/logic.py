"""Quiz logic: a few questions drawn from a fixed bank by the seed.

Each question allows `ATTEMPTS` answers. A correct answer scores 1.0, or 0.5 if a hint was
shown for that question. The episode ends when the questions run out or after `TIME_BUDGET`
steps, whichever comes first.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from examples._logic import EpisodeError, EpisodeLogic, Outcome

ATTEMPTS = 3
QUESTIONS_PER_EPISODE = 3
TIME_BUDGET = 8
HINT_PENALTY = 0.5


@dataclass(frozen=True)
class Question:
    """One bank entry; answers are compared case-insensitively."""

    id: str
    text: str
    answer: str
    hint: str


BANK = (
    Question("q1", "What is the capital of France?", "paris", "It is on the Seine."),
    Question("q2", "How many sides does a hexagon have?", "6", "One more than a pentagon."),
    Question("q3", "What is the chemical symbol for gold?", "au", "From the Latin 'aurum'."),
    Question("q4", "Which planet is known as the red planet?", "mars", "Named after a god of war."),
    Question("q5", "What is 7 times 8?", "56", "Five, six, seven, eight."),
    Question("q6", "Which language is this quiz server written in?", "python", "Snakes."),
    Question("q7", "What is the largest ocean on Earth?", "pacific", "Its name means calm."),
    Question("q8", "How many bits are in a byte?", "8", "A power of two."),
)


class QuizLogic(EpisodeLogic):
    """Keeps the history of every answer; the observation shows only the current question."""

    def _reset(self, seed: int) -> Outcome:
        self.questions = random.Random(seed).sample(BANK, QUESTIONS_PER_EPISODE)
        self.question_index = 0
        self.total_score = 0.0
        self.attempts_left = ATTEMPTS
        self.hint_shown = False
        self.history: list[dict[str, Any]] = []
        return self._outcome(reward=None, feedback=None, correct=None, show_hint=False)

    def _step(self, action: dict[str, Any]) -> Outcome:
        answer = action.get("answer")
        hint_requested = action.get("hint_requested", False)
        confidence = action.get("confidence")
        note = action.get("note")
        answered_by = action.get("from_")
        if not isinstance(answer, str):
            raise EpisodeError("answer must be a string")
        if not isinstance(hint_requested, bool):
            raise EpisodeError("hint_requested must be a boolean")
        if confidence is not None and (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not math.isfinite(confidence)
            or not 0.0 <= confidence <= 1.0
        ):
            raise EpisodeError("confidence must be a number from 0 to 1, or null")
        for name, value in (("note", note), ("from", answered_by)):
            if value is not None and not isinstance(value, str):
                raise EpisodeError(f"{name} must be a string")

        question = self.questions[self.question_index]
        self.hint_shown = self.hint_shown or hint_requested
        correct = answer.strip().lower() == question.answer
        points = (HINT_PENALTY if self.hint_shown else 1.0) if correct else 0.0
        self.total_score += points
        self.history.append(
            {
                "question_id": question.id,
                "answer": answer,
                "correct": correct,
                "hint_used": self.hint_shown,
                "confidence": None if confidence is None else float(confidence),
                "note": note,
                "answered_by": answered_by,
            }
        )
        if correct:
            feedback = "correct"
        else:
            self.attempts_left -= 1
            feedback = f"wrong; attempts left: {self.attempts_left}"
            if self.attempts_left == 0:
                feedback = f"wrong; the answer was {question.answer!r}"
        if correct or self.attempts_left == 0:
            self.question_index += 1
            self.attempts_left = ATTEMPTS
            self.hint_shown = False
        return self._outcome(
            reward=points, feedback=feedback, correct=correct, show_hint=self.hint_shown
        )

    def _outcome(
        self, reward: float | None, feedback: str | None, correct: bool | None, show_hint: bool
    ) -> Outcome:
        time_left = TIME_BUDGET - self.step_count
        finished = self.question_index >= len(self.questions)
        current = None if finished else self.questions[self.question_index]
        return Outcome(
            {
                "question": current.text if current else "",
                "hint": current.hint if current and show_hint else None,
                "feedback": feedback,
                "attempts_left": self.attempts_left,
                "score": self.total_score,
                "correct": correct,
                "time_left": time_left,
            },
            reward=reward,
            done=finished or time_left <= 0,
            metadata={
                "question_id": current.id if current else None,
                "question_number": min(self.question_index + 1, len(self.questions)),
            },
        )

    def _state(self) -> dict[str, Any]:
        return {
            "question_index": self.question_index,
            "total_score": self.total_score,
            "history": [dict(entry) for entry in self.history],
        }
