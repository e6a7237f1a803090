"""Rewrite benchmarks/RESULTS.md from the JSON each benchmark wrote (`make bench`)."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGES = ["datamodel-code-generator", "ruff", "pydantic", "requests", "websockets", "openenv"]


def _machine() -> list[str]:
    versions = []
    for dist in PACKAGES:
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    return [
        f"- Date: {dt.date.today().isoformat()}",
        f"- Machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}",
        f"- Python: {sys.version.split()[0]}",
        f"- Packages: {', '.join(versions)}",
    ]


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> list[str]:
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(str(row.get(key, "")) for key, _ in columns) + " |")
    return lines


def codegen_section(data: dict[str, Any]) -> list[str]:
    head = data["headline"]
    targets = head["targets"]
    verdicts = [
        ("cold generate, 100 envs", head["cold_s"], f"<= {targets['cold_100_s']} s"),
        (
            "regenerate after one env changed",
            head["changed_one_s"],
            f"<= {targets['changed_one_s']} s",
        ),
        ("no-op check, 100 envs", head["noop_check_s"], f"<= {targets['noop_check_100_s']} s"),
        (
            "speedup vs datamodel-codegen loop",
            head["speedup_vs_baseline"],
            f">= {targets['speedup_100']}x",
        ),
    ]
    lines = [
        "## Code generation (`benchmarks/bench_codegen.py`)",
        "",
        "Wall time of each command in a fresh process; baseline = the "
        "`datamodel-codegen` command once per schema file.",
        "",
    ]
    lines += _table(
        data["rows"],
        [
            ("envs", "envs"),
            ("cold_generate_s", "cold generate (s)"),
            ("changed_one_s", "one env changed (s)"),
            ("noop_check_s", "no-op check (s)"),
            ("full_check_s", "check --no-cache (s)"),
            ("baseline_s", "baseline (s)"),
            ("speedup", "speedup (x)"),
        ],
    )
    lines += ["", f"Targets at {head['largest_envs']} envs:", ""]
    lines += [f"- {name}: {value} (target {target})" for name, value, target in verdicts]
    return lines


def main() -> int:
    sections: list[str] = ["# Benchmark results", "", "Written by `make bench`; do not edit.", ""]
    sections += _machine()
    for name, render in (("codegen", codegen_section),):
        path = HERE / "results" / f"{name}.json"
        if path.is_file():
            sections += ["", *render(json.loads(path.read_text()))]
    step = HERE / "results" / "step.md"
    if step.is_file():
        sections += ["", step.read_text().rstrip()]
    (HERE / "RESULTS.md").write_text("\n".join(sections) + "\n")
    print(f"wrote {HERE / 'RESULTS.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
