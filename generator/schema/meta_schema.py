"""A fast yes/no check against the JSON Schema 2020-12 meta-schema, for the common case.

The published meta-schema is seven vocabulary documents joined by `allOf`, recursing through
`$dynamicRef: "#meta"`; jsonschema resolves each dynamic reference by walking the dynamic
scope, which made checking the schemas most of the time it takes to load an env. When the
meta-schema validates a schema, every `#meta` resolves to the top meta-schema, so the same
rules in one document with plain `$ref: "#"` accept exactly the same documents, several
times faster. A document it rejects is checked again the slow way, which finds the error
message and the pointer to report: only the verdict comes from here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

_BASE = "https://json-schema.org/draft/2020-12/"
VOCABULARIES = (
    "core",
    "applicator",
    "unevaluated",
    "validation",
    "meta-data",
    "format-annotation",
    "content",
)
_VOCABULARY_KEYS = {"$defs", "$dynamicAnchor", "$id", "$schema", "$vocabulary"}
_VOCABULARY_KEYS |= {"properties", "title", "type"}


def _local(node: Any) -> Any:
    """`node` with `#meta` dynamic references and refs into the vocabularies made local."""
    if isinstance(node, list):
        return [_local(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node == {"$dynamicRef": "#meta"}:
        return {"$ref": "#"}
    return {
        key: "#" + value.split("#", 1)[1]
        if key == "$ref" and isinstance(value, str) and "#" in value
        else _local(value)
        for key, value in node.items()
    }


def flattened_meta_schema() -> dict[str, Any]:
    """The 2020-12 meta-schema's rules in one document, recursing through `$ref: "#"`."""
    top = Draft202012Validator.META_SCHEMA
    flat: dict[str, Any] = {"type": ["object", "boolean"], "properties": {}, "$defs": {}}
    for name in VOCABULARIES:
        vocabulary = REGISTRY.contents(_BASE + "meta/" + name)
        unexpected = set(vocabulary) - _VOCABULARY_KEYS
        if unexpected or vocabulary.get("type") != flat["type"]:  # a new jsonschema release
            raise RuntimeError(f"meta/{name} has keywords this flattening does not know")
        for key in ("properties", "$defs"):
            clash = set(flat[key]) & set(vocabulary.get(key, {}))
            if clash:
                raise RuntimeError(f"meta/{name} redefines {sorted(clash)}")
            flat[key].update(_local(vocabulary.get(key, {})))
    flat["properties"].update(_local(top["properties"]))
    return flat


@cache
def _validator() -> Validator:
    return Draft202012Validator(flattened_meta_schema())


def is_valid_2020_12(doc: Any) -> bool:
    """Whether the JSON Schema 2020-12 meta-schema accepts `doc`."""
    return _validator().is_valid(doc)
