"""Loading and rendering many environments on every core, with the output of a serial run.

Each env loads (schema checks) and renders (models, templates) on its own, so the envs are
shared out over forked worker processes. The parent renders the first env itself before it
forks: the workers inherit a model generator that is already imported and warmed up rather
than paying for that once each. Results come back in the order asked, errors included, so
the files written, and the error reported for each file, are those of a serial run.
Formatting stays one ruff run in the parent (ruff spreads over the cores itself).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from dataclasses import dataclass

from generator.errors import EnvgenError, InputError
from generator.loader import EnvInput, Layout, load_env

JOBS_VARIABLE = "ENVGEN_JOBS"
"""Worker processes to use (1: render in this process); unset or 0: one per core."""
ENVS_PER_WORKER = 4
"""A worker costs a fork and pickling; below this many envs each, fewer workers are used."""


@dataclass
class Rendered:
    """One env's outcome: loaded and rendered, or the error that stopped it (and where)."""

    name: str
    env: EnvInput | None = None
    files: dict[str, str] | None = None
    load_error: InputError | None = None
    render_error: EnvgenError | None = None


def render_one(layout: Layout, name: str) -> Rendered:
    """Load and render `name`; an envgen error is returned with the stage it happened in."""
    from generator.render import render_env

    try:
        env = load_env(layout, name)
    except InputError as exc:
        return Rendered(name, load_error=exc)
    try:
        return Rendered(name, env=env, files=render_env(env))
    except EnvgenError as exc:
        return Rendered(name, env=env, render_error=exc)


def _leave_interrupts() -> None:
    """Workers ignore Ctrl-C: the parent gets it too and stops them (no traceback from each)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(envs: int, jobs: int | None = None) -> int:
    """How many processes render `envs` envs: 1 means this one, serially.

    `jobs` (else $ENVGEN_JOBS, else the core count) caps it. Forking is only safe in a
    process with no other threads, and only where fork exists; otherwise it is 1.
    """
    if jobs is None:
        text = os.environ.get(JOBS_VARIABLE, "").strip() or "0"
        if not text.isdigit():
            raise EnvgenError(f"${JOBS_VARIABLE} must be a whole number of processes, not {text!r}")
        jobs = int(text)
    limit = jobs if jobs > 0 else _cores()
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        return 1
    return max(1, min(limit, envs // ENVS_PER_WORKER))


def render_all(layout: Layout, names: list[str], jobs: int | None = None) -> list[Rendered]:
    """`render_one` for each of `names`, in that order, on up to `jobs` processes."""
    workers = worker_count(len(names), jobs)
    if workers == 1:
        return [render_one(layout, name) for name in names]
    first = render_one(layout, names[0])  # warms up the model generator for the workers
    rest = names[1:]
    chunk = max(1, len(rest) // (workers * 4))
    with multiprocessing.get_context("fork").Pool(workers, initializer=_leave_interrupts) as pool:
        results = pool.starmap(render_one, [(layout, name) for name in rest], chunksize=chunk)
    return [first, *results]
