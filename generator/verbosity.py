"""How much a command prints: one scale for the command line and the reports it renders.

- ``QUIET``: only the command's result (names, reports, annotations); errors still print.
- ``NORMAL``: the result plus one status line per env or action.
- ``VERBOSE``: also the detail behind each line (files written, envs checked, URLs read).

Its own module so that a report renderer (``diff.formats.text``) can take a level without
importing the command line, which sits above it.
"""

from __future__ import annotations

from enum import IntEnum


class Verbosity(IntEnum):
    QUIET = 0
    NORMAL = 1
    VERBOSE = 2
