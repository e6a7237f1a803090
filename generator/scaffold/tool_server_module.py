"""The server module `envgen new --tools` writes: the tools as plain functions on
envgen_runtime.server's `ToolEnvironment` (openenv's `MCPEnvironment` over FastMCP).

Built like examples/calc_env/server.py: the environment serves the committed tools (the
generated `server.TOOLS`, from `tools/echo.json` and `tools/add.json`, `tool_env.TOOLS`), so
`tools/list` publishes the committed files as they are and `envgen verify` and a later
`envgen pull` agree with them; each call's arguments are validated by the generated server
models before a function runs. tests/generator/scaffold and tests/e2e/test_scaffold_tool_env
hold the two together. Only the env name and the class prefix (checked identifiers) reach
the text.

It serves on openenv's app (`backend = "openenv"`): envgen's lean app does not serve MCP
environments yet.
"""

from __future__ import annotations

import string

_SERVER = string.Template(
    '''# mypy: disallow-subclassing-any=False
"""The $name server: a tool environment whose tools are the plain functions below.

Each function serves the tool of its name in schemas/$name/tools/<tool>.json (the generated
`server.TOOLS`): its parameters must be the tool's arguments, checked at start-up (a tool
without a function, or a function for no tool, fails to start). Each call's arguments are
validated by the generated models before the function runs, and its return is checked
against the tool's outputSchema; `tools/list` publishes the tool files as they are. To add
or change a tool, edit its tools/<tool>.json, run `envgen generate $name`, then edit the
function here; `envgen verify $name` checks the served tools against the files. env.toml's
[server] command runs this module (`python -m $module --port 8000 --protocol
websocket|http`), which is what `${prefix}Env.from_local_process()` starts.

It serves on openenv 0.10's app (`pip install 'envgen-runtime[openenv]'`, which brings
fastmcp): `websocket` is openenv's own `create_app` (`/ws`, `POST /step`, `/mcp`), `http` the
same environment on envgen's stateful HTTP app. envgen's lean backend does not serve MCP
environments yet, so env.toml says `backend = "openenv"`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envgen_runtime.server import ToolEnvironment, tool_main

from generated.$name import ${prefix}Env
from generated.$name.server import TOOLS


def echo(text: str) -> str:
    """Return the text it is given."""
    return text


def add(a: float, b: float) -> float:
    """Add two numbers (b defaults to 0.0, as tools/add.json says)."""
    return a + b


class ${prefix}Environment(ToolEnvironment):
    """$name's tools; tool calls are its steps, counted in its state; reset starts a fresh
    count (an override calls super().reset); any other action is refused."""

    TOOLS = TOOLS
    NAME = "$name"
    DESCRIPTION = "A tool environment: echo and add."
    VERSION = ${prefix}Env.SPEC.version  # env.toml's, through `envgen generate`

    def tool_functions(self) -> Sequence[Any]:
        return [echo, add]  # methods work too: each environment calls this once


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line env.toml's `[server] command` fills in, and serve."""
    tool_main(${prefix}Environment, argv)


if __name__ == "__main__":
    main()
'''
)


def tool_server_module(name: str, prefix: str, module: str) -> str:
    """The text of the scaffolded tool server module for env `name`."""
    return _SERVER.substitute(name=name, prefix=prefix, module=module)
