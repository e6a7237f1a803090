"""A tool env's tools compared: each tool file's schemas judged in its direction (`role: tool`).

A tool is known by its wire name. One that is gone breaks every client calling it; a new one
is safe. For a tool on both sides the wire comparer (`schemadiff.wire_changes`) judges its
`inputSchema` as the action is judged (the client writes the arguments, the server reads
them: a new required argument or a narrowed type breaks) and its `outputSchema` as the
observation is (the server writes the result, the client reads it). Pointers name the tool
file and the place in it (`tools/divide.json` at `/inputSchema/properties/b`), as the
bundler recorded where each def came from.
"""

from __future__ import annotations

from envgen_runtime.schemadiff import Policy, Role, Version, wire_changes

from generator.diff.model import NO_WITNESS, OUTPUT, Change, ChangeClass
from generator.diff.sides import Side
from generator.schema.bundle import tool_model_name
from generator.schema.tools import ToolInput


def tool_changes(old: Side, new: Side, policy: Policy) -> list[Change]:
    """Every change of the tools between two versions of one env, tool by tool."""
    before = {tool.name: tool for tool in old.tools}
    after = {tool.name: tool for tool in new.tools}
    changes: list[Change] = []
    for name in sorted(before.keys() | after.keys()):
        was, now = before.get(name), after.get(name)
        if now is None and was is not None:
            changes.append(
                _tool_change(
                    was,
                    "tool.removed",
                    "breaking",
                    "",
                    f"tool {name!r} removed; clients calling it now get a tool error",
                )
            )
        elif was is None and now is not None:
            changes.append(_tool_change(now, "tool.added", "safe", "", f"tool {name!r} added"))
        elif was is not None and now is not None:
            changes += _schemas(old, new, was, now, policy)
    return changes


def _schemas(old: Side, new: Side, was: ToolInput, now: ToolInput, policy: Policy) -> list[Change]:
    name = now.name
    out = _wire("action", old, new, tool_model_name(name, "Arguments"), policy)
    if was.description != now.description:  # the method's docstring
        message = f"tool {name!r}: description changed"
        out.append(_tool_change(now, "annotation.changed", "safe", "/description", message))
    if was.output_pointer and now.output_pointer:
        out += _wire("observation", old, new, tool_model_name(name, "Result"), policy)
    elif was.output_pointer:
        out.append(
            _tool_change(
                now,
                "tool.output-removed",
                "breaking",
                OUTPUT,
                f"tool {name!r} no longer declares an output schema; the new server need "
                "not send the structured result old clients read",
            )
        )
    elif now.output_pointer:
        out.append(
            _tool_change(
                now,
                "tool.output-added",
                "safe",
                OUTPUT,
                f"tool {name!r} now declares an output schema",
            )
        )
    return out


def _wire(role: Role, old: Side, new: Side, model: str, policy: Policy) -> list[Change]:
    """One tool schema's wire changes: the comparer run on it as on `role`'s root."""
    old_version = Version(defs=old.bundle.defs, roots={role: model})
    new_version = Version(defs=new.bundle.defs, roots={role: model})
    return [
        Change(
            rule=wire.rule,
            change_class="breaking" if wire.breaking else "safe",
            role="tool",
            file=wire.file,
            pointer=wire.pointer,
            message=wire.message,
            path=wire.path,
            note=wire.note,
            witness=wire.witness if wire.has_witness else NO_WITNESS,
        )
        for wire in wire_changes(role, old_version, new_version, policy, new.where)
    ]


def _tool_change(
    tool: ToolInput, rule: str, cls: ChangeClass, pointer: str, message: str
) -> Change:
    return Change(
        rule=rule,
        change_class=cls,
        role="tool",
        file=tool.display,
        pointer=pointer,
        message=message,
    )
