"""The warm model worker: a forked process that imports and warms up the model generator
while its parent does the rest of a run, then runs the model calls it is sent.

When a few envs changed, the worker's warm-up (datamodel-code-generator's import and first
call, ~0.6 s) is most of the run, so every millisecond it starts earlier comes off the run:
the `envgen` program forks it first thing (`start_early`), before the CLI and its libraries
are imported, and `parallel.WarmRenderer` adopts it (or forks one itself when called from
Python). So this module imports only what the interpreter has loaded at start-up, and the
worker only the model generator and `model_call`: its parent prepares each call.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from generator.codegen.model_call import ModelCall

JOBS_VARIABLE = "ENVGEN_JOBS"
"""Worker processes to use (1: render in this process); unset or 0: one per core."""


def jobs_setting(environ: Mapping[str, str]) -> int | None:
    """$ENVGEN_JOBS as a number (unset: 0), or None when it is not a whole number."""
    text = environ.get(JOBS_VARIABLE, "").strip() or "0"
    return int(text) if text.isdigit() else None


_EARLY_COMMANDS = frozenset({"generate", "check"})
_early: Worker | None = None


def worker_signals() -> None:
    """A worker ignores Ctrl-C (the parent gets it too and stops it: no traceback from each)
    and dies on SIGTERM, whatever handler it inherited from the calling program."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Worker:
    """A forked worker: its PID and this process's ends of its two pipes."""

    def __init__(self, pid: int, requests: int, replies: int) -> None:
        self.pid = pid
        self._fds = (requests, replies)
        self._conns: tuple[Connection, Connection] | None = None

    def send(self, *job: Any) -> None:
        """Hand `job` over; OSError when the worker is gone."""
        self._connections()[0].send(job)

    def receive(self) -> Any:
        """The reply to the oldest job sent; EOFError or OSError when the worker is gone."""
        return self._connections()[1].recv()

    def call(self, *job: Any) -> Any:
        """`send` then `receive`."""
        self.send(*job)
        return self.receive()

    def _connections(self) -> tuple[Connection, Connection]:
        if self._conns is None:
            from multiprocessing.connection import Connection

            requests, replies = self._fds
            self._conns = Connection(requests, readable=False), Connection(replies, writable=False)
        return self._conns

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


Serve = Callable[["Connection", "Connection"], None]
"""A worker's life: what it does with the jobs from its inbox, replying to its outbox."""


def fork(serve: Serve | None = None, inherited: tuple[int, ...] = ()) -> Worker:
    """Start a worker that runs `serve` (default: the warm model worker's `_make_models`).

    The caller has checked that forking is safe here; `inherited` are pipe ends of its own
    that the child must not hold (else its caller would not see EOF when it dies). The child
    leaves with `os._exit`: the parent's exit hooks and buffered output are not its own. Any
    failure just ends it; the parent then does the work itself and reports errors as a
    serial run would.
    """
    requests_in, requests_out = os.pipe()
    replies_in, replies_out = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            worker_signals()
            for fd in (requests_out, replies_in, *inherited):
                os.close(fd)
            from multiprocessing.connection import Connection

            inbox = Connection(requests_in, writable=False)
            (serve or _make_models)(inbox, Connection(replies_out, readable=False))
        finally:
            os._exit(0)
    os.close(requests_in)
    os.close(replies_out)
    return Worker(pid, requests_out, replies_in)


def _make_models(inbox: Connection, outbox: Connection) -> None:
    """Warm up, then run the two model calls (`model_call.ModelCall`) of each env sent.

    Once warm, the worker forks a twin (a copy as warm as itself) that runs each env's
    server call while the worker runs its client call: the two model-generator calls of an
    env run on two cores. If the twin fails, the worker runs both.
    """
    from generator.codegen.datamodel import warm_up

    warm_up()
    try:
        twin: Worker | None = fork(_run_calls, (inbox.fileno(), outbox.fileno()))
    except OSError:
        twin = None
    _serve_jobs(inbox, outbox, lambda *job: _env_models(twin, *job))
    if twin is not None:
        twin.stop()


def _env_models(twin: Worker | None, client: ModelCall, server: ModelCall) -> tuple[str, str]:
    """Both calls' sources, the server call run by `twin` meanwhile (here if the twin is
    gone); errors as running them in turn raises them (the client call's first)."""
    import contextlib

    from generator.errors import EnvgenError

    made: str | EnvgenError | None = None
    asked: Worker | None = None
    if twin is not None:
        with contextlib.suppress(OSError):
            twin.send(server)
            asked = twin
    try:
        source = client.run()
    finally:
        if asked is not None:  # read even when the client call failed: one reply per job
            with contextlib.suppress(EOFError, OSError):
                made = asked.receive()
    if isinstance(made, EnvgenError):
        raise made
    return source, server.run() if made is None else made


def _run_calls(inbox: Connection, outbox: Connection) -> None:
    from generator.codegen.model_call import ModelCall

    _serve_jobs(inbox, outbox, ModelCall.run)


def _serve_jobs(inbox: Connection, outbox: Connection, make: Callable[..., Any]) -> None:
    """Reply to each job with `make(*job)`, or with the envgen error it raised (the caller
    raises it, as its own call would have), until the caller is done."""
    from generator.errors import EnvgenError

    while True:
        try:
            job = inbox.recv()
        except EOFError:  # the caller is done
            return
        try:
            outbox.send(make(*job))
        except EnvgenError as exc:
            outbox.send(exc)


def wants_early_worker(argv: list[str], environ: Mapping[str, str]) -> bool:
    """Whether `envgen ARGV` is a `generate` or `check` that may use a warm worker.

    A guess from the words alone (the CLI has not parsed them yet): a wrong guess costs a
    fork that is stopped as soon as the run knows it is not needed.
    """
    if not hasattr(os, "fork") or jobs_setting(environ) in (1, None):
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
