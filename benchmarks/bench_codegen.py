"""Code-generation speed: envgen against the naive datamodel-codegen loop.

For 1, 10 and 100 synthetic envs (see synthetic.py), in one run: cold `envgen generate`
(fresh tree, no cache), regeneration after one env changed (median of five edits), a no-op
`envgen check`, and the baseline a user would otherwise script: the `datamodel-codegen`
command once per schema file. Every figure is the wall time of the command as a user runs
it (a fresh process). Targets on a 2-core machine: 100 envs cold <= 10 s, one changed env
<= 1 s, no-op check of 100 envs <= 1 s, >= 20x faster than the baseline at 100 envs.

    python -m benchmarks.bench_codegen [--quick | --sizes N [N ...]] [--out results.json]
    python benchmarks/bench_codegen.py [--quick | --sizes N [N ...]] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/bench_codegen.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import touch_env, write_envs

BIN = Path(sys.executable).parent
CHANGED_RUNS = 5
"""Regenerations after one env changed, each a fresh edit; the median is reported."""
TARGETS = {"cold_100_s": 10.0, "changed_one_s": 1.0, "noop_check_100_s": 1.0, "speedup_100": 20.0}


def _timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def _envgen(root: Path, *args: str) -> float:
    return _timed([sys.executable, "-m", "generator", "--root", str(root), *args], root)


def _baseline(root: Path, names: list[str]) -> float:
    """The `datamodel-codegen` command once per schema file, as a shell loop would run it."""
    out = root / "baseline"
    out.mkdir(exist_ok=True)
    total = 0.0
    for name in names:
        for role in ("action", "observation", "state"):
            total += _timed(
                [
                    str(BIN / "datamodel-codegen"),
                    "--input",
                    str(root / "schemas" / name / f"{role}.schema.json"),
                    "--input-file-type",
                    "jsonschema",
                    "--output-model-type",
                    "pydantic_v2.BaseModel",
                    "--disable-timestamp",
                    "--allow-remote-refs",
                    "--output",
                    str(out / f"{name}_{role}"),  # a folder: cross-file refs need one
                ],
                root,
            )
    return total


def run_size(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="envgen-bench-") as tmp:
        root = Path(tmp)
        names = write_envs(root, count)
        cold = _envgen(root, "generate")
        changed_runs = []
        for run in range(CHANGED_RUNS):  # a different env each time where there are enough
            touch_env(root, names[(count // 2 + run) % count], field=f"added_{run}")
            changed_runs.append(_envgen(root, "generate"))
        changed = statistics.median(changed_runs)
        noop = _envgen(root, "check")
        full_check = _envgen(root, "check", "--no-cache")
        baseline = _baseline(root, names)
    return {
        "envs": count,
        "cold_generate_s": round(cold, 3),
        "changed_one_s": round(changed, 3),
        "changed_one_runs_s": [round(t, 3) for t in changed_runs],
        "noop_check_s": round(noop, 3),
        "full_check_s": round(full_check, 3),
        "baseline_s": round(baseline, 3),
        "speedup": round(baseline / cold, 1),
    }


def _size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"an env count must be a whole number >= 1, not {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sizes_given = parser.add_mutually_exclusive_group()
    sizes_given.add_argument("--quick", action="store_true", help="1 and 10 envs only (< 60 s)")
    sizes_given.add_argument(
        "--sizes",
        type=_size,
        nargs="+",
        metavar="N",
        help="these env counts only (default: 1 10 100); the last is the headline",
    )
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([1, 10] if args.quick else [1, 10, 100])
    rows = []
    header = f"{'envs':>5} {'cold':>8} {'1 changed':>10} {'no-op check':>12} {'full check':>11} "
    print(header + f"{'baseline':>10} {'speedup':>8}")
    for count in sizes:
        row = run_size(count)
        rows.append(row)
        print(
            f"{row['envs']:>5} {row['cold_generate_s']:>7.2f}s {row['changed_one_s']:>9.2f}s "
            f"{row['noop_check_s']:>11.2f}s {row['full_check_s']:>10.2f}s "
            f"{row['baseline_s']:>9.2f}s {row['speedup']:>7.1f}x",
            flush=True,
        )
    largest = rows[-1]
    headline = {
        "benchmark": "codegen",
        "largest_envs": largest["envs"],
        "cold_s": largest["cold_generate_s"],
        "changed_one_s": largest["changed_one_s"],
        "noop_check_s": largest["noop_check_s"],
        "speedup_vs_baseline": largest["speedup"],
        "targets": TARGETS,
    }
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "headline": headline}, indent=2) + "\n")
    print(json.dumps(headline))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
