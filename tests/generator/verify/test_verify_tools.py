"""`envgen verify` on a tool env: every tool called, each planted fault found and reported.

One real server process for the module (tests/generator/verify/tool_server.py: openenv's
app for an `MCPEnvironment`, each fault's app at /<fault>), stopped by its provider; the
committed schemas are tests/generator/verify/tool_env/ (pulled from the `none` app).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from envgen_runtime import LocalProcessProvider

from generator.cli import main
from generator.verify.model import CHECKS, NOTE_CHECKS
from generator.verify.tools import classify_error
from tests.generator.verify.tool_server import FAULTS
from tests.helpers import REPO

pytestmark = pytest.mark.e2e
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def tool_servers() -> Iterator[dict[str, str]]:
    provider = LocalProcessProvider(
        ["{python}", "-m", "tests.generator.verify.tool_server", "--port", "{port}"],
        startup_timeout_s=120.0,
        cwd=REPO,
        env={"ENABLE_WEB_INTERFACE": "false"},
    )
    try:
        base = provider.start()
        yield {fault: f"{base}/{fault}" for fault in FAULTS}
    finally:
        provider.stop()


@pytest.fixture
def tool_project(tmp_path: Path) -> Path:
    shutil.copytree(HERE / "tool_env", tmp_path / "schemas" / "tool_env")
    return tmp_path


def _report(project: Path, url: str, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        main,
        ["--root", str(project), "verify", "tool_env", "--url", url, "--format", "json",
         "--max-examples", "10", "--time-budget", "20", *args],
        catch_exceptions=False,
    )  # fmt: skip
    return result.exit_code, json.loads(result.output)


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "call_tool", "tool_name": tool, "arguments": arguments}


def _calls_found(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The violations the tool calls found (the listing's own drift is tested apart)."""
    return [v for v in report["violations"] if v["check"] != "drift.tool"]


def _drift(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in report["violations"] if v["check"] == "drift.tool"]


def _tool_notes(report: dict[str, Any]) -> list[str]:
    return [note for note in report["notes"] if note.startswith("tool.error: ")]


