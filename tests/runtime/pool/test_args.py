"""pool/args.py: the pool's argument checks and the rule that spreads seeds over slots."""

from __future__ import annotations

import pytest
from envgen_runtime.pool.args import check_size, seeds_for, sessions_for


@pytest.mark.parametrize("size", [0, -1, True, 2.0, "8"])
def test_a_size_that_is_not_a_positive_int_is_refused(size: object) -> None:
    with pytest.raises(ValueError, match="size must be a positive integer"):
        check_size(size, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "message"), [(0, "at least 1"), (True, "must be an int")])
def test_sessions_per_server_must_be_a_positive_int_or_none(given: object, message: str) -> None:
    check_size(8, None)  # None: ask the server
    with pytest.raises(ValueError, match=message):
        check_size(8, given)  # type: ignore[arg-type]


def test_http_always_takes_one_session_per_server() -> None:
    assert sessions_for("http", None) == 1
    assert sessions_for("websocket", None) is None
    assert sessions_for("websocket", 4) == 4
    with pytest.raises(ValueError, match="must be 1"):
        sessions_for("http", 4)


def test_seeds_spread_as_documented() -> None:
    assert seeds_for(None, 3) == [None, None, None]
    assert seeds_for(10, 3) == [10, 11, 12]
    assert seeds_for([5, None, 7], 3) == [5, None, 7]
    with pytest.raises(ValueError, match="2 entries for 3 slots"):
        seeds_for([1, 2], 3)
    with pytest.raises(TypeError):
        seeds_for(True, 3)
