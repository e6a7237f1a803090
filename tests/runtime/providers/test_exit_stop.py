"""The interpreter-exit hook: registered providers are stopped, a forked child stops none."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.helpers import REPO

ROOT = REPO

_SCRIPT = textwrap.dedent(
    """
    import os, sys
    from envgen_runtime.providers import exit_stop

    class Noisy:
        def __init__(self, name):
            self.name = name
        def stop(self):
            print("stopped", self.name, "in", "child" if os.getpid() != PARENT else "parent",
                  flush=True)

    class Broken:
        def stop(self):
            raise RuntimeError("a failing stop must not keep the others from stopping")

    PARENT = os.getpid()
    kept, dropped = Noisy("kept"), Noisy("dropped")
    exit_stop.register(Broken())
    exit_stop.register(kept)
    exit_stop.register(dropped)
    exit_stop.unregister(dropped)
    pid = os.fork()
    if pid == 0:
        sys.exit(0)  # a normal exit runs the child's atexit hooks
    os.waitpid(pid, 0)
    """
)


def test_exit_stops_registered_providers_once_and_never_in_a_forked_child() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["stopped kept in parent"]
