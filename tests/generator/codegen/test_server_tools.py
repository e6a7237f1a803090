"""server.py's `TOOLS`: each committed tool with its server models and its file's own texts.

The server publishes these schemas as they are, so they must be the tool file's, key order
included (a pull writes them back byte for byte); the bundle's copies would not do (their
`#` refs point into the file). The tricky golden case holds names mapped for Python, a
`self` argument, no output schema and text that tries to escape its string.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from generated.calc_env import server as calc_server
from tests.golden.regenerate import CASES
from tests.helpers import REPO

TOOLY = CASES / "tricky"


def _tool_files(root: Path, env: str) -> dict[str, dict[str, object]]:
    files = sorted((root / "schemas" / env / "tools").glob("*.json"))
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in files}


@functools.cache
def _golden_server() -> ModuleType:
    """The tricky case's generated tooly/server.py, imported as a package module."""
    spec = importlib.util.spec_from_file_location(
        "golden_tooly",
        TOOLY / "generated" / "tooly" / "__init__.py",
        submodule_search_locations=[str(TOOLY / "generated" / "tooly")],
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["golden_tooly"] = package
    spec.loader.exec_module(package)
    return importlib.import_module("golden_tooly.server")


@pytest.mark.parametrize("case", ["calc_env", "tooly"])
def test_tools_hold_each_files_schemas_as_the_file_has_them(case: str) -> None:
    module = calc_server if case == "calc_env" else _golden_server()
    root = REPO if case == "calc_env" else TOOLY
    files = _tool_files(root, case)
    assert [tool.name for tool in module.TOOLS] == [doc["name"] for doc in files.values()]
    for tool, (stem, doc) in zip(module.TOOLS, files.items(), strict=True):
        assert tool.source == f"schemas/{case}/tools/{stem}.json"
        assert json.dumps(tool.input_document()) == json.dumps(doc["inputSchema"])
        output = doc.get("outputSchema")
        assert json.dumps(tool.output_document()) == json.dumps(output)
        assert tool.description == doc.get("description")
        assert (tool.result is None) == (output is None)
        assert tool.arguments.__module__ == module.__name__  # the server models, not the client's


def test_tools_carry_the_python_names_and_the_wrap_mark() -> None:
    by_name = {tool.name: tool for tool in calc_server.TOOLS}
    assert by_name["format-number"].function == "format_number"
    assert by_name["add"].wrapped and not by_name["stats"].wrapped
    golden = {tool.name: tool for tool in _golden_server().TOOLS}
    assert golden["class"].function == "class_" and golden["call"].function == "call_"
    assert list(golden["class"].arguments.model_fields) == ["self", "my_arg", "from_"]
