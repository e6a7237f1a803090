"""bench_step's async-vs-sync targets: computed from the concurrency rows, printed by report."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.bench_step import FLOOR_NAME, PYDANTIC_REF, TARGETS, async_vs_sync, headline
from benchmarks.report import _async_targets, _import_targets, step_section
from tests.helpers import REPO


def row(
    transport: str, client: str, clients: int, steps_per_s: float, cpu: float
) -> dict[str, Any]:
    return {
        "transport": transport,
        "client": client,
        "clients": clients,
        "steps_per_s": steps_per_s,
        "cpu_per_step_us": cpu,
    }


ROWS = [
    row("http", "sync threads", 1, 2000.0, 400.0),
    row("http", "async loop", 1, 1900.0, 460.0),
    row("http", "sync threads", 8, 4000.0, 450.0),
    row("http", "async loop", 8, 5000.0, 420.0),
    row("websocket", "sync threads", 1, 3000.0, 300.0),
    row("websocket", "async loop", 1, 2500.0, 390.0),
]


def test_ratios_come_from_one_client_cpu_and_many_clients_throughput() -> None:
    assert async_vs_sync(ROWS) == {
        "http_async_cpu_vs_sync": 1.15,
        "http_async_throughput_vs_sync_8": 1.25,
        "websocket_async_cpu_vs_sync": 1.3,
    }


def test_report_prints_each_as_a_target_with_its_verdict() -> None:
    head = async_vs_sync(ROWS)
    met = {
        key: value <= TARGETS["async_cpu_vs_sync_max"]
        if key.endswith("_cpu_vs_sync")
        else value >= TARGETS["async_throughput_vs_sync_min"]
        for key, value in head.items()
    }
    lines = _async_targets(head, TARGETS, met)
    assert lines == [
        "- http: async client CPU/step 1.15x the sync client's (target <= 1.2x): met",
        "- http: 8 async clients on one loop make 1.25x the steps/s of 8 sync clients on "
        "threads (target >= 1.0x): met",
        "- websocket: async client CPU/step 1.3x the sync client's (target <= 1.2x): **missed**",
    ]
    assert _async_targets({}, TARGETS, {"import": True}) == []  # results from before


GENERATED = [
    {
        "transport": t,
        "client": "generated",
        "cpu_per_step_us": 300.0,
        "latency_median_us": 400.0,
        "cpu_vs_raw": 1.0,
        "cpu_vs_openenv": 0.3,
    }
    for t in ("http", "websocket")
]


def _fresh_with_floor(rounds: list[tuple[float, float]]) -> dict[str, Any]:
    return {
        "rows": [
            {"transport": t, "client": "generated", "import_ms": ms, "first_observation_ms": 250.0}
            for t, ms in (("http", 200.0), ("websocket", 220.0))
        ],
        "reference_imports": [
            {"module": "requests", "import_ms": 10.0},
            {"module": PYDANTIC_REF, "import_ms": 140.0},
        ],
        "import_floor": {
            "module": FLOOR_NAME,
            "runs": len(rounds),
            "import_ms": 170.0,
            "rounds": [{"generated_ms": g, "floor_ms": f} for g, f in rounds],
        },
    }


def test_the_import_target_is_the_median_per_round_difference_over_the_floor() -> None:
    # Per round: generated - floor = 30, 45, 35 -> 35 (not 210 - 170 = 40 from the medians)
    fresh = _fresh_with_floor([(200.0, 170.0), (260.0, 215.0), (190.0, 155.0)])
    head = headline(GENERATED, fresh, ROWS)
    assert head["import_ms"] == 210.0
    assert head["import_vs_pydantic"] == 1.5
    assert head["import_floor_ms"] == 170.0
    assert head["import_over_floor_ms"] == 35.0
    assert head["met"]["import_over_floor"] is True
    assert "import" not in head["met"]  # the absolute target is retired
    late = headline(GENERATED, _fresh_with_floor([(220.0, 170.0), (230.0, 185.0)]), ROWS)
    assert late["import_over_floor_ms"] == 47.5
    assert late["met"]["import_over_floor"] is False


def test_the_report_states_the_import_target_as_a_difference_over_the_floor() -> None:
    recorded = json.loads((REPO / "benchmarks/results/step.json").read_text())
    fresh = _fresh_with_floor([(200.0, 150.0), (210.0, 165.0), (205.0, 160.0)])
    recorded["fresh"] = fresh
    recorded["headline"] = headline(GENERATED, fresh, ROWS)
    lines = step_section(recorded)
    (line,) = [x for x in lines if x.startswith("- import of a generated client")]
    assert line == (
        "- import of a generated client: 210.0 ms, +45.0 ms over its floor (170.0 ms: the same "
        "models by hand on pydantic; the median of the per-round differences) (target "
        "generated - floor <= 40.0 ms): **missed**"
    )
    assert f"| {FLOOR_NAME} (the import floor) | 170.0 |" in lines


def test_results_from_before_the_floor_keep_their_absolute_import_line() -> None:
    head = {"import_ms": 72.5}
    lines = _import_targets(head, {"import_ms_max": 150.0}, {"import": True})
    assert lines == ["- import of a generated client: 72.5 ms (target <= 150.0 ms): met"]


def test_concurrency_rows_are_medians_of_interleaved_rounds(monkeypatch: Any) -> None:
    """One run of each kind compares two different machines here (its speed drifts within
    minutes): the kinds alternate round by round and each row is the median of its rounds."""
    import dataclasses

    from benchmarks import bench_step

    calls: list[str] = []
    figures = iter([100.0, 200.0, 110.0, 190.0, 400.0, 50.0, 120.0, 210.0, 105.0, 205.0])

    def run(kind: str, urls: list[str], transport: str, clients: int, seconds: float) -> Any:
        calls.append(kind)
        value = next(figures)
        return value, value * 2  # steps/s, CPU per step

    monkeypatch.setattr(bench_step, "_concurrency_run", run)
    monkeypatch.setattr(bench_step, "TRANSPORTS", ("http",))
    settings = dataclasses.replace(bench_step.QUICK, concurrency=(8,), concurrency_rounds=5)
    rows = bench_step.measure_concurrency({"http": ["u"] * 8}, settings)
    sync, asyncio_ = "sync threads", "async loop"
    assert calls == [sync, asyncio_, asyncio_, sync] * 2 + [sync, asyncio_]
    by_kind = {r["client"]: r for r in rows}
    # sync ran 100, 190, 400, 210, 105; async 200, 110, 50, 120, 205
    assert by_kind[sync]["steps_per_s"] == 190.0
    assert by_kind[asyncio_]["steps_per_s"] == 120.0
    assert by_kind[asyncio_]["cpu_per_step_us"] == 240.0
    assert by_kind[sync]["rounds"] == by_kind[asyncio_]["rounds"] == 5


def test_the_asyncio_floor_enters_the_headline_and_the_report() -> None:
    fresh = {
        "rows": [
            {"transport": t, "client": "generated", "import_ms": 200.0, "first_observation_ms": 1}
            for t in ("http", "websocket")
        ],
        "reference_imports": [],
    }
    floors = [{"transport": "websocket", "floor_us": 44.0}]
    head = headline(GENERATED, fresh, ROWS[4:], floors)  # websocket: sync 300 us, async 390
    assert head["websocket_asyncio_floor_us"] == 44.0
    assert head["websocket_async_cpu_vs_sync_best"] == 1.15  # (300 + 44) / 300
    assert head["websocket_async_cpu_vs_sync"] == 1.3
    assert _async_targets(head, TARGETS, head["met"]) == [
        "- websocket: async client CPU/step 1.3x the sync client's (target <= 1.2x): **missed**",
        "  - the asyncio floor in this run: a raw asyncio round trip costs +44.0 us CPU over a "
        "raw blocking one, so an asyncio client adding nothing else to the sync client would "
        "be at 1.15x",
    ]
