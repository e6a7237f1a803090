"""benchmarks/machine.py: the machine's cores and load, recorded at a run's start and end."""

from __future__ import annotations

import os

from benchmarks.machine import MachineState, describe


def test_a_record_holds_the_cores_and_both_load_averages() -> None:
    record = MachineState().record()
    assert record["cores"] == os.cpu_count()
    assert len(record["load_start"]) == len(record["load_end"]) == 3


def test_the_report_line_names_both_and_older_results_get_none() -> None:
    line = describe({"cores": 2, "load_start": [0.5, 0.25, 1], "load_end": [2, 1.5, 1.125]})
    assert line == [
        "Machine during the run: 2 cores; load average (1, 5, 15 min) 0.50, 0.25, 1.00 at the "
        "start, 2.00, 1.50, 1.12 at the end (the end's includes the run's own load)."
    ]
    assert describe(None) == []
