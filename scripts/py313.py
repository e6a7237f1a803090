#!/usr/bin/env python3
"""Run envgen's Python 3.13 checks in a cached Debian 13 chroot (``make test-py313``).

Run with the project's 3.11 venv, as root (chroot and mount need it)::

    .venv/bin/python scripts/py313.py [--summary-file PATH]

Under Python 3.13, in the chroot (see tests/py313/chroot.py for how it is built and cached):

1. ``pytest tests/runtime`` (but the pool's): the runtime's tests, their servers included,
   on 3.13.
2. The runtime's and every generated env's wheels, built there and installed in a fresh
   venv holding nothing else; then a seeded episode per env, sync and async, over WebSocket
   and stateful HTTP, against the example servers run on the host by the 3.11 venv and
   reached on 127.0.0.1 (tests/py313/episodes.py).
3. ``envgen generate`` into a scratch copy gives generated/'s bytes, and ``envgen check``
   passes.

The venv with the third-party packages is kept in the chroot while the dependency lists in
the pyproject files stay the same; the checkout's tracked files are copied in afresh each
run. Every server is stopped and every mount undone at the end, also on failure or signal.
The last line is a pytest-style summary of all three parts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.examples import serving  # noqa: E402
from tests.py313 import chroot  # noqa: E402

WORK = "/work/envgen"  # the checkout's copy inside the chroot
SCRATCH = "/work/scratch"  # where `envgen generate` writes afresh
WHEELS = "/work/wheels"
RUNTIME_TESTS_SKIPPED = ("--ignore=tests/runtime/pool",)
"""The pool's tests need a Docker engine and a Ray cluster: the 3.11 suite runs them."""
DEV = "/opt/envgen-dev"  # runtime, generator and test tools (kept between runs)
TRAINER = "/opt/envgen-trainer"  # only the wheels and their dependencies (made each run)
STAMP = ".envgen-deps"
# openenv 0.10 servers import gradio: ten starting at once on a busy 2-core machine are slow
# (one took over 180 s at a load average of 19).
SERVER_START_S = 300.0


def dev_requirements() -> list[str]:
    """Every third-party requirement of both distributions, their extras and build backends."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = tomllib.loads((ROOT / "runtime/pyproject.toml").read_text())
    found: set[str] = set()
    for data in (root, runtime):
        found.update(data["build-system"]["requires"])
        found.update(data["project"].get("dependencies", []))
        for extra in data["project"].get("optional-dependencies", {}).values():
            found.update(extra)
    return sorted(r for r in found if not re.match(r"envgen-runtime\b", r))


def ensure_dev_venv(root: Path) -> None:
    """The venv with every third-party package; topped up when the requirements change."""
    requirements = dev_requirements()
    digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()
    venv = root / DEV.lstrip("/")
    stamp = venv / STAMP
    if stamp.is_file() and stamp.read_text() == digest:
        return
    chroot.log(f"installing {len(requirements)} requirements in {DEV} (kept for next runs)")
    if not (venv / "bin/pip").is_file():
        chroot.check(root, ["python3", "-m", "venv", "--clear", DEV])
    chroot.check(root, [f"{DEV}/bin/pip", "install", "-q", *requirements])
    stamp.write_text(digest)


def copy_checkout(root: Path) -> None:
    """The checkout's files as they are now, tracked or not ignored (no .venv, caches) at WORK."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    target = root / WORK.lstrip("/")
    if target.parent.exists():
        shutil.rmtree(target.parent)
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # tracked but deleted in the working tree: skip
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def install_checkout(root: Path) -> None:
    """Runtime and generator from the copy, as real (non-editable) installs."""
    pip = [f"{DEV}/bin/pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    chroot.check(root, [*pip, "--force-reinstall", "./runtime", "."], cwd=WORK)
    chroot.check(root, [f"{DEV}/bin/pip", "check"])


def env_names() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "generated").glob("*/pyproject.toml"))


def install_wheels(root: Path) -> None:
    """Wheels of the runtime and every generated env, in a fresh venv of their own."""
    envs = [f"generated/{env}" for env in env_names()]
    wheel = [f"{DEV}/bin/pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", WHEELS]
    chroot.check(root, [*wheel, "./runtime", *envs], cwd=WORK)
    built = sorted(p.name for p in (root / WHEELS.lstrip("/")).glob("*.whl"))
    runtime = next(name for name in built if name.startswith("envgen_runtime-"))
    clients = [f"{WHEELS}/{name}" for name in built if name != runtime]
    if len(clients) != len(envs):
        raise RuntimeError(f"expected {len(envs)} client wheels, built {built}")
    chroot.check(root, ["python3", "-m", "venv", "--clear", TRAINER])
    pip = [f"{TRAINER}/bin/pip", "install", "-q"]
    chroot.check(root, [*pip, f"{WHEELS}/{runtime}[async]", *clients])


def play_episodes(root: Path, fleet: dict[tuple[str, str], serving.RunningServer]) -> str:
    """Wait for the host's servers, play the episodes in the chroot; their summary line."""
    urls: dict[str, dict[str, str]] = {}
    for (env, protocol), server in fleet.items():
        server.wait_ready(SERVER_START_S)
        urls.setdefault(env, {})[protocol] = server.base_url
    script = f"{WORK}/tests/py313/episodes.py"
    code, last = chroot.run(root, [f"{TRAINER}/bin/python", script, json.dumps(urls)])
    return _summary(code, last, "episodes")


