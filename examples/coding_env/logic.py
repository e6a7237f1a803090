"""Coding logic: each action's code runs in a fresh `python -c` with a timeout."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from typing import Any

from examples._logic import EpisodeError, EpisodeLogic, Outcome

DEFAULT_TIMEOUT_S = 5.0
MAX_TIMEOUT_S = 30.0
TIMEOUT_EXIT_CODE = -1


def run_code(code: str, timeout_s: float, hash_seed: int) -> dict[str, Any]:
    """Run `code` in a child interpreter; the seed fixes its hash randomisation."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONHASHSEED": str(hash_seed % 4294967296),
        "PYTHONIOENCODING": "utf-8",
    }
    try:
        # The program goes in on stdin, not argv: an argument cannot hold a NUL byte
        # (ValueError in the server), while Python reports one in a program as an error.
        done = subprocess.run(
            [sys.executable, "-"],
            input=code,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return {
            "stdout": _text(exc.stdout),
            "stderr": _text(exc.stderr),
            "exit_code": TIMEOUT_EXIT_CODE,
            "timed_out": True,
        }
    return {
        "stdout": done.stdout,
        "stderr": done.stderr,
        "exit_code": done.returncode,
        "timed_out": False,
    }


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


class CodingLogic(EpisodeLogic):
    """Reward 1.0 when the snippet exits 0, else 0.0; episodes never end on their own."""

    def _reset(self, seed: int) -> Outcome:
        self._seed = seed
        self.last_exit_code: int | None = None
        empty = {"stdout": "", "stderr": "", "exit_code": 0, "timed_out": False}
        return Outcome({"result": empty})

    def _step(self, action: dict[str, Any]) -> Outcome:
        code = action.get("code")
        timeout_s = action.get("timeout_s", DEFAULT_TIMEOUT_S)
        if not isinstance(code, str):
            raise EpisodeError("code must be a string")
        if (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, int | float)
            or not math.isfinite(timeout_s)
            or not 0 < timeout_s <= MAX_TIMEOUT_S
        ):
            raise EpisodeError(f"timeout_s must be in (0, {MAX_TIMEOUT_S}], not {timeout_s!r}")
        result = run_code(code, float(timeout_s), self._seed)
        self.last_exit_code = result["exit_code"]
        return Outcome({"result": result}, reward=1.0 if result["exit_code"] == 0 else 0.0)

    def _state(self) -> dict[str, Any]:
        return {"last_exit_code": self.last_exit_code}
