"""FastMCP's wrapper of a non-object tool return, recognised in an output schema.

FastMCP 3 marks it (``x-fastmcp-wrap-result``); the ``mcp`` SDK's FastMCP writes only the
shape (measured with mcp 1.30: ``{"properties": {"result": ...}, "required": ["result"],
"title": "<function>Output", "type": "object"}``). A wrapped tool's method returns the value,
typed from its result model's ``result`` field.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.codegen.tool_methods import is_wrapped, wrapped_value

SDK_LIST = {
    "properties": {"result": {"items": {"type": "integer"}, "title": "Result", "type": "array"}},
    "required": ["result"],
    "title": "countOutput",
    "type": "object",
}
MODELS = """
from __future__ import annotations
from typing import Annotated
from pydantic import Field
from envgen_runtime import EnvModel

class Item(EnvModel):
    name: str

class CountResult(EnvModel):
    result: Annotated[list[Item], Field(min_length=1)]
"""


@pytest.mark.parametrize(
    ("schema", "wrapped"),
    [
        ({"properties": {"result": {"type": "number"}}, "x-fastmcp-wrap-result": True}, True),
        (SDK_LIST, True),
        ({**SDK_LIST, "title": "Count"}, False),  # a model of its own, named so
        ({**SDK_LIST, "description": "A count."}, False),  # a documented model
        ({**SDK_LIST, "required": []}, False),
        ({**SDK_LIST, "properties": {"result": {}, "more": {}}}, False),
        ({"type": "object", "x-fastmcp-wrap-result": False}, False),
        (None, False),
    ],
)
def test_is_wrapped(schema: Any, wrapped: bool) -> None:
    assert is_wrapped(schema) is wrapped


def test_the_wrapped_value_is_typed_from_the_result_field() -> None:
    value = wrapped_value(MODELS, "CountResult", SDK_LIST)
    assert value is not None
    assert value.annotation == "list[Item]"  # constraints stripped, as for arguments
    assert value.model_imports == ["Item"]
    assert wrapped_value(MODELS, "CountResult", {**SDK_LIST, "title": "Count"}) is None
    assert wrapped_value(MODELS, "ToolResult", SDK_LIST) is None
