"""Two revisions of the tree, benchmarked in turn: is a change within the noise?

For a change that must not move a figure (a refactor), run each benchmark's quick form
against a git revision and against the working tree, alternating (A B A B ...) so that the
machine's drift falls on both, and compare the medians of each headline figure as a ratio.
The revision is checked out into a temporary worktree and imported from there
(``PYTHONPATH``), with this checkout's venv, so only the project's code differs.

    python -m benchmarks.ab --base REV [--bench step codegen] [--rounds 3] [--out ab.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/ab.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPO = Path(__file__).resolve().parent.parent
QUICK = {
    "step": ["--quick"],
    "codegen": ["--sizes", "10"],
}
"""Each benchmark's short form: one run of it must fit several rounds into minutes."""
FIGURES = {
    "step": (
        "http_cpu_per_step_us",
        "http_latency_median_us",
        "http_first_observation_ms",
        "websocket_cpu_per_step_us",
        "websocket_latency_median_us",
        "websocket_first_observation_ms",
        "import_ms",
    ),
    "codegen": ("cold_s", "changed_one_s", "noop_check_s"),
}
"""The headline figures compared: costs, so a ratio above 1 means the working tree is slower."""


def run_once(bench: str, tree: Path, out: Path) -> dict[str, Any]:
    """One quick run of ``bench`` with ``tree``'s code; its headline figures."""
    env = {**os.environ, "PYTHONPATH": f"{tree / 'runtime'}{os.pathsep}{tree}"}
    argv = [sys.executable, "-m", f"benchmarks.bench_{bench}", *QUICK[bench], "--out", str(out)]
    subprocess.run(argv, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    headline: dict[str, Any] = json.loads(out.read_text())["headline"]
    return {name: headline[name] for name in FIGURES[bench] if name in headline}


def compare(base: list[dict[str, Any]], head: list[dict[str, Any]]) -> dict[str, Any]:
    """Per figure: each side's median over its rounds and their ratio (head / base)."""
    rows: dict[str, Any] = {}
    for name in base[0]:
        a = statistics.median(run[name] for run in base)
        b = statistics.median(run[name] for run in head)
        rows[name] = {"base": a, "head": b, "ratio": round(b / a, 3) if a else None}
    return rows


def report(base_rev: str, results: dict[str, dict[str, Any]], rounds: int) -> str:
    lines = [f"A/B: {base_rev} (base) against the working tree (head), {rounds} rounds each"]
    for bench, rows in results.items():
        lines.append(f"{bench}:")
        for name, row in rows.items():
            lines.append(f"  {name:32} {row['base']:>10} {row['head']:>10}  x{row['ratio']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="git revision to compare against")
    parser.add_argument("--bench", nargs="+", choices=sorted(QUICK), default=sorted(QUICK))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="also write the comparison as JSON here")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="envgen-ab-") as tmp:
        worktree = Path(tmp) / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(worktree), args.base],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        try:
            results = {}
            for bench in args.bench:
                runs: dict[str, list[dict[str, Any]]] = {"base": [], "head": []}
                for index in range(args.rounds):
                    order = ("base", "head") if index % 2 == 0 else ("head", "base")
                    for side in order:
                        tree = worktree if side == "base" else REPO
                        out = Path(tmp) / f"{bench}-{side}-{index}.json"
                        runs[side].append(run_once(bench, tree, out))
                results[bench] = compare(runs["base"], runs["head"])
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, check=True
            )
    print(report(args.base, results, args.rounds))
    if args.out:
        load = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        document = {
            "benchmark": "ab",
            "base": args.base,
            "head": head,
            "rounds": args.rounds,
            "load_average": load,
            **results,
        }
        args.out.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
