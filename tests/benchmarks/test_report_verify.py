"""benchmarks/report.py's verify section: the before/after columns appear only with a base."""

from __future__ import annotations

from typing import Any

from benchmarks.report import verify_section

ROW = {
    "env": "echo_env",
    "seconds": 6.0,
    "ok": True,
    "episodes": 51,
    "boundaries": 1,
    "steps": 222,
    "negative_cases": 4,
    "violations": [],
    "within_target": True,
}


def test_a_comparison_shows_each_envs_time_before_and_the_ratio() -> None:
    data: dict[str, Any] = {
        "target_s": 60.0,
        "rows": [ROW],
        "runs": 2,
        "before": {"rev": "a4bebe6", "runs": 2, "seconds": {"echo_env": 4.0}},
    }
    lines = verify_section(data)
    assert "| echo_env | 6.0 s | 4.0 s | 1.50 | 51 (1) | 222 | 4 | conforms | met |" in lines
    assert lines[-1] == "All envs: 6.0 s against 4.0 s (1.50)."


def test_without_a_base_the_columns_say_so() -> None:
    lines = verify_section({"target_s": 60.0, "rows": [{**ROW, "ok": False, "violations": ["x"]}]})
    assert "| echo_env | 6.0 s | - | - | 51 (1) | 222 | 4 | x | met |" in lines
