"""Formatting generated Python with the pinned ruff, isolated from any user configuration.

One ruff process pair formats every file of a run: import sorting and unused-import removal
first, then the formatter. The settings are fixed here (no pyproject.toml is read) so that
output is the same bytes on every machine; ruff's cache is off so nothing is left behind.
"""

from __future__ import annotations

import importlib
import subprocess
import tempfile
from pathlib import Path

from generator.errors import GenerationError

LINE_LENGTH = 100
# The settings generated code is formatted and linted with, wherever it is run: `generator`
# is a third-party package to a generated client, even inside envgen's own repository.
RUFF_SETTINGS = [
    "--isolated",
    "--no-cache",
    "--target-version",
    "py311",
    "--line-length",
    str(LINE_LENGTH),
    "--config",
    "lint.isort.known-third-party = ['envgen_runtime']",
]
# Lint rules generated code passes. E501 is left to the formatter: schema descriptions
# become docstrings and are never re-wrapped.
LINT_RULES = ["--select", "E,F,W,I,B,UP,SIM", "--ignore", "E501"]
_FIX_IMPORTS = ["--select", "I,F401", "--fix", "--exit-zero", "--quiet"]


def ruff_binary() -> str:
    """The ruff executable shipped in the pinned ruff wheel."""
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
        ruff = ruff_binary()
        _run([ruff, "check", *RUFF_SETTINGS, *_FIX_IMPORTS, "."], root)
        _run([ruff, "format", *RUFF_SETTINGS, "--quiet", "."], root)
        formatted = {path: (root / path).read_text(encoding="utf-8") for path in python}
    return {path: formatted.get(path, text) for path, text in sources.items()}


def _run(argv: list[str], cwd: Path) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        output = (proc.stderr or proc.stdout).strip()[:2000]
        raise GenerationError(f"ruff {argv[1]} failed on generated code: {output}")