def test_a_conforming_tool_env_passes_and_tool_errors_are_notes(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    code, report = _report(tool_project, tool_servers["none"])
    assert code == 0, report
    assert report["violations"] == []
    (note,) = _tool_notes(report)  # scale refuses a factor of 0: the tool's own answer
    assert note.startswith("tool.error: scale: ") and "a factor of 0 is refused" in note
    assert '{"factor": 0, "value": 0}' in note  # the boundary that found it


def test_a_result_breaking_the_output_schema_is_reported(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    code, report = _report(tool_project, tool_servers["bad-output"])
    assert code == 1
    (listed,) = _drift(report)  # the listing shows it too: the server's schema lost the enum
    assert listed["file"] == "schemas/tool_env/tools/measure.json"
    assert listed["pointer"] == "/outputSchema/properties/kind/enum"
    assert listed["message"].startswith("enum.removed: tool 'measure': enum restriction removed")
    (found,) = _calls_found(report)
    assert found["check"] == "tool.output"
    assert found["pointer"] == "/observation/result/structured_content/kind"
    assert found["value"] == "empty" and found["message"].startswith("measure: ")
    assert found["file"] == "schemas/tool_env/tools/measure.json"
    assert found["seed"] == 0 and found["actions"] == [_call("measure", text="")]


def test_a_result_the_server_itself_refuses_is_an_output_violation(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    code, report = _report(tool_project, tool_servers["self-check"])
    assert code == 1
    (found,) = report["violations"]
    assert found["check"] == "tool.output" and found["pointer"] == "/observation/error/message"
    assert "'empty' is not one of" in found["value"]
    assert found["actions"] == [_call("measure", text="")]


def test_valid_arguments_refused_are_found_at_their_boundary(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    code, report = _report(tool_project, tool_servers["rejects-valid"])
    assert code == 1
    (listed,) = _drift(report)
    assert listed["file"] == "schemas/tool_env/tools/scale.json"
    assert listed["pointer"] == "/inputSchema/properties/factor/maximum"
    assert listed["message"] == (
        "number.maximum-lowered: tool 'scale': maximum 10 -> 5; old clients may still send "
        "what the new server now rejects"
    )
    (found,) = _calls_found(report)
    assert found["check"] == "tool.rejected-valid"
    assert found["boundary"] == {
        "role": "tool",
        "tool": "scale",
        "pointer": "/factor",
        "bound": "maximum",
        "value": 10,
    }
    assert found["actions"] == [_call("scale", factor=10, value=0)]
    assert "less than or equal to 5" in found["message"]


def test_a_committed_tool_the_server_lacks_is_missing(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    code, report = _report(tool_project, tool_servers["missing-tool"])
    assert code == 1
    (listed,) = _drift(report)
    assert listed["file"] == "schemas/tool_env/tools/echo.json" and listed["pointer"] == ""
    assert listed["message"].startswith("tool.removed: tool 'echo' removed")
    (found,) = _calls_found(report)
    assert found["check"] == "tool.missing" and "echo" in found["message"]
    assert found["file"] == "schemas/tool_env/tools/echo.json"


def test_the_listing_is_judged_against_the_committed_tools_in_the_server_s_direction(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    tools = tool_project / "schemas" / "tool_env" / "tools"
    (tools / "measure.json").unlink()  # the server has a tool the committed client lacks
    scale = json.loads((tools / "scale.json").read_text())
    scale["inputSchema"]["properties"]["factor"]["maximum"] = 20  # committed: wider
    (tools / "scale.json").write_text(json.dumps(scale, indent=2) + "\n")
    code, report = _report(tool_project, tool_servers["none"], "--no-negative")
    (listed,) = _drift(report)
    assert listed["file"] == "schemas/tool_env/tools/scale.json"
    assert listed["message"].startswith("number.maximum-lowered: tool 'scale': maximum 20 -> 10")
    assert "tool drift (safe): tool 'measure' added" in report["notes"]
    assert code == 1


def test_a_conforming_listing_adds_no_drift_and_no_note(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    code, report = _report(tool_project, tool_servers["none"], "--no-negative")
    assert code == 0 and not _drift(report)
    assert not [note for note in report["notes"] if note.startswith("tool drift")]


def test_the_text_report_gives_the_reproduction(
    tool_project: Path, tool_servers: dict[str, str]
) -> None:
    result = CliRunner().invoke(
        main,
        ["--root", str(tool_project), "verify", "tool_env", "--url", tool_servers["bad-output"],
         "--max-examples", "5", "--time-budget", "10", "--no-negative"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "FAIL tool.output at /observation/result/structured_content/kind" in result.output
    assert 'reproduce: reset(seed=0)\n      step({"arguments": {"text": ""}' in result.output


@pytest.mark.parametrize(
    ("error_type", "message", "check"),
    [
        ("execution_error", "Error calling tool 'd': division by zero", "tool.error"),
        ("tool_not_found", "Error calling tool 'f': file not found", "tool.error"),
        ("invalid_args", "Error calling tool 'f': invalid path", "tool.error"),
        ("tool_not_found", "Unknown tool: 'echo'", "tool.missing"),
        (
            "execution_error",
            "1 validation error for call[scale]\nfactor ...",
            "tool.rejected-valid",
        ),
        ("invalid_args", "arguments refused", "tool.rejected-valid"),
        ("execution_error", "Output validation error: 'x' is not one of", "tool.output"),
        ("invalid_args", "Invalid structured content returned by tool d: None", "tool.output"),
        ("timeout", "Tool 'slow' timed out after 30 seconds", "tool.error"),
    ],
)
def test_failed_calls_are_classified_by_fastmcps_message_first(
    error_type: str, message: str, check: str
) -> None:
    assert classify_error(error_type, message) == check
    assert check in CHECKS and (check in NOTE_CHECKS) == (check == "tool.error")
