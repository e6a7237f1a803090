"""Report formats: `text` (coloured on a terminal), `json`, `markdown`, `github`."""

from __future__ import annotations

from collections.abc import Callable

from generator.diff.formats import github, jsonfmt, markdown, text
from generator.diff.model import Report

RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": text.render,
    "json": jsonfmt.render,
    "markdown": markdown.render,
    "github": github.render,
}
FORMATS = tuple(RENDERERS)


def render(report: Report, fmt: str) -> str:
    return RENDERERS[fmt](report)
