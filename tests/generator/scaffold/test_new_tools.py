"""`envgen new NAME --tools`: a tool env's files, which the loader accepts and generate renders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main
from generator.schema.loader import Layout, load_env
from tests.helpers import REPO


def test_new_tools_writes_a_tool_env_that_loads_and_generates(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--root", str(tmp_path), "new", "demo_tools", "--tools"])
    assert result.exit_code == 0, result.output
    target = tmp_path / "schemas" / "demo_tools"
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == [
        "action.schema.json",
        "env.toml",
        "observation.schema.json",
        "state.schema.json",
        "tools/add.json",
        "tools/echo.json",
    ]
    env = load_env(Layout.at(tmp_path), "demo_tools")
    assert sorted(tool.name for tool in env.tools) == ["add", "echo"]
    assert env.manifest.backend == "openenv"  # lean does not serve MCP envs yet
    assert "openenv" in env.manifest.docker_requirements
    server = (tmp_path / "servers" / "demo_tools" / "server.py").read_text()
    assert "class DemoToolsEnvironment(ToolEnvironment)" in server
    compile(server, "server.py", "exec")
    result = runner.invoke(main, ["--root", str(tmp_path), "generate", "demo_tools"])
    assert result.exit_code == 0, result.output
    tools_py = (tmp_path / "generated" / "demo_tools" / "tools.py").read_text()
    assert "    def echo(" in tools_py and "    def add(" in tools_py
    checked = subprocess.run(  # the server module on the generated TOOLS, as an author's
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "servers/demo_tools/server.py",
        ],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_help_says_tool_envs_serve_on_openenv() -> None:
    result = CliRunner().invoke(main, ["new", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "--tools" in text and "lean backend does not serve MCP" in text
