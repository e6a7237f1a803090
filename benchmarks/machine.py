"""The machine's state during a benchmark run, recorded beside its figures.

This machine is shared and its speed drifts by tens of percent within minutes, so every
target is a ratio against a floor or rival measured in the same run; the cores and the load
average at the start and the end of the run say how busy the machine was meanwhile.
"""

from __future__ import annotations

import os
from typing import Any


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


class MachineState:
    """Started when a run starts; ``record()`` at its end gives the JSON to store."""

    def __init__(self) -> None:
        self.cores = os.cpu_count() or 1
        self.load_start = _load()

    def record(self) -> dict[str, Any]:
        """Cores and the load averages (1, 5, 15 min) at the start and now."""
        return {"cores": self.cores, "load_start": self.load_start, "load_end": _load()}


def describe(machine: dict[str, Any] | None) -> list[str]:
    """The line a report prints for a run's ``machine`` record (none for older results)."""
    if not machine:
        return []
    start = ", ".join(f"{value:.2f}" for value in machine["load_start"])
    end = ", ".join(f"{value:.2f}" for value in machine["load_end"])
    return [
        f"Machine during the run: {machine['cores']} cores; load average (1, 5, 15 min) "
        f"{start} at the start, {end} at the end (the end's includes the run's own load)."
    ]
