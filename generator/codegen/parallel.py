"""Loading and rendering many environments on every core, with the output of a serial run.

Each env loads (schema checks) and renders (models, templates) on its own, so the envs are
shared out over forked worker processes. The parent renders the first env itself before it
forks: the workers inherit a model generator that is already imported and warmed up rather
than paying for that once each. Results come back in the order asked, errors included, so
the files written, and the error reported for each file, are those of a serial run.
Formatting stays one ruff run in the parent (ruff spreads over the cores itself).

When a few envs changed since the last run, most of a run's time is the model generator's
import and first-call warm-up. `WarmRenderer` uses one warm worker (`generator.codegen.warm_worker`,
forked when the `envgen` program starts, or on entry) that warms it up while this process
checks its cache and loads the envs to render; this process hands it each env's model
calls (`model_call`), loads the templates while the worker runs them, and renders the rest
of the env's files.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from generator.codegen import warm_worker
from generator.codegen.warm_worker import JOBS_VARIABLE, Worker, jobs_setting, worker_signals
from generator.errors import EnvgenError, InputError
from generator.schema.loader import EnvInput, Layout, load_env

if TYPE_CHECKING:
    from generator.codegen.models import EnvModels
    from generator.codegen.render import ModelMaker, PendingModels

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


def render_one(layout: Layout, name: str, make_models: ModelMaker | None = None) -> Rendered:
    """Load and render `name`; an envgen error is returned with the stage it happened in."""
    from generator.codegen.render import render_env

    try:
        env = load_env(layout, name)
    except InputError as exc:
        return Rendered(name, load_error=exc)
    try:
        files = render_env(env, make_models=make_models, generated=layout.generated)
        return Rendered(name, env=env, files=files)
    except EnvgenError as exc:
        return Rendered(name, env=env, render_error=exc)


def _forking_allowed() -> bool:
    """Fork only where it exists and this process runs no other thread (forking one is unsafe).

    Threads started by native code (Ray's or gRPC's, in a program that embeds envgen) are
    invisible to `threading`; on Linux the kernel's count of this process's tasks sees them.
    """
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        return False
    return _os_threads() <= 1


def _os_threads() -> int:
    """This process's threads as the kernel counts them (1 where that count is not readable)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _job_limit(jobs: int | None) -> int:
    """`jobs`, else $ENVGEN_JOBS, else 0 (one process per core)."""
    if jobs is not None:
        return jobs
    setting = jobs_setting(os.environ)
    if setting is None:
        text = os.environ[JOBS_VARIABLE].strip()
        raise EnvgenError(f"${JOBS_VARIABLE} must be a whole number of processes, not {text!r}")
    return setting


def worker_count(envs: int, jobs: int | None = None) -> int:
    """How many processes render `envs` envs: 1 means this one, serially.

    `jobs` (else $ENVGEN_JOBS, else the core count) caps it. Forking is only safe in a
    process with no other threads, and only where fork exists; otherwise it is 1.
    """
    limit = _job_limit(jobs)
    if not _forking_allowed():
        return 1
    return max(1, min(limit if limit > 0 else _cores(), envs // ENVS_PER_WORKER))


def render_all(layout: Layout, names: list[str], jobs: int | None = None) -> list[Rendered]:
    """`render_one` for each of `names`, in that order, on up to `jobs` processes."""
    workers = worker_count(len(names), jobs)
    if workers == 1:
        return [render_one(layout, name) for name in names]
    first = render_one(layout, names[0])  # warms up the model generator for the workers
    rest = names[1:]
    chunk = max(1, len(rest) // (workers * 4))
    with multiprocessing.get_context("fork").Pool(workers, initializer=worker_signals) as pool:
        results = pool.starmap(render_one, [(layout, name) for name in rest], chunksize=chunk)
    return [first, *results]


class WarmRenderer:
    """Renders envs like `render_all`, with a model-making worker forked on entry.

    `warm` says the run likely renders few envs (a cache from the last run exists): then the
    worker warms up the model generator while this process checks which envs need rendering
    and loads them; it runs their model calls while this process loads the templates, and
    this process renders the rest.
    Without `warm`, or when many envs need rendering, this is `render_all`; when none do, the
    worker cost only its fork. If the worker fails in any way, the models are made here, so
    an error is reported as a serial run reports it.
    """

    def __init__(self, layout: Layout, *, warm: bool = True, jobs: int | None = None) -> None:
        self._layout = layout
        self._warm = warm
        self._jobs = jobs
        self._worker: Worker | None = None

    def __enter__(self) -> WarmRenderer:
        early = warm_worker.take_early()
        if self._warm and _job_limit(self._jobs) != 1 and _forking_allowed():
            self._worker = early or warm_worker.fork()
        elif early is not None:  # no cache: many envs to render, its core is wanted
            early.stop()
        return self

    def render(self, names: list[str]) -> list[Rendered]:
        """`render_one` for each of `names`, in order, the models made by the worker."""
        if self._worker is None or not names or worker_count(len(names), self._jobs) > 1:
            self._stop()  # not needed: free its core for render_all's workers
            return render_all(self._layout, names, self._jobs) if names else []
        return [render_one(self._layout, name, self._start_models) for name in names]

    def _start_models(self, env: EnvInput, client_header: str, server_header: str) -> PendingModels:
        """Send the worker `env`'s two model calls; what this returns waits for its reply."""
        from generator.codegen.models import EnvModels, client_call, generate_env_models
        from generator.codegen.server_models import ServerModels, server_call

        def made_here() -> EnvModels:
            return generate_env_models(env, client_header, server_header)

        worker = self._worker
        if worker is None:
            return made_here
        server, union_alias = server_call(env, server_header)
        try:
            worker.send(client_call(env, client_header), server)
        except OSError:  # the worker died: make them here instead
            self._stop()
            return made_here

        def receive() -> EnvModels:
            try:
                reply: tuple[str, str] | EnvgenError = worker.receive()
            except (EOFError, OSError):
                self._stop()
                return made_here()
            if isinstance(reply, EnvgenError):
                raise reply
            return EnvModels(reply[0], ServerModels(reply[1], union_alias))

        return receive

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
