"""Run a server command and end it when its owner process dies, however the owner died.

``python -m envgen_runtime.providers.orphan_guard OWNER_PID -- ARGV...`` starts ARGV as a child and
polls OWNER_PID. A Ray actor that starts a server is killed with SIGKILL when its driver
dies or its node is removed: no cleanup code of its own runs then, so this small parent
watches it instead and kills its own process group (itself and the server). Ray also kills
a dead worker's direct children (this guard) with SIGKILL, so on Linux the server is started
with a parent-death signal: it dies with the guard, however the guard dies. When the server
exits first, the guard exits with the same status, so a start failure reads as the server's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

POLL_S = 0.25
_PR_SET_PDEATHSIG = 1


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (also one owned by another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    return True


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL me when my parent (the guard) dies (Linux)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def main(argv: Sequence[str] | None = None) -> int:
    """Supervise the command; return its exit status (never returns once the owner died)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "--" or not args[0].isdigit():
        print(
            "usage: python -m envgen_runtime.providers.orphan_guard OWNER_PID -- ARGV...",
            file=sys.stderr,
        )
        return 2
    owner = int(args[0])
    linux = sys.platform.startswith("linux")
    child = subprocess.Popen(args[2:], preexec_fn=_die_with_parent if linux else None)
    while True:
        code = child.poll()
        if code is not None:
            return code if code >= 0 else 128 - code
        if not pid_alive(owner):
            # The provider started the guard as a session (and group) leader: the group is
            # exactly this guard and the server with its children.
            os.killpg(os.getpgrp(), signal.SIGKILL)
        time.sleep(POLL_S)


if __name__ == "__main__":
    sys.exit(main())
