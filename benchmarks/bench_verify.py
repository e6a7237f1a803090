"""`envgen verify --local` over every example env, as CI runs it: wall time and findings.

Each env is verified with default settings (seed 0, every boundary action, then 50 examples
of up to 8 steps, 45 s budget, negative cases on) in a fresh `envgen` process that starts the
env's server itself and stops it. Target: each finishes within 60 s on this 2-core machine.

    python -m benchmarks.bench_verify [--quick] [--out results.json]
    python benchmarks/bench_verify.py [--quick] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/bench_verify.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPO = Path(__file__).resolve().parent.parent
ENVS = ("echo_env", "coding_env", "grid_env", "quiz_env", "reacher_env")
TARGET_S = 60.0


def verify_one(env: str, extra: list[str]) -> dict[str, Any]:
    argv = [sys.executable, "-m", "generator", "verify", env, "--local", "--format", "json"]
    started = time.perf_counter()
    proc = subprocess.run(argv + extra, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"envgen verify {env} failed (exit {proc.returncode}):\n{proc.stderr}")
    report = json.loads(proc.stdout)
    return {
        "env": env,
        "seconds": round(elapsed, 2),
        "ok": report["ok"],
        "episodes": report["episodes"],
        "boundaries": report.get("boundaries", 0),
        "steps": report["steps"],
        "negative_cases": report["negative_cases"],
        "violations": [v["check"] for v in report["violations"]],
        "within_target": elapsed <= TARGET_S,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="echo_env only, 10 examples")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    envs = ENVS[:1] if args.quick else ENVS
    extra = ["--max-examples", "10"] if args.quick else []
    rows = [verify_one(env, extra) for env in envs]
    for row in rows:
        print(
            f"{row['env']:12} {row['seconds']:6.2f} s  {row['episodes']} episodes "
            f"({row['boundaries']} at boundaries), "
            f"{row['steps']} steps, {row['negative_cases']} negative cases, "
            f"{'conforms' if row['ok'] else ', '.join(row['violations'])}"
        )
    result = {
        "target_s": TARGET_S,
        "rows": rows,
        "all_within_target": all(r["within_target"] for r in rows),
    }
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(
        json.dumps(
            {
                "verify_max_s": max(r["seconds"] for r in rows),
                **{k: result[k] for k in ("target_s", "all_within_target")},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