def generate_and_check(root: Path) -> str:
    """`envgen generate` afresh in a scratch copy gives generated/ byte for byte; check passes."""
    work, scratch = root / WORK.lstrip("/"), root / SCRATCH.lstrip("/")
    shutil.copytree(work, scratch)
    for env in env_names():
        shutil.rmtree(scratch / "generated" / env)
    envgen = f"{DEV}/bin/envgen"
    chroot.check(root, [envgen, "--root", SCRATCH, "-q", "generate", "--no-cache"])
    differ = _tree_differences(work / "generated", scratch / "generated")
    if differ:
        raise RuntimeError("generate under 3.13 gave other bytes: " + ", ".join(differ))
    chroot.check(root, [envgen, "--root", WORK, "-q", "check", "--no-cache"])
    return f"generate+check: 2 passed (same bytes for {len(env_names())} envs; check clean)"


def _tree_differences(expected: Path, actual: Path) -> list[str]:
    def files(top: Path) -> dict[str, bytes]:
        return {
            str(p.relative_to(top)): p.read_bytes()
            for p in top.rglob("*")
            if p.is_file() and not any(_skipped(part) for part in p.relative_to(top).parts)
        }

    want, got = files(expected), files(actual)
    return sorted(name for name in want.keys() | got.keys() if want.get(name) != got.get(name))


def _skipped(part: str) -> bool:
    """Bytecode and envgen's own cache: not output (git ignores them too)."""
    return part == "__pycache__" or part.startswith(".envgen")


def _summary(code: int, last: list[str], what: str) -> str:
    line = last[-1].strip("= ") if last else "no output"
    return line if code == 0 else f"FAILED {what} (exit {code}): {line}"


COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")


def combined_line(parts: list[str], elapsed: float) -> str:
    """One pytest-style line adding up the parts; a part that failed without counts adds one."""
    totals: dict[str, int] = {}
    for part in parts:
        for number, word in COUNT.findall(part.partition("\n")[0]):
            key = "errors" if word.startswith("error") else word
            totals[key] = totals.get(key, 0) + int(number)
    uncounted = [
        p for p in parts if p.startswith("FAILED") and not re.search(r"\d+ (failed|error)", p)
    ]
    totals["failed"] = totals.get("failed", 0) + len(uncounted)
    order = ("failed", "errors", "passed", "skipped", "xfailed", "xpassed", "deselected")
    counts = ", ".join(f"{totals[k]} {k}" for k in order if totals.get(k))
    return f"==== {counts} in {elapsed:.2f}s (test-py313: Python 3.13 in a chroot) ===="


def _exit_on_signal(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through every finally: servers, mounts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary-file", type=Path, help="also write the last line here")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("py313: needs root (debootstrap, chroot and mount); run as root", file=sys.stderr)
        return 2
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_on_signal)
    started = time.monotonic()
    with chroot.locked():
        parts = run_all(started)
    for part in parts:
        print(f"py313: {part}")
    line = combined_line(parts, time.monotonic() - started)
    print(line, flush=True)
    if args.summary_file:
        args.summary_file.write_text(line + "\n")
    return 1 if any(part.startswith("FAILED") for part in parts) else 0


def run_all(started: float) -> list[str]:
    """The three parts, each reported as one line; setup failures raise."""
    root = chroot.ensure_chroot()
    chroot.log(f"chroot ready at {root} ({time.monotonic() - started:.1f}s)")
    chroot.copy_host_config(root)
    parts: list[str] = []
    with chroot.mounted(root):
        ensure_dev_venv(root)
        copy_checkout(root)
        install_checkout(root)
        chroot.log(f"installed ({time.monotonic() - started:.1f}s)")
        pairs = [(env, protocol) for env in env_names() for protocol in serving.PROTOCOLS]
        fleet: dict[tuple[str, str], serving.RunningServer] = {}
        try:
            for pair in pairs:  # started now, so they come up while the wheels install
                fleet[pair] = serving.start(*pair)
            install_wheels(root)
            chroot.log(f"wheels installed ({time.monotonic() - started:.1f}s)")
            parts.append(play_episodes(root, fleet))
        except Exception as exc:
            parts.append(f"FAILED episodes: {exc}")
        finally:
            for server in fleet.values():
                server.stop()
        chroot.log(f"episodes done ({time.monotonic() - started:.1f}s)")
        try:
            parts.append(generate_and_check(root))
        except Exception as exc:
            parts.append(f"FAILED generate+check: {exc}")
        chroot.log(f"generate+check done ({time.monotonic() - started:.1f}s)")
        python = f"{DEV}/bin/python"
        pytest = [python, "-m", "pytest", "tests/runtime", *RUNTIME_TESTS_SKIPPED, "-q"]
        pytest += ["-p", "no:cacheprovider"]
        code, last = chroot.run(root, pytest, cwd=WORK)
        parts.append(_summary(code, last, "tests/runtime"))
    return parts


if __name__ == "__main__":
    sys.exit(main())
