"""Every rule id `envgen diff` reports, with its class in each direction.

`action` is the class when the client writes and the server reads (a change breaks when the
new schema rejects what the old one accepted); `reader` is the class for observation and
state (the server writes, the client reads: a change breaks when the new schema allows what
the old one rejected). `None` means the rule is never reported in that direction. Classes
are those under the default policy; `policy` says which setting flips them. A tool file's
changes (`role: tool`) take the action's class in its `inputSchema` (and for the tool
itself) and the reader's in its `outputSchema`.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.diff.model import CLIENT_WRITTEN, ChangeClass, ReportRole, tool_direction

B: ChangeClass = "breaking"
C: ChangeClass = "breaking-code"
S: ChangeClass = "safe"


@dataclass(frozen=True)
class RuleDoc:
    id: str
    summary: str
    action: ChangeClass | None
    reader: ChangeClass | None
    policy: str = ""

    def class_for(self, role: ReportRole | None, pointer: str = "") -> ChangeClass | None:
        """The class in `role`'s direction (a tool file's: by where `pointer` is in it)."""
        if role is None:
            return self.action
        wire = tool_direction(pointer) if role == "tool" else role
        return self.action if wire in CLIENT_WRITTEN else self.reader


_IGNORE_UNKNOWN = "safe when readers_ignore_unknown_fields (the default); breaking without it"
_SERVER_UNKNOWN = "safe when server_ignores_unknown_fields"
_DEFAULT_REQ = "safe when default_satisfies_required and the field has a default"
_ENUMS = "safe when extensible_enums"
_ABSENT = "safe when the new schema requires the field (the default is then never used)"

_ALL = [
    RuleDoc("type.widened", "the schema accepts a JSON type it did not", S, B),
    RuleDoc("type.narrowed", "the schema no longer accepts a JSON type it did", B, S),
    RuleDoc("type.changed", "JSON types both added and removed", B, B),
    RuleDoc("nullable.added", "null is now accepted (type list or anyOf with null)", S, B),
    RuleDoc("nullable.removed", "null is no longer accepted", B, S),
    RuleDoc("enum.value-added", "an enum gained values", S, B, _ENUMS),
    RuleDoc("enum.value-removed", "an enum lost values", B, S, _ENUMS),
    RuleDoc("enum.added", "values are now restricted to an enum", B, S),
    RuleDoc("enum.removed", "an enum restriction was dropped", S, B, _ENUMS),
    RuleDoc("const.added", "the value is now fixed by const", B, S),
    RuleDoc("const.removed", "a const restriction was dropped", S, B),
    RuleDoc("const.changed", "const has a different value", B, B),
    RuleDoc("number.minimum-raised", "lower bound raised or added", B, S),
    RuleDoc("number.minimum-lowered", "lower bound lowered or removed", S, B),
    RuleDoc("number.maximum-lowered", "upper bound lowered or added", B, S),
    RuleDoc("number.maximum-raised", "upper bound raised or removed", S, B),
    RuleDoc("number.multipleOf-stricter", "multipleOf added or made a multiple of the old", B, S),
    RuleDoc("number.multipleOf-looser", "multipleOf removed or made a divisor of the old", S, B),
    RuleDoc("number.multipleOf-changed", "multipleOf changed to an unrelated step", B, B),
    RuleDoc("string.minLength-raised", "minLength raised or added", B, S),
    RuleDoc("string.minLength-lowered", "minLength lowered or removed", S, B),
    RuleDoc("string.maxLength-lowered", "maxLength lowered or added", B, S),
    RuleDoc("string.maxLength-raised", "maxLength raised or removed", S, B),
    RuleDoc("string.pattern-added", "pattern added", B, S),
    RuleDoc("string.pattern-removed", "pattern removed", S, B),
    RuleDoc("string.pattern-changed", "pattern changed (regex inclusion is not proven)", B, B),
    RuleDoc("string.format-added", "format added (generated models check formats)", B, S),
    RuleDoc("string.format-removed", "format removed", S, B),
    RuleDoc("string.format-changed", "format changed", B, B),
    RuleDoc("array.minItems-raised", "minItems raised or added", B, S),
    RuleDoc("array.minItems-lowered", "minItems lowered or removed", S, B),
    RuleDoc("array.maxItems-lowered", "maxItems (or a closed tuple) lowered or added", B, S),
    RuleDoc("array.maxItems-raised", "maxItems raised or removed", S, B),
    RuleDoc(
        "array.uniqueItems-added",
        "items must now be unique",
        B,
        S,
        "safe when no two items can be equal (at most one item, or tuple positions of "
        "different types)",
    ),
    RuleDoc("array.uniqueItems-removed", "items need no longer be unique", S, B),
    RuleDoc("object.minProperties-raised", "minProperties raised or added", B, S),
    RuleDoc("object.minProperties-lowered", "minProperties lowered or removed", S, B),
    RuleDoc("object.maxProperties-lowered", "maxProperties lowered or added", B, S),
    RuleDoc("object.maxProperties-raised", "maxProperties raised or removed", S, B),
    RuleDoc("property.added", "an optional property was added", S, S),
    RuleDoc("property.added-required", "a required property was added", B, S, _DEFAULT_REQ),
    RuleDoc(
        "property.added-to-closed",
        "a property was added that the old closed object rejects",
        None,
        S,
        _IGNORE_UNKNOWN,
    ),
    RuleDoc("property.removed", "an optional property was removed", S, S),
    RuleDoc("property.removed-required", "a required property was removed", None, B, _DEFAULT_REQ),
    RuleDoc(
        "property.removed-from-closed",
        "a property was removed from a closed object, which now rejects it",
        B,
        None,
        _SERVER_UNKNOWN,
    ),
    RuleDoc("required.added", "an existing property became required", B, S, _DEFAULT_REQ),
    RuleDoc("required.removed", "a property is no longer required", S, B, _DEFAULT_REQ),
    RuleDoc(
        "object.closed",
        "additionalProperties: false added (or unknown fields constrained)",
        B,
        S,
        _SERVER_UNKNOWN,
    ),
    RuleDoc("object.opened", "additionalProperties: false removed", S, S, _IGNORE_UNKNOWN),
    RuleDoc("pattern-properties.added", "a patternProperties entry was added", S, S),
    RuleDoc("pattern-properties.removed", "a patternProperties entry was removed", S, S),
    RuleDoc(
        "pattern-properties.removed-from-closed",
        "a patternProperties entry was removed from a closed object",
        B,
        None,
        _SERVER_UNKNOWN,
    ),
    RuleDoc(
        "pattern-properties.added-to-closed",
        "a patternProperties entry was added that the old closed object rejects",
        None,
        S,
        _IGNORE_UNKNOWN,
    ),
    RuleDoc("union.branch-added", "a oneOf/anyOf branch was added", S, B),
    RuleDoc("union.branch-removed", "a oneOf/anyOf branch was removed", B, S),
    RuleDoc(
        "oneOf.branch-overlap",
        "a value the writer may send matches several oneOf branches of the reader",
        B,
        B,
    ),
    RuleDoc("schema.now-false", "the schema now accepts nothing", B, S),
    RuleDoc("schema.was-false", "the schema accepted nothing and now accepts values", S, B),
    RuleDoc(
        "schema.too-complex",
        "the schemas are too large or recursive to compare; treated as breaking",
        B,
        B,
    ),
    RuleDoc("keyword.changed", "a keyword envgen does not reason about changed", B, B),
    RuleDoc("default.added", "a default was added", S, S),
    RuleDoc(
        "default.removed",
        "a default was removed; old clients fill in the old one when the field is absent",
        S,
        B,
        _ABSENT,
    ),
    RuleDoc(
        "default.changed",
        "a default changed; old clients fill in the old one when the field is absent",
        S,
        B,
        _ABSENT,
    ),
    RuleDoc("annotation.changed", "title, description, examples or similar changed", S, S),
    RuleDoc("env.added", "a new environment", S, S),
    RuleDoc("tool.added", "a new tool (a tool env's tools/<tool>.json)", S, None),
    RuleDoc("tool.removed", "a tool was removed; clients calling it fail", B, None),
    RuleDoc("tool.output-added", "a tool now declares an output schema", None, S),
    RuleDoc(
        "tool.output-removed",
        "a tool no longer declares an output schema; old clients read its structured result",
        None,
        B,
    ),
    RuleDoc("env.removed", "an environment was removed", B, B),
    RuleDoc("code.class-removed", "a generated class or type alias was removed", C, C),
    RuleDoc("code.class-renamed", "a generated class or type alias was renamed", C, C),
    RuleDoc("code.class-added", "a generated class or type alias was added", S, S),
    RuleDoc("code.attribute-removed", "a generated attribute was removed", C, C),
    RuleDoc("code.attribute-renamed", "a generated attribute has a new Python name", C, C),
    RuleDoc("code.attribute-added", "a generated attribute was added", S, S),
    RuleDoc(
        "code.attribute-now-required",
        "an attribute lost its default, so code that builds the class must pass it",
        C,
        S,
    ),
    RuleDoc(
        "code.type-changed",
        "an attribute's Python type no longer fits how code uses it (built for actions, "
        "read for observations and state)",
        C,
        C,
    ),
    RuleDoc("code.type-changed-compatibly", "an attribute's Python type changed compatibly", S, S),
    RuleDoc("code.method-removed", "a generated tool method was removed", C, C),
    RuleDoc(
        "code.method-renamed",
        "a tool renamed: its method has a new name (its arguments class renamed with it)",
        C,
        C,
    ),
    RuleDoc("code.method-added", "a generated tool method was added", S, S),
    RuleDoc("code.method-result-changed", "a generated tool method returns another type", C, C),
    RuleDoc("code.model-type-changed", "model_type changed (pydantic <-> dataclasses)", C, C),
    RuleDoc("code.generation-failed", "the new schemas do not generate", C, C),
]

RULES: dict[str, RuleDoc] = {rule.id: rule for rule in _ALL}
