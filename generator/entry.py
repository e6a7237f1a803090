"""The `envgen` program (console script and `python -m generator`).

Kept to what the interpreter has loaded at start-up: a `generate` or `check` forks its warm
model worker (`warm_worker.start_early`) before the CLI and its libraries are imported, so
the worker's warm-up overlaps that import too.
"""

from __future__ import annotations

import atexit
import gc
import sys

from generator.codegen import warm_worker


def run() -> None:
    """`envgen`: the early worker, then the CLI's `main`, then a quick exit.

    The interpreter's last garbage collection at exit walks every object a run made (about
    0.1 s after a `generate`, a tenth of the whole run); envgen leaves nothing that needs it
    (files are closed by `with`, temporary folders by their own exit hook), so the objects
    are frozen out of it once the command is done.
    """
    warm_worker.start_early(sys.argv[1:])
    atexit.register(gc.freeze)
    from generator.cli import main

    main()
