"""Formatting generated Python with the pinned ruff, isolated from any user configuration.

One ruff process formats every file of a run: import sorting first, then the formatter. The
options are fixed here (not read from pyproject.toml files) so that output is the same bytes
on every machine; ruff's cache is off so nothing is left beside the output.
"""

from __future__ import annotations

import importlib
import subprocess
import tempfile
from pathlib import Path

from generator.errors import GenerationError

LINE_LENGTH = 100
_COMMON = [
    "--isolated",
    "--no-cache",
    "--target-version",
    "py311",
    "--line-length",
    str(LINE_LENGTH),
]


def _ruff() -> str:
    # ruff ships its binary inside the wheel; ask the package where it is.
    locator = importlib.import_module("ruff.__main__")
    return str(locator.find_ruff_bin())


def format_python(sources: dict[str, str]) -> dict[str, str]:
    """Return `sources` (relative path -> text) with every `.py` file formatted."""
    python = {path: text for path, text in sources.items() if path.endswith(".py")}
    if not python:
        return dict(sources)
    with tempfile.TemporaryDirectory(prefix="envgen-fmt-") as tmp:
        root = Path(tmp)
        for path, text in python.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        ruff = _ruff()
        _run(
            [ruff, "check", *_COMMON, "--select", "I,F401", "--fix", "--exit-zero", "--quiet", "."],
            root,
        )
        _run([ruff, "format", *_COMMON, "--quiet", "."], root)
        formatted = {path: (root / path).read_text(encoding="utf-8") for path in python}
    return {path: formatted.get(path, text) for path, text in sources.items()}


def _run(argv: list[str], cwd: Path) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GenerationError(
            f"ruff failed on generated code ({' '.join(argv[1:2])}): "
            f"{(proc.stderr or proc.stdout).strip()[:2000]}"
        )
