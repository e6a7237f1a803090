"""The example environments' logic in process: fast checks of what the servers rely on."""

from __future__ import annotations

import random
from typing import Any

import pytest

from examples._logic import DEFAULT_SEED, EpisodeError, EpisodeLogic, Outcome
from examples.coding_env.logic import CodingLogic
from examples.echo_env.logic import EchoLogic
from examples.grid_env.logic import GridLogic
from examples.quiz_env.logic import BANK, TIME_BUDGET, QuizLogic
from examples.reacher_env.logic import MAX_STEPS, ReacherLogic

from .wire import check

WIRE_NAMES = {"class_": "class", "time_left": "time-left", "from_": "from"}


def wire(fields: dict[str, Any]) -> dict[str, Any]:
    """Python field names to wire names, optional Nones dropped, as the servers send them."""
    return {
        WIRE_NAMES.get(k, k): v for k, v in fields.items() if not (k == "feedback" and v is None)
    }


def run(logic: EpisodeLogic, seed: int | None, actions: list[dict[str, Any]]) -> list[Outcome]:
    outcomes = [logic.reset(seed=seed)]
    for action in actions:
        if outcomes[-1].done:
            break
        outcomes.append(logic.step(action))
    return outcomes


def test_no_seed_means_the_default_seed() -> None:
    moves = [{"torques": [0.5, -0.5]}] * 3
    assert run(ReacherLogic(), None, moves) == run(ReacherLogic(), DEFAULT_SEED, moves)


def test_constructed_logic_can_step_before_any_reset() -> None:
    assert EchoLogic().step({"message": "abc"}).reward == pytest.approx(0.3)


@pytest.mark.parametrize("seed", range(20))
def test_reacher_stays_inside_its_schema_bounds(seed: int) -> None:
    rng = random.Random(seed)
    logic = ReacherLogic()
    outcome = logic.reset(seed=seed)
    steps = 0
    while not outcome.done:
        action = {"torques": [rng.choice([-1.0, 1.0, rng.uniform(-1, 1)]) for _ in range(2)]}
        check("reacher_env", "action", action)
        outcome = logic.step(action)
        check("reacher_env", "observation", outcome.observation)
        check("reacher_env", "state", logic.state())
        assert outcome.reward == pytest.approx(-outcome.observation["distance"])
        steps += 1
    assert steps <= MAX_STEPS


def test_grid_walls_edges_and_turns() -> None:
    logic = GridLogic()
    first = logic.reset(seed=3)
    check("grid_env", "observation", wire(first.observation))
    out = logic.step({"type": "move", "direction": "north", "steps": 3})
    assert out.observation["position"] == {"row": 0, "col": 0}  # the edge stops it
    assert out.observation["class_"] == "edge"
    for rotation, facing in (("right", "east"), ("right", "south"), ("left", "east")):
        out = logic.step({"type": "turn", "rotation": rotation})
        assert out.observation["facing"] == facing
    out = logic.step({"type": "pick", "cells": [[4, 4]]})  # out of reach: nothing
    assert out.reward == 0.0 and out.observation["inventory"] == []
    with pytest.raises(EpisodeError):
        logic.step({"type": "fly"})


def test_quiz_scoring_hints_and_time_budget() -> None:
    answers = {q.text: q.answer for q in BANK}
    logic = QuizLogic()
    obs = logic.reset(seed=4).observation
    check("quiz_env", "observation", wire(obs))
    out = logic.step({"answer": answers[obs["question"]], "hint_requested": True})
    assert out.reward == pytest.approx(0.5)
    out = logic.step({"answer": "wrong", "from_": "bob"})
    assert out.observation["hint"] is None and out.observation["attempts_left"] == 2
    assert logic.state()["history"][-1]["answered_by"] == "bob"
    check("quiz_env", "state", logic.state())
    while not out.done:
        out = logic.step({"answer": "wrong"})
    assert logic.step_count <= TIME_BUDGET
    with pytest.raises(EpisodeError):
        logic.step({"answer": "late"})


def test_coding_checks_its_timeout_bounds() -> None:
    logic = CodingLogic()
    with pytest.raises(EpisodeError):
        logic.step({"code": "1", "timeout_s": 0})
    with pytest.raises(EpisodeError):
        logic.step({"code": "1", "timeout_s": 31})
    assert logic.state()["last_exit_code"] is None


@pytest.mark.parametrize("code", ["\x00", "print(1)\x00", "import sys; print(sys.stdin.read())"])
def test_coding_env_reports_any_program_as_a_result_never_a_server_error(code: str) -> None:
    # Found by `envgen verify coding_env --local`: a NUL byte in the code made the server
    # answer 500 (it was passed as an argv item, which cannot hold one).
    from examples.coding_env.logic import run_code

    result = run_code(code, timeout_s=10, hash_seed=0)
    assert result["timed_out"] is False
    if "\x00" in code:
        assert result["exit_code"] != 0 and "null" in result["stderr"].lower()
    else:
        assert result["exit_code"] == 0 and result["stdout"] == "\n"  # stdin is empty
