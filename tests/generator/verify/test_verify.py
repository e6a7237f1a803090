"""`envgen verify` against real servers: each planted fault found, shrunk and reported.

Run through the click command (`CliRunner`), as a user runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main

pytestmark = pytest.mark.e2e


def _verify(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["--root", str(project), "verify", "counter_env", *args], catch_exceptions=False
    )
    return result.exit_code, result.output


def _report(project: Path, url: str, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = _verify(project, "--url", url, "--format", "json", *args)
    return code, json.loads(out)


def _only(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [v for v in report["violations"] if v["check"] == check]


def test_a_conforming_server_passes(counter_project: Path, counter_servers: dict[str, str]) -> None:
    code, out = _verify(counter_project, "--url", counter_servers["none"])
    assert code == 0, out
    assert out.strip().endswith("counter_env: conforms")
    # -3, 3 and 0 first (0 is the simplest action too), then 50 random episodes
    assert "53 episodes (3 at boundaries)" in out and "negative cases" in out


def test_an_observation_that_breaks_for_some_actions_is_shrunk_to_one_step(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    code, report = _report(counter_project, counter_servers["obs-breaks"])
    assert code == 1
    (found,) = _only(report, "step.observation")
    assert found["pointer"] == "/observation/parity"
    assert found["value"] == "negative"
    assert found["actions"] == [{"delta": -2}]  # the minimal reproduction
    assert found["file"] == "schemas/counter_env/observation.schema.json"
    assert report["violations"] == [found]  # nothing else is wrong with this server


def test_a_server_error_on_a_boundary_value_is_shrunk_to_that_value(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    code, report = _report(counter_project, counter_servers["crash-on-boundary"])
    assert code == 1
    (found,) = _only(report, "server.error")
    assert found["actions"] == [{"delta": 3}]
    assert found["boundary"] == {
        "role": "action",
        "pointer": "/delta",
        "bound": "maximum",
        "value": 3,
    }
    assert "EXECUTION_ERROR" in found["message"] or "500" in found["message"]


def test_a_server_accepting_out_of_bounds_actions_is_caught(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    code, report = _report(counter_project, counter_servers["accepts-out-of-bounds"])
    assert code == 1
    accepted = _only(report, "negative.accepted")
    assert {(v["pointer"], v["value"]) for v in accepted} == {("/delta", 4), ("/delta", -4)}
    assert all(v["actions"] == [{"delta": v["value"]}] for v in accepted)
    assert report["negative_cases"] >= 5  # wrong type, bounds, missing, unknown field
    assert [v["check"] for v in report["violations"]] == ["negative.accepted"] * 2


def test_a_state_that_drops_a_declared_field_is_caught_before_any_step(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    code, report = _report(counter_project, counter_servers["state-drops-field"])
    assert code == 1
    assert [v["check"] for v in report["violations"]] == ["state.missing-field"]
    (found,) = report["violations"]
    assert found["pointer"] == "/total"
    assert "which the state schema declares" in found["message"]
    assert found["actions"] == []  # reset alone reproduces it
    assert found["file"] == "schemas/counter_env/state.schema.json"


def test_schema_drift_is_reported_from_the_servers_own_schema(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    code, report = _report(counter_project, counter_servers["drift"])
    assert code == 1
    (found,) = _only(report, "drift.breaking")
    assert found["message"].startswith("observation: enum.value-added")
    assert found["pointer"] == "/properties/parity/enum"
    assert len(report["violations"]) == 1  # the replies themselves still conform


def test_a_server_version_other_than_env_tomls_is_reported(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    code, report = _report(counter_project, counter_servers["version-drift"])
    assert code == 1
    assert [v["check"] for v in report["violations"]] == ["drift.version"]
    (found,) = report["violations"]
    assert (found["pointer"], found["value"]) == ("/version", "0.2.0")
    assert found["file"] == "schemas/counter_env/env.toml"
    assert "'0.2.0'" in found["message"] and "'0.1.0'" in found["message"]


def test_the_same_seed_gives_the_same_report(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    url = counter_servers["obs-breaks"]
    first = _report(counter_project, url, "--seed", "7")[1]
    second = _report(counter_project, url, "--seed", "7")[1]
    assert first == second
    assert first["seed"] == 7


def test_text_and_github_formats_show_the_reproduction(
    counter_project: Path, counter_servers: dict[str, str]
) -> None:
    url = counter_servers["obs-breaks"]
    code, text = _verify(counter_project, "--url", url)
    assert code == 1
    assert "FAIL step.observation at /observation/parity" in text
    assert 'step({"delta": -2})' in text
    code, github = _verify(counter_project, "--url", url, "--format", "github")
    assert code == 1
    (line,) = [ln for ln in github.splitlines() if ln.startswith("::error")]
    assert line.startswith("::error file=schemas/counter_env/observation.schema.json,")
    assert "%0A" in line  # the reproduction, on lines of its own


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "exactly one of --url URL, --local or --docker"),
        (("--url", "http://127.0.0.1:9", "--local"), "exactly one of"),
        (("--url", "ftp://x"), "--url"),
    ],
)
def test_usage_errors_exit_2(counter_project: Path, args: tuple[str, ...], message: str) -> None:
    code, out = _verify(counter_project, *args)
    assert code == 2
    assert message in out


def test_an_unknown_env_is_an_input_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["--root", str(tmp_path), "verify", "nope_env", "--url", "http://127.0.0.1:9"]
    )
    assert result.exit_code == 2
    assert "schemas/nope_env/env.toml" in result.output
