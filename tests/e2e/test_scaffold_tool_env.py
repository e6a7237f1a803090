"""`envgen new demo_tools --tools && envgen generate demo_tools`, then both tools, no edits.

A subprocess (the temp project on its path) starts the scaffolded server through the
generated client's from_local_process() (env.toml's `[server] command`, stopped by the
client's own provider handle on exit), over both protocols, and calls `echo` and `add`
through the generated sync client. It also lists the live server's tools as `envgen pull`
does and compares them with the scaffolded tools/ files, byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from tests.helpers import REPO

pytestmark = pytest.mark.e2e

_PLAY = """
import json, sys, warnings
from pathlib import Path
from generated.demo_tools import DemoToolsEnv
from generator.interop.tool_listing import pull_tools

warnings.simplefilter("ignore")  # the committed observation's optional tool_name: compatible
out = {}
for transport in ("websocket", "http"):
    with DemoToolsEnv.from_local_process(transport=transport) as env:
        env.reset()
        echoed = env.tools.echo(text="hello")
        added = env.tools.add(a=2, b=3.5)
        default = env.tools.add(a=4)
        out[transport] = [echoed, added, default, env.state().step_count]  # unwrapped values
        if transport == "websocket":
            pulled = pull_tools(env.provider.base_url)
            out["same_files"] = {
                name: text == Path("schemas/demo_tools", name).read_text()
                for name, text in pulled.files.items()
            }
print(json.dumps(out))
"""


def test_new_tools_then_generate_then_both_tools_answer(tmp_path: Path) -> None:
    runner = CliRunner()
    for args in (["new", "demo_tools", "--tools"], ["generate", "demo_tools"]):
        result = runner.invoke(main, ["--root", str(tmp_path), *args])
        assert result.exit_code == 0, result.output
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", _PLAY],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for transport in ("websocket", "http"):
        assert out[transport] == ["hello", 5.5, 4.0, 3], transport
    assert out["same_files"] == {"tools/echo.json": True, "tools/add.json": True}
