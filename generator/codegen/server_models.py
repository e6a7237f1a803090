"""``server.py``'s models: openenv Action/Observation/State subclasses from the same schemas.

Made from the bundle as written, so the server keeps its own objects closed or open exactly
as the schemas say, and always as pydantic models, whatever ``model_type`` the client uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.codegen.datamodel import ROOT_NAME
from generator.codegen.model_call import ModelCall
from generator.codegen.schema_rewrites import (
    DATA_KEYWORDS,
    default_union_tags,
    integral_defaults,
    walk,
)
from generator.schema.loader import EnvInput

SERVER_MODULE = "envgen_runtime.server"
SERVER_BASES = {
    "action": f"{SERVER_MODULE}.ServerAction",
    "observation": f"{SERVER_MODULE}.ServerObservation",
    "state": f"{SERVER_MODULE}.ServerState",
}
# Fields the openenv bases declare themselves; the server models inherit them as they are.
BASE_FIELDS = {
    "action": ("metadata",),
    "observation": ("done", "reward", "metadata"),
    "state": ("episode_id", "step_count"),
}
UNION_SUFFIX = "Union"
OMIT_NONE = "x-envgen-omit-none"
"""Marks an optional property that does not allow null (envgen_runtime.server.OMIT_NONE).

Such a property becomes `x: T | None = None`, like a nullable one; the mark tells the server
models to leave it out while it is None and to publish it without a null branch."""


@dataclass(frozen=True)
class ServerModels:
    """The source of `server.py`'s models and, for a tagged-union action, its union alias."""

    source: str
    union_alias: str | None


def generate_server_models(env: EnvInput, header: str) -> ServerModels:
    """Server-side models (openenv Action/Observation/State subclasses) for `env`.

    Made from the bundle as written: the server keeps its own objects closed or open exactly
    as the schemas say. Always pydantic models, whatever `model_type` the client uses.
    """
    call, union_alias = server_call(env, header)
    return ServerModels(source=call.run(), union_alias=union_alias)


def server_call(env: EnvInput, header: str) -> tuple[ModelCall, str | None]:
    """The model-generator call that makes `generate_server_models`' source, and the union
    alias that source will define for a tagged-union action (else None)."""
    defs = integral_defaults(default_union_tags(env.bundle.defs))
    action = env.class_name("action")
    bases = {env.class_name(role): SERVER_BASES[role] for role in ("observation", "state")}
    for role in ("observation", "state"):
        _drop_base_fields(defs.get(env.class_name(role)), BASE_FIELDS[role])
    members = _union_members(defs, action)
    union_alias: str | None = None
    if members:
        union_alias = _free_name(defs, action + UNION_SUFFIX)
        defs = _rename_def(defs, action, union_alias)
        for member in members:
            bases[member] = SERVER_BASES["action"]
            _drop_base_fields(defs.get(member), BASE_FIELDS["action"])
    else:
        bases[action] = SERVER_BASES["action"]
        _drop_base_fields(defs.get(action), BASE_FIELDS["action"])
    for node in walk(defs):
        _mark_omit_none(node)
    document = env.bundle.document(ROOT_NAME)
    document["$defs"] = defs
    expected = [union_alias or action, env.class_name("observation"), env.class_name("state")]
    call = ModelCall(
        document,
        "pydantic",
        header,
        (*expected, *([env.reset_class] if env.reset_class else [])),
        {
            "base_class": f"{SERVER_MODULE}.ServerModel",
            "base_class_map": bases,
            "field_extra_keys": {OMIT_NONE},
        },
    )
    return call, union_alias


def _mark_omit_none(node: dict[str, Any]) -> None:
    """Mark the optional, default-less properties of an object schema that refuse null."""
    props = node.get("properties")
    if not isinstance(props, dict):
        return
    listed = node.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    for name, prop in props.items():
        optional = isinstance(prop, dict) and name not in required and "default" not in prop
        if optional and not _allows_null(prop):
            prop[OMIT_NONE] = True


def _allows_null(prop: dict[str, Any]) -> bool:
    kind = prop.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in prop and prop["const"] is None:
        return True
    if isinstance(prop.get("enum"), list) and None in prop["enum"]:
        return True
    for key in ("anyOf", "oneOf"):
        branches = prop.get(key)
        if isinstance(branches, list) and any(
            isinstance(b, dict) and _allows_null(b) for b in branches
        ):
            return True
    return False


def _union_members(defs: dict[str, Any], name: str) -> list[str]:
    """The defs a tagged-union role schema's members name (empty when it is not one)."""
    node = defs.get(name)
    if not isinstance(node, dict) or not isinstance(node.get("discriminator"), dict):
        return []
    if isinstance(node.get("properties"), dict) and node["properties"]:
        return []
    members = node.get("oneOf", node.get("anyOf"))
    names: list[str] = []
    for member in members if isinstance(members, list) else []:
        ref = member.get("$ref") if isinstance(member, dict) else None
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            return []  # an inline member has no class of its own to subclass ServerAction
        names.append(ref.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~"))
    return names


def _drop_base_fields(node: Any, fields: tuple[str, ...]) -> None:
    if not isinstance(node, dict) or not isinstance(node.get("properties"), dict):
        return
    for name in fields:
        node["properties"].pop(name, None)
    if isinstance(node.get("required"), list):
        node["required"] = [n for n in node["required"] if n not in fields]


def _free_name(defs: dict[str, Any], name: str) -> str:
    candidate, n = name, 2
    while candidate in defs:
        candidate, n = f"{name}{n}", n + 1
    return candidate


def _rename_def(defs: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """`defs` with `old` renamed to `new`, every `$ref` to it rewritten."""
    old_ref = "#/$defs/" + old.replace("~", "~0").replace("/", "~1")
    new_ref = "#/$defs/" + new.replace("~", "~0").replace("/", "~1")

    def rewrite(node: Any) -> Any:
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        if not isinstance(node, dict):
            return node
        return {
            k: v
            if k in DATA_KEYWORDS
            else (new_ref if k == "$ref" and v == old_ref else rewrite(v))
            for k, v in node.items()
        }

    renamed = {new if key == old else key: rewrite(value) for key, value in defs.items()}
    return {key: renamed[key] for key in sorted(renamed)}
