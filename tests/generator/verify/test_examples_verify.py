"""`envgen verify ENV --local` passes for every example env over both protocols.

Each example server is built on its generated server models, so nothing it publishes or
sends may drift from the committed schemas. Each case starts the server with env.toml's
`[server] command` (the protocol verify speaks filled in), as CI does.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.schema.loader import Layout, discover_envs
from tests.helpers import REPO

EXAMPLE_ENVS = discover_envs(Layout.at(REPO))


def test_every_example_env_is_covered() -> None:
    assert EXAMPLE_ENVS == [
        "calc_env",
        "coding_env",
        "echo_env",
        "grid_env",
        "quiz_env",
        "reacher_env",
    ]


@pytest.mark.e2e
@pytest.mark.parametrize("transport", ["websocket", "http"])
@pytest.mark.parametrize("env", EXAMPLE_ENVS)
def test_example_env_conforms_to_its_schemas(env: str, transport: str) -> None:
    args = [
        "--root", str(REPO), "verify", env, "--local", "--transport", transport,
        "--max-examples", "15", "--time-budget", "8", "--format", "json",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["violations"] == [], report
    if env == "calc_env":  # every tool called; dividing by zero is a tool error, a note
        (divide,) = [n for n in report["notes"] if n.startswith("tool.error: divide: ")]
        assert "division by zero" in divide
        assert not [n for n in report["notes"] if n.startswith("tool.error: ") and n != divide]
