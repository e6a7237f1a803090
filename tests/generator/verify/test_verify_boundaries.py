"""`envgen verify` tries every boundary value first: faults only there are found, and named.

The boundary_env server (tests/generator/verify/boundary_server.py) fails for one valid value
only: `level` at its minimum or its maximum, one member of the nested `style.shade` enum, a
`label` of exactly maxLength characters, a step after a reset whose `width` parameter is at
its maximum. Random examples under the default settings missed all but the first (seed 1:
exit 0 before the boundary phase existed; the reset one over WebSocket only).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main

pytestmark = pytest.mark.e2e

TRANSPORTS = ("websocket", "http")
FAULTS = {
    "minimum": ("/level", "minimum", -100_000),
    "maximum": ("/level", "maximum", 100_000),
    "enum": ("/style/shade", "enum member 27", "c27"),
    "max-length": ("/label", "maxLength", "a" * 64),
}


def _verify(project: Path, url: str, transport: str, *args: str) -> tuple[int, dict[str, Any]]:
    argv = ["--root", str(project), "verify", "boundary_env", "--url", url, "--seed", "1"]
    argv += ["--transport", transport, "--format", "json", *args]
    result = CliRunner().invoke(main, argv, catch_exceptions=False)
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_server_without_boundary_faults_conforms(
    boundary_project: Path, boundary_server: str, transport: str
) -> None:
    code, report = _verify(boundary_project, f"{boundary_server}/{transport}/none", transport)
    assert code == 0, report
    # level: minimum, maximum, zero; label: empty, maxLength; style: null, 40 shades (the
    # simplest action already has level 0, so "zero" is the same action and played once);
    # the reset parameter width: minimum, maximum
    assert report["boundaries"] == 47
    assert report["episodes"] > report["boundaries"]  # random examples follow


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_at_one_boundary_is_found_and_named(
    boundary_project: Path, boundary_server: str, transport: str, fault: str
) -> None:
    url = f"{boundary_server}/{transport}/{fault}"
    code, report = _verify(boundary_project, url, transport)
    assert code == 1, report
    (found,) = report["violations"]
    pointer, bound, value = FAULTS[fault]
    assert found["check"] == "server.error"
    assert found["boundary"] == {
        "role": "action",
        "pointer": pointer,
        "bound": bound,
        "value": value,
    }
    assert found["message"].startswith(f"at the boundary {pointer} at its {bound} (")
    assert f"planted: the {fault} fault" in found["message"]
    assert len(found["actions"]) == 1  # one step: the minimal reproduction
    (action,) = found["actions"]
    leaf = action
    for part in pointer.strip("/").split("/"):
        leaf = leaf[part]
    assert leaf == value
    assert found["seed"] == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_fault_of_every_step_is_reported_once_without_a_bound(
    boundary_project: Path, boundary_server: str, transport: str
) -> None:
    url = f"{boundary_server}/{transport}/every-step"
    code, report = _verify(boundary_project, url, transport)
    assert code == 1
    (found,) = report["violations"]
    assert found["check"] == "server.error"
    assert "boundary" not in found
    assert found["actions"] == [{"label": "", "level": 0}]  # the simplest action fails too


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_fault_at_a_reset_parameters_bound_is_found_and_named(
    boundary_project: Path, boundary_server: str, transport: str
) -> None:
    url = f"{boundary_server}/{transport}/reset-maximum"
    code, report = _verify(boundary_project, url, transport)
    assert code == 1, report
    (found,) = report["violations"]
    assert found["check"] == "server.error"
    assert found["boundary"] == {
        "role": "reset",
        "pointer": "/width",
        "bound": "maximum",
        "value": 100_000,
    }
    assert found["message"].startswith("at the reset boundary /width at its maximum (100000)")
    assert found["reset_params"] == {"width": 100_000}
    assert found["actions"] == [{"label": "", "level": 0}]
