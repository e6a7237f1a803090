"""A user's code that calls a generated tool method wrongly is a mypy error, not a runtime one.

The snippets import the committed calc_env client and are checked with the project's mypy
configuration (strict, the pydantic plugin), as a trainer's own code would be.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

_HEAD = (
    "from generated.calc_env import CalcEnv, AsyncCalcEnv\n\nenv = CalcEnv('http://127.0.0.1:1')\n"
)


def _mypy(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(_HEAD + body, encoding="utf-8")
    argv = [
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--config-file",
        str(REPO / "pyproject.toml"),
        "--cache-dir",
        str(REPO / ".mypy_cache"),
        str(snippet),
    ]
    environ = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run(argv, cwd=REPO, env=environ, capture_output=True, text=True, check=False)


def test_wrong_argument_type_and_unknown_argument_are_mypy_errors(tmp_path: Path) -> None:
    proc = _mypy(
        tmp_path,
        "env.tools.add(a='two')\n"
        "env.tools.stats(values=[1.0], limit=3)\n"
        "env.tools.divide(numerator=1.0)\n"
        "total: str = env.tools.add(a=1.0)\n",
    )
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert 'Argument "a" to "add" of "CalcTools" has incompatible type "str"' in out
    assert 'Unexpected keyword argument "limit" for "stats" of "CalcTools"' in out
    assert 'Missing named argument "denominator" for "divide" of "CalcTools"' in out
    assert 'Incompatible types in assignment (expression has type "float"' in out
    assert "Found 4 errors" in out


def test_correct_calls_type_check_with_their_result_types(tmp_path: Path) -> None:
    proc = _mypy(
        tmp_path,
        "from generated.calc_env import AddCall\n"
        "from generated.calc_env.models import StatsResult\n"
        "from envgen_runtime import ToolResult\n"
        "a: float = env.tools.add(a=1.0, b=2)\n"
        "s: StatsResult = env.tools.stats(values=[1.0])\n"
        "t: ToolResult = env.tools.format_number(value=1.0)\n"
        "c: float = env.tools.call(AddCall.model_validate({'arguments': {'a': 1}}))\n"
        "async def f() -> float:\n"
        "    async with AsyncCalcEnv('http://127.0.0.1:1') as aenv:\n"
        "        return await aenv.tools.divide(numerator=1.0, denominator=2.0)\n",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pool_tool_methods_are_typed_by_each_tools_arguments_and_result(tmp_path: Path) -> None:
    proc = _mypy(
        tmp_path,
        "from generated.calc_env import CalcEnvPool\n"
        "pool = CalcEnvPool(2)\n"
        "pool.tools.add(a='two')\n"
        "pool.tools.stats(values=[1.0], limit=3)\n"
        "total: str | None = pool.tools.add(a=1.0)[0].value\n",
    )
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert 'Argument "a" to "add" of "CalcPoolTools" has incompatible type "str"' in out
    assert 'Unexpected keyword argument "limit" for "stats" of "CalcPoolTools"' in out
    assert 'Incompatible types in assignment (expression has type "float | None"' in out
    assert "Found 3 errors" in out


def test_correct_pool_calls_type_check_with_per_slot_result_types(tmp_path: Path) -> None:
    proc = _mypy(
        tmp_path,
        "from envgen_runtime import SlotToolResult, ToolResult\n"
        "from generated.calc_env import AddCall, AsyncCalcEnvPool, CalcEnvPool, CalcToolCall\n"
        "from generated.calc_env.models import AddArguments, StatsResult\n"
        "pool = CalcEnvPool(2)\n"
        "a: list[SlotToolResult[float]] = pool.tools.add(a=1.0, b=2)\n"
        "s: StatsResult = pool.tools.stats(values=[1.0])[0].unwrap()\n"
        "t: ToolResult | None = pool.tools.format_number(value=1.0)[1].value\n"
        "adds = [AddCall(arguments=AddArguments(a=1)), AddCall(arguments=AddArguments(a=2))]\n"
        "c: list[SlotToolResult[float]] = pool.tools.call(adds)\n"
        "mixed: list[CalcToolCall] = [pool.tools.parse_call('{}'), adds[0]]\n"
        "m: float | None = pool.tools.call(mixed)[0].reward\n"
        "async def f() -> float:\n"
        "    async with AsyncCalcEnvPool(2) as apool:\n"
        "        out = await apool.tools.divide(numerator=1.0, denominator=2.0)\n"
        "        return out[0].unwrap()\n",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
