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
    assert any(
        line.startswith("| lean | envgen's lean app") and "| 90 us | 0.45x |" in line
        for line in lines
    )
    assert "- lean ready: 0.25 s (target <= 1.0 s): met (0.10x openenv's)" in lines
    assert "- lean server CPU per step: 0.450x openenv's (target <= 0.4x): **missed**" in lines


def test_the_floors_and_the_thread_hop_are_stated_as_what_lean_pays_above_them() -> None:
    data = {
        "runs": 3,
        "steps": 100,
        "load": [1.0, 0.5, 0.25],
        "median": {
            "openenv": {"ready_s": 2.5, "server_cpu_us": 200.0},
            "lean": {"ready_s": 0.25, "server_cpu_us": 90.0},
            "lean+thread": {"ready_s": 0.25, "server_cpu_us": 150.0},
            "floor": {"ready_s": 0.2, "server_cpu_us": 60.0},
            "floor+hop": {"ready_s": 0.2, "server_cpu_us": 70.0},
        },
        "ready_ratio_lean_over_openenv": 0.1,
        "cpu_ratio_lean_over_openenv": 0.45,
    }
    text = "\n".join(serve_section(data))
    assert (
        "| floor | floor: uvicorn + starlette, a fixed reply on the loop | 0.20 s | 60 us | 0.30x |"
        in text
    )
    assert (
        "costs 60 us, 0.30x openenv's: envgen's session code and the env's own step are the "
        "other 30 us" in text
    )
    assert "pays 60 us more per step: 0.750x openenv's" in text
