"""Progress lines of `envgen image`, on standard error so standard output stays parseable."""

from __future__ import annotations

import sys


def log(message: str) -> None:
    print(f"envgen image: {message}", file=sys.stderr, flush=True)
