"""The warm model worker: a forked process that imports and warms up the model generator
while its parent does the rest of a run, then makes the models it is sent.

When a few envs changed, the worker's warm-up (datamodel-code-generator's import and first
call, ~0.6 s) is most of the run, so every millisecond it starts earlier comes off the run:
the `envgen` program forks it first thing (`start_early`), before the CLI and its libraries
are imported, and `parallel.WarmRenderer` adopts it (or forks one itself when called from
Python). So this module imports only what the interpreter has loaded at start-up.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

JOBS_VARIABLE = "ENVGEN_JOBS"
"""Worker processes to use (1: render in this process); unset or 0: one per core."""

_EARLY_COMMANDS = frozenset({"generate", "check"})
_early: Worker | None = None


def worker_signals() -> None:
    """A worker ignores Ctrl-C (the parent gets it too and stops it: no traceback from each)
    and dies on SIGTERM, whatever handler it inherited from the calling program."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Worker:
    """A forked warm worker: its PID and this process's ends of its two pipes."""

    def __init__(self, pid: int, requests: int, replies: int) -> None:
        self.pid = pid
        self._fds = (requests, replies)
        self._conns: tuple[Connection, Connection] | None = None

    def call(self, *job: Any) -> Any:
        """Send `job` and return the reply; EOFError or OSError when the worker is gone."""
        if self._conns is None:
            from multiprocessing.connection import Connection

            requests, replies = self._fds
            self._conns = Connection(requests, readable=False), Connection(replies, writable=False)
        self._conns[0].send(job)
        return self._conns[1].recv()

    def stop(self) -> None:
        """End the worker now, whether done or still warming up for nothing.

        SIGKILL: it holds nothing (every reply it owed was read), and a SIGTERM handler it
        inherited from the calling program could keep it alive.
        """
        if self._conns is not None:
            for conn in self._conns:
                conn.close()
        else:
            for fd in self._fds:
                os.close(fd)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def fork() -> Worker:
    """Start a warm worker (the caller has checked that forking is safe here)."""
    requests_in, requests_out = os.pipe()
    replies_in, replies_out = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(requests_out)
        os.close(replies_in)
        _serve(requests_in, replies_out)
    os.close(requests_in)
    os.close(replies_out)
    return Worker(pid, requests_out, replies_in)


def _serve(requests: int, replies: int) -> NoReturn:
    """The worker's life: warm up, then make the models of each env it is sent.

    It leaves with `os._exit`: the parent's exit hooks and buffered output are not its own.
    Any failure just ends it; the parent then makes the models itself and reports errors as
    a serial run would.
    """
    try:
        worker_signals()
        from multiprocessing.connection import Connection

        from generator.errors import EnvgenError
        from generator.modelgen import generate_env_models, warm_up

        inbox, outbox = Connection(requests, writable=False), Connection(replies, readable=False)
        warm_up()
        while True:
            try:
                job = inbox.recv()
            except EOFError:  # the parent is done
                break
            try:
                outbox.send(generate_env_models(*job))
            except EnvgenError as exc:  # the parent raises it, as its own call would have
                outbox.send(exc)
    finally:
        os._exit(0)


def wants_early_worker(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> bool:
    """Whether `envgen ARGV` is a `generate` or `check` that may use a warm worker.

    A guess from the words alone (the CLI has not parsed them yet): a wrong guess costs a
    fork that is stopped as soon as the run knows it is not needed.
    """
    jobs = environ.get(JOBS_VARIABLE, "").strip() or "0"
    if not hasattr(os, "fork") or jobs == "1" or not jobs.isdigit():
        return False
    if {"-h", "--help", "-V", "--version", "--no-cache"} & set(argv):
        return False
    return bool(_EARLY_COMMANDS & set(argv))


def start_early(argv: list[str]) -> None:
    """Fork the warm worker now if `envgen ARGV` may use it (the program is single-threaded
    here: nothing else has run yet); stopped at exit if the run never takes it."""
    global _early
    if wants_early_worker(argv, os.environ):
        _early = fork()
        import atexit

        atexit.register(_stop_early)


def take_early() -> Worker | None:
    """The worker `start_early` forked, handed over once (then the caller stops it)."""
    global _early
    worker, _early = _early, None
    return worker


def _stop_early() -> None:
    worker = take_early()
    if worker is not None:
        worker.stop()
