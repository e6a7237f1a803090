"""The tool verdict table: a tool env's tool files changed, with the expected class.

Schema rows are written once and judged both ways, as `cases.py` does for the action and the
observation: `input` is the verdict when the edit is made to the tool's `inputSchema` (the
client writes the arguments), `output` when it is made to its `outputSchema` (the server
writes the result). Tool rows change the tool set itself (`old`/`new`: the tools, by file
name, None for a file that is not there). A verdict is "CLASS rule rule...", as in `cases.py`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from tests.generator.diff.cases import DELETE, edit

P = "/properties"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "numerator": {"type": "number"},
        "denominator": {"type": "number"},
        "mode": {"type": "string", "enum": ["exact", "rounded"]},
    },
    "required": ["numerator", "denominator"],
}


def tool(name: str, inputs: Any = SCHEMA, output: Any = SCHEMA) -> dict[str, Any]:
    """A tool file; `output` None: the tool declares no output schema."""
    doc: dict[str, Any] = {"name": name, "description": f"The {name} tool.", "inputSchema": inputs}
    if output is not None:
        doc["outputSchema"] = output
    return copy.deepcopy(doc)


@dataclass
class SchemaCase:
    """One edit of a tool schema, judged in its input and in its output position."""

    id: str
    old: Any
    new: Any
    input: str
    output: str
    code: bool = False


@dataclass
class ToolCase:
    """A change to the tool set: `old`/`new` map file names to tool documents (or None)."""

    id: str
    old: dict[str, Any]
    new: dict[str, Any]
    verdict: str
    code: bool = False


SCHEMA_CASES = [
    SchemaCase("identical", SCHEMA, SCHEMA, "safe", "safe"),
    SchemaCase(
        "argument type narrowed",
        SCHEMA,
        edit(SCHEMA, (f"{P}/denominator/type", "integer")),
        "breaking type.narrowed",
        "safe type.narrowed",
    ),
    SchemaCase(
        "argument type widened",
        SCHEMA,
        edit(SCHEMA, (f"{P}/denominator/type", ["number", "string"])),
        "safe type.widened",
        "breaking type.widened",
    ),
    SchemaCase(
        "required argument added",
        SCHEMA,
        edit(SCHEMA, (f"{P}/precision", {"type": "integer"}), ("/required/-", "precision")),
        "breaking property.added-required",
        "safe property.added-required",
    ),
    SchemaCase(
        "optional argument added",
        SCHEMA,
        edit(SCHEMA, (f"{P}/precision", {"type": "integer"})),
        "safe property.added",
        "safe property.added",
    ),
    SchemaCase(
        "optional argument made required",
        SCHEMA,
        edit(SCHEMA, ("/required/-", "mode")),
        "breaking required.added",
        "safe required.added",
    ),
    SchemaCase(
        "required argument removed",
        SCHEMA,
        edit(SCHEMA, (f"{P}/denominator", DELETE), ("/required", ["numerator"])),
        "safe property.removed",
        "breaking property.removed-required",
    ),
    SchemaCase(
        "null now allowed",
        SCHEMA,
        edit(SCHEMA, (f"{P}/numerator/type", ["number", "null"])),
        "safe nullable.added",
        "breaking nullable.added",
    ),
    SchemaCase(
        "enum value added",
        SCHEMA,
        edit(SCHEMA, (f"{P}/mode/enum/-", "floor")),
        "safe enum.value-added",
        "breaking enum.value-added",
    ),
    SchemaCase(
        "enum value removed",
        SCHEMA,
        edit(SCHEMA, (f"{P}/mode/enum", ["exact"])),
        "breaking enum.value-removed",
        "safe enum.value-removed",
    ),
    SchemaCase(
        "object closed",
        SCHEMA,
        edit(SCHEMA, ("/additionalProperties", False)),
        "breaking object.closed",
        "safe object.closed",
    ),
    SchemaCase(
        "bound added",
        SCHEMA,
        edit(SCHEMA, (f"{P}/denominator/minimum", 1)),
        "breaking number.minimum-raised",
        "safe number.minimum-raised",
    ),
    SchemaCase(
        "description changed",
        SCHEMA,
        edit(SCHEMA, (f"{P}/numerator/description", "The top.")),
        "safe annotation.changed",
        "safe annotation.changed",
    ),
    SchemaCase(
        "argument renamed: the attribute goes",
        SCHEMA,
        edit(SCHEMA, (f"{P}/mode", DELETE), (f"{P}/style", {"type": "string"})),
        "breaking-code code.attribute-removed property.removed",
        "breaking-code code.attribute-removed property.removed",
        code=True,
    ),
    SchemaCase(
        "integer widened to number: arguments are built, results read",
        edit(SCHEMA, (f"{P}/denominator/type", "integer")),
        SCHEMA,
        "safe code.type-changed-compatibly type.widened",
        "breaking code.type-changed type.widened",
        code=True,
    ),
]

TOOL_CASES = [
    ToolCase(
        "tool removed",
        {"divide.json": tool("divide"), "add.json": tool("add")},
        {"add.json": tool("add")},
        "breaking tool.removed",
    ),
    ToolCase(
        "tool added",
        {"add.json": tool("add")},
        {"divide.json": tool("divide"), "add.json": tool("add")},
        "safe tool.added",
    ),
    ToolCase(
        "tool file renamed, same tool",
        {"add.json": tool("add")},
        {"plus.json": tool("add")},
        "safe",
    ),
    ToolCase(
        "tool description changed",
        {"add.json": tool("add")},
        {"add.json": {**tool("add"), "description": "Adds."}},
        "safe annotation.changed",
    ),
    ToolCase(
        "output schema removed",
        {"add.json": tool("add")},
        {"add.json": tool("add", output=None)},
        "breaking tool.output-removed",
    ),
    ToolCase(
        "output schema added",
        {"add.json": tool("add", output=None)},
        {"add.json": tool("add")},
        "safe tool.output-added",
    ),
    ToolCase(
        "tool removed: its method and classes go",
        {"divide.json": tool("divide"), "add.json": tool("add", output=None)},
        {"add.json": tool("add", output=None)},
        "breaking tool.removed code.method-removed code.class-removed",
        code=True,
    ),
    ToolCase(
        "tool added: a new method",
        {"add.json": tool("add")},
        {"add.json": tool("add"), "divide.json": tool("divide", SCHEMA, None)},
        "safe tool.added code.method-added code.class-added",
        code=True,
    ),
    ToolCase(
        "tool renamed: the method is renamed",
        {"add.json": tool("add", output=None)},
        {"plus.json": tool("plus", output=None)},
        "breaking tool.removed tool.added code.method-renamed",
        code=True,
    ),
    ToolCase(
        "output schema added: the method returns the result model",
        {"add.json": tool("add", output=None)},
        {"add.json": tool("add")},
        "breaking-code tool.output-added code.method-result-changed",
        code=True,
    ),
]
