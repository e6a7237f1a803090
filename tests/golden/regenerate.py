"""Rewrite every golden case's expected output: `make golden` (python -m tests.golden.regenerate).

Each case under tests/golden/cases/<case>/ holds a `schemas/` tree; its expected output is
the `generated/` tree beside it, exactly as `envgen generate` writes it.
"""

from __future__ import annotations

from pathlib import Path

from generator.schema.loader import Layout
from generator.codegen.output import build, write

CASES = Path(__file__).resolve().parent / "cases"


def case_layouts() -> list[Layout]:
    return [Layout.at(case) for case in sorted(CASES.iterdir()) if (case / "schemas").is_dir()]


def main() -> None:
    for layout in case_layouts():
        changed = write(layout, build(layout))
        print(f"{layout.root.name}: {', '.join(changed) or 'unchanged'}")


if __name__ == "__main__":
    main()
