"""echo_env as if its steps could block: its sync methods on a thread of their own.

``examples.echo_env.server`` sets ``RUNS_ON_EVENT_LOOP`` (echo's steps are pure
computation), so the lean backend calls them on the event loop. ``bench_serve`` serves this
module beside it to show what the thread round trip (the default for an env that does not
set the flag, and what openenv's app always does) costs per step.

    python -m benchmarks.echo_threaded --port 8123 --backend lean
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples._serve import main
from examples.echo_env.logic import EchoLogic
from examples.echo_env.server import INFO
from generated.echo_env.server import EchoAction, EchoObservation, EchoState

if __name__ == "__main__":
    main(dataclasses.replace(INFO, blocks=True), EchoLogic, EchoAction, EchoObservation, EchoState)
