"""The generated tools namespace of the `tooly` golden env, whose names Python cannot take.

Tool names that are keywords (`class`), the namespace's own (`call`) or not identifiers
(`notes.get-all`), and arguments named `self`, `my-arg` and `from`, are mapped to Python
names, reported in tools.py's docstring, and sent under their wire names. Descriptions that
try to inject code arrive verbatim in docstrings and run nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.golden.regenerate import CASES
from tests.helpers import REPO

CASE = CASES / "tricky"
MARKER = Path("/tmp/envgen-pwned")

PROBE = r"""
import inspect, json
from generated.tooly import ToolyTools, AsyncToolyTools, ToolyToolCall, ClassCall, ToolyEnv
from generated.tooly import tools as module
from envgen_runtime import EnvValidationError

methods = sorted(n for n, v in vars(ToolyTools).items() if not n.startswith("_"))
sig = inspect.signature(ToolyTools.class_)
spec = module._TOOL_class_
try:
    spec.encode({"self": 3, "my-arg": 3, "from": None})
    refused = None
except EnvValidationError as exc:
    refused = [list(e.loc) for e in exc.errors]
call = ToolyTools.parse_call('{"tool_name": "class", "arguments": {"self": "s", "my-arg": 4}}')
action = module._tool_action("class", spec.arguments.encode(call.arguments))
print(json.dumps({
    "methods": methods,
    "async_methods": sorted(n for n, v in vars(AsyncToolyTools).items() if not n.startswith("_")),
    "params": [(p.name, str(p.default)) for p in sig.parameters.values()],
    "sent": spec.encode({"self": "x", "my-arg": 3, "from": None}),
    "sent_all": spec.encode({"self": "x", "my-arg": 7, "from": ["b"]}),
    "refused": refused,
    "call": [type(call).__name__, call.tool_name, call.arguments.my_arg],
    "action": action.model_dump(mode="json", exclude_none=True),
    "doc": ToolyTools.class_.__doc__,
    "module_doc": module.__doc__,
    "wire_names": sorted(module._SPECS),
    "has_tools": isinstance(ToolyEnv.__dict__["tools"], property) or hasattr(ToolyEnv, "tools"),
}))
"""


def _probe() -> dict[str, object]:
    MARKER.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CASE), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=CASE, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert not MARKER.exists(), "schema text was executed"
    out: dict[str, object] = json.loads(proc.stdout)
    return out


def test_names_are_mapped_reported_and_sent_under_wire_names() -> None:
    out = _probe()
    assert out["methods"] == ["call", "call_", "class_", "notes_get_all", "parse_call"]
    assert out["async_methods"] == out["methods"]
    assert out["wire_names"] == ["call", "class", "notes.get-all"]
    assert out["params"] == [
        ["self", "<class 'inspect._empty'>"],
        ["self_", "<class 'inspect._empty'>"],
        ["my_arg", "3"],
        ["from_", "None"],
    ]
    assert out["sent"] == {"self": "x"}  # defaults left to the server
    assert out["sent_all"] == {"self": "x", "my-arg": 7, "from": ["b"]}
    assert out["refused"] == [["self"]]
    assert out["call"] == ["ClassCall", "class", 4]
    assert out["action"] == {  # a call as data sends its model's defaults (the codec's rule)
        "type": "call_tool",
        "tool_name": "class",
        "arguments": {"self": "s", "my-arg": 4, "from": ["a"]},
    }
    module_doc = str(out["module_doc"])
    for line in (
        "tool 'call' is the method call_()",
        "tool 'class' is the method class_()",
        "argument 'self' of tool 'class' is self_",
        "argument 'my-arg' of tool 'class' is my_arg",
        "tool 'notes.get-all' is the method notes_get_all()",
    ):
        assert f"- {line}" in module_doc


def test_descriptions_arrive_verbatim_and_inert() -> None:
    out = _probe()
    tool = json.loads((CASE / "schemas/tooly/tools/class.json").read_text(encoding="utf-8"))
    doc = str(out["doc"])
    assert doc.startswith(tool["description"])
    assert f"- self (required): {tool['inputSchema']['properties']['self']['description']}" in doc
    source = (CASE / "generated/tooly/tools.py").read_text(encoding="utf-8")
    assert "{{ 7*7 }}" in source and "49" not in source  # never template source
