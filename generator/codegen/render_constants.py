"""What a run needs to know about rendering without loading the renderer.

The cache's fingerprint needs the templates folder on every run, and `generated/__init__.py`
is written on every run, also when the cache answers for every env; importing
`generator.codegen.render` for them would load jinja2 and the runtime.
"""

from __future__ import annotations

from pathlib import Path


def _templates_dir() -> Path:
    """templates/ beside generator/ in a checkout; the copy shipped in the wheel otherwise."""
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent / "templates"
    if (checkout / "client.py.jinja").is_file():
        return checkout
    return package / "templates"


TEMPLATES_DIR = _templates_dir()
PACKAGE_INIT = '"""Generated environment clients: one package per environment, made by envgen."""\n'
