"""bench_serve's clock and ratios: every thread's CPU in ns, and ratios taken run by run."""

from __future__ import annotations

import os
import threading
import time

import pytest

from benchmarks.bench_serve import TURN_STEPS, _cpu_ns, _ratios, _turns


def test_the_clock_counts_another_thread_s_cpu() -> None:
    """The main thread sleeps while a worker spins: a main-thread-only clock would miss it
    (as ``/proc/<pid>/schedstat`` does: openenv's steps run on executor threads)."""
    stop = threading.Event()

    def spin_until_stopped() -> None:
        while not stop.is_set():
            pass

    worker = threading.Thread(target=spin_until_stopped)
    main_before = time.thread_time()
    before = _cpu_ns(os.getpid())
    worker.start()
    time.sleep(0.2)
    after = _cpu_ns(os.getpid())
    stop.set()
    worker.join(timeout=10)
    assert time.thread_time() - main_before < 0.05
    assert after - before >= 0.05e9


def test_ratios_pair_each_run_with_the_same_run() -> None:
    assert _ratios([10.0, 30.0], [20.0, 40.0]) == [0.5, 0.75]
    with pytest.raises(ValueError):
        _ratios([1.0], [1.0, 2.0])


def test_turns_cover_the_steps_in_turns_of_turn_steps() -> None:
    assert _turns(TURN_STEPS * 2 + 7) == [TURN_STEPS, TURN_STEPS, 7]
    assert _turns(TURN_STEPS) == [TURN_STEPS]
    assert _turns(3) == [3]
