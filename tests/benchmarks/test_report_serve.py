"""benchmarks/report.py's server-backends section: both backends' medians and the verdicts."""

from __future__ import annotations

from benchmarks.report import serve_section


def test_the_section_states_each_target_and_its_verdict() -> None:
    data = {
        "runs": 3,
        "steps": 100,
        "load": [1.0, 0.5, 0.25],
        "median": {
            "openenv": {"ready_s": 2.5, "server_cpu_us": 200.0},
            "lean": {"ready_s": 0.25, "server_cpu_us": 90.0},
        },
        "ready_ratio_lean_over_openenv": 0.1,
        "cpu_ratio_lean_over_openenv": 0.45,
    }
    lines = serve_section(data)
    assert "| lean | 0.25 s | 90 us |" in lines
    assert "- lean ready: 0.25 s (target <= 1.0 s): met (0.10x openenv's)" in lines
    assert "- lean server CPU per step: 0.450x openenv's (target <= 0.4x): **missed**" in lines
