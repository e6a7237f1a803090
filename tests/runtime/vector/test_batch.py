"""The vector env's rules, one slot result at a time (``Episodes``: no I/O, no servers)."""

from __future__ import annotations

from envgen_runtime import ProviderError, ServerError, SlotLostError, SlotResult
from envgen_runtime.vector.batch import Episodes


def _ok(
    slot: int, obs: str, *, reward: float | None = 1.0, done: bool = False, reset: bool = False
) -> SlotResult[str]:
    return SlotResult(slot, obs, reward, done, {"metadata": {"k": [1]}}, reset=reset)


def _lost(slot: int) -> SlotResult[str]:
    error = SlotLostError("gone", slot=slot, server_lost=True)
    return SlotResult(slot, None, None, True, error=error, action_dropped=True)


def _started(size: int = 2, seeds: list[int | None] | None = None) -> Episodes:
    episodes = Episodes(size)
    episodes.started(list(range(size)), seeds or [None] * size)
    for slot in range(size):
        assert episodes.reset_outcome(_ok(slot, f"first{slot}", reward=None, reset=True))
    return episodes


def test_a_step_answer_is_reward_and_termination_and_infos_are_copies() -> None:
    episodes = _started()
    result = _ok(0, "o", reward=None, done=True)
    outcome = episodes.step_outcome(result)
    assert outcome is not None
    assert (outcome.observation, outcome.reward, outcome.terminated, outcome.truncated) == (
        "o",
        0.0,
        True,
        False,
    )
    assert outcome.info == {"metadata": {"k": [1]}}
    assert outcome.info["metadata"] is not result.extras["metadata"]
    assert episodes.due == [True, False]


def test_a_due_slot_reset_by_the_pool_starts_the_next_episode_with_no_flags() -> None:
    episodes = _started()
    episodes.step_outcome(_ok(0, "end", done=True))
    outcome = episodes.step_outcome(_ok(0, "new", reward=None, reset=True))
    assert outcome is not None
    assert (outcome.observation, outcome.reward, outcome.terminated, outcome.truncated) == (
        "new",
        0.0,
        False,
        False,
    )
    assert episodes.due == [False, False]


def test_a_lost_slot_is_truncated_on_its_last_observation_and_then_due() -> None:
    episodes = _started()
    episodes.step_outcome(_ok(1, "seen"))
    result = _lost(1)
    outcome = episodes.step_outcome(result)
    assert outcome is not None
    assert outcome.truncated and not outcome.terminated and outcome.reward == 0.0
    assert outcome.observation == "seen" and outcome.info == {"error": result.error}
    assert episodes.due == [False, True]
    # The pool could not reset it on the next step either: the vector env must recover it.
    assert episodes.step_outcome(_lost(1)) is None


def test_a_server_answered_error_is_a_step_that_did_nothing() -> None:
    episodes = _started()
    error = ServerError(None, "boom", "step", code="EXECUTION_ERROR")
    outcome = episodes.step_outcome(SlotResult(0, None, None, False, error=error))
    assert outcome is not None
    assert outcome.observation == "first0" and outcome.info == {"error": error}
    assert not outcome.terminated and not outcome.truncated and episodes.due == [False, False]


def test_a_reset_the_pool_made_in_a_slot_not_due_is_marked_restarted() -> None:
    episodes = _started()
    outcome = episodes.step_outcome(_ok(0, "moved", reward=None, reset=True))
    assert outcome is not None
    assert outcome.observation == "moved" and outcome.info["restarted"] is True
    assert not outcome.truncated


def test_recovery_seeds_follow_the_pools_rule_and_rebase_after_a_recovery() -> None:
    episodes = _started(2, seeds=[10, None])
    assert episodes.next_seed(0) == 12 and episodes.next_seed(1) is None  # 10 + 1 * size
    episodes.step_outcome(_ok(0, "end", done=True))
    episodes.step_outcome(_ok(0, "second", reward=None, reset=True))  # the pool's: seed 12
    assert episodes.next_seed(0) == 14
    episodes.step_outcome(_lost(0))
    assert episodes.step_outcome(_lost(0)) is None
    recovered = episodes.recovered(_ok(0, "third", reward=None, reset=True), 14)
    assert recovered.observation == "third" and not recovered.truncated
    assert episodes.next_seed(0) == 16 and episodes.due == [False, False]


def test_a_failed_recovery_truncates_again_and_stays_due() -> None:
    episodes = _started()
    episodes.step_outcome(_lost(0))
    error = ProviderError("no server")
    outcome = episodes.recovered(SlotResult(0, None, None, True, error=error), None)
    assert outcome.truncated and outcome.observation == "first0"
    assert outcome.info == {"error": error} and episodes.due[0]
