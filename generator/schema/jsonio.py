"""Reading JSON with precise error locations, and writing it canonically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.errors import SchemaError


def read_json(path: Path, display: str) -> Any:
    """Parse a JSON file; bad JSON raises SchemaError naming the file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError("file not found", file=display) from None
    except UnicodeDecodeError as exc:
        raise SchemaError(f"not UTF-8 text ({exc.reason})", file=display) from None
    except OSError as exc:
        raise SchemaError(f"cannot read file: {exc.strerror}", file=display) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SchemaError(
            f"invalid JSON: {exc.msg}", file=display, line=exc.lineno, column=exc.colno
        ) from None
    except ValueError as exc:
        raise SchemaError(f"invalid JSON: {exc}", file=display) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def canonical_json(value: Any) -> str:
    """One stable text for a JSON value: sorted keys, no insignificant whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pretty_json(value: Any) -> str:
    """Human-friendly stable JSON text, as written for schema files."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
