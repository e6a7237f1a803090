"""Typed models for one environment, made in process by datamodel-code-generator.

The bundled schema goes in as text (no paths, no timestamps), so the output depends only on
the schema content and the pinned generator. Two adjustments are made around the generator:
objects the server writes (observation and state) are opened up so that unknown fields are
kept rather than rejected, and the placeholder root class the generator makes for the bundle
is cut out of the module.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Any

from generator.errors import GenerationError
from generator.field_names import fix_folded_names
from generator.loader import EnvInput
from generator.tuple_defaults import fix_tuple_defaults

ROOT_NAME = "EnvgenBundleRoot"
PYDANTIC_BASE = "envgen_runtime.EnvModel"

_CLOSING = ("additionalProperties", "unevaluatedProperties")
_DATA = ("enum", "const", "default", "examples")


def generate_models(env: EnvInput, header: str) -> str:
    """Return the source of `models.py` (not yet formatted) for `env`."""
    defs = integral_defaults(default_union_tags(_open_reader_objects(env)))
    document = env.bundle.document(ROOT_NAME)
    document["$defs"] = defs
    source = _run_generator(document, env.manifest.model_type, header)
    source = fix_folded_names(fix_tuple_defaults(_cut_root(source)))
    _check_defines(source, [*_role_classes(env), *_reset_class(env)])
    return source


def _role_classes(env: EnvInput) -> list[str]:
    return [env.class_name(role) for role in ("action", "observation", "state")]


def _reset_class(env: EnvInput) -> list[str]:
    return [env.reset_class] if env.reset_class else []


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
    for node in _walk(defs):
        _mark_omit_none(node)
    document = env.bundle.document(ROOT_NAME)
    document["$defs"] = defs
    options = {
        "base_class": f"{SERVER_MODULE}.ServerModel",
        "base_class_map": bases,
        "field_extra_keys": {OMIT_NONE},
    }
    source = _run_generator(document, "pydantic", header, **options)
    source = fix_folded_names(fix_tuple_defaults(_cut_root(source)))
    expected = [union_alias or action, env.class_name("observation"), env.class_name("state")]
    _check_defines(source, [*expected, *_reset_class(env)])
    return ServerModels(source=source, union_alias=union_alias)


@dataclass(frozen=True)
class EnvModels:
    """The model generator's part of one env: `models.py`'s source and `server.py`'s models."""

    client: str
    server: ServerModels


def generate_env_models(env: EnvInput, client_header: str, server_header: str) -> EnvModels:
    """Both model modules of `env`: all the model generator does for it, in one call."""
    return EnvModels(
        client=generate_models(env, client_header),
        server=generate_server_models(env, server_header),
    )


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
            k: v if k in _DATA else (new_ref if k == "$ref" and v == old_ref else rewrite(v))
            for k, v in node.items()
        }

    renamed = {new if key == old else key: rewrite(value) for key, value in defs.items()}
    return {key: renamed[key] for key in sorted(renamed)}


def _run_generator(document: dict[str, Any], model_type: str, header: str, **extra: Any) -> str:
    # Imported here: the generator is heavy and only `generate` needs it.
    from datamodel_code_generator import generate
    from datamodel_code_generator.enums import DataModelType, InputFileType
    from datamodel_code_generator.format import PythonVersion
    from datamodel_code_generator.parser import LiteralType

    options: dict[str, Any] = dict(extra)
    if model_type == "pydantic":
        options["output_model_type"] = DataModelType.PydanticV2BaseModel
        options.setdefault("base_class", PYDANTIC_BASE)
    else:
        options["output_model_type"] = DataModelType.PydanticV2Dataclass
    try:
        result = generate(
            document,
            input_file_type=InputFileType.JsonSchema,
            input_filename="bundle.json",
            class_name=ROOT_NAME,
            target_python_version=PythonVersion.PY_311,
            disable_timestamp=True,
            custom_file_header=header,
            formatters=[],
            use_annotated=True,
            field_constraints=True,
            use_standard_collections=True,
            use_union_operator=True,
            use_type_alias=True,
            collapse_root_models=True,
            enum_field_as_literal=LiteralType.All,
            use_field_description=True,
            use_schema_description=True,
            use_double_quotes=True,
            strict_nullable=True,
            **options,
        )
    except Exception as exc:  # the generator raises many types; report them as one
        raise GenerationError(f"datamodel-code-generator failed: {exc}") from exc
    if not isinstance(result, str):
        raise GenerationError("datamodel-code-generator returned no single module")
    return result


_WARM_UP_DOCUMENT: dict[str, Any] = {
    "title": ROOT_NAME,
    "type": "object",
    "properties": {"item": {"$ref": "#/$defs/Item"}},
    "$defs": {
        "Item": {
            "type": "object",
            "description": "An item.",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "A name."},
                "kind": {"enum": ["a", "b"], "default": "a"},
                "tags": {"type": "array", "items": {"type": "number"}},
                "note": {"type": ["string", "null"]},
            },
        }
    },
}


def warm_up() -> None:
    """Import the model generator and make its first call, on a small schema.

    Its first call imports and builds most of it (about two thirds of its cost to a run
    that renders one env); a process that renders later pays that ahead of time.
    """
    _run_generator(copy.deepcopy(_WARM_UP_DOCUMENT), "pydantic", "")


def _open_reader_objects(env: EnvInput) -> dict[str, Any]:
    """Defs reachable from the observation or state schema stop rejecting unknown fields.

    The server writes those objects and may add fields before its schema says so; the client
    keeps them (reachable through `model_extra`) instead of failing. Defs reachable only from
    the action keep `additionalProperties: false`, so bad actions fail before they are sent.
    """
    defs = copy.deepcopy(env.bundle.defs)
    readers = [env.class_name("observation"), env.class_name("state")]
    for name in _reachable(defs, readers):
        defs[name] = _strip_closing(defs[name])
    return defs


def default_union_tags(defs: dict[str, Any]) -> dict[str, Any]:
    """Each member of a tagged union gets its fixed tag as the tag field's default.

    `Play(card=3)` then needs no `kind="play"`: the tag is still a `Literal` (a wrong value
    is rejected) and, not being a `None` default, is still sent on the wire. The schema
    keeps the tag required; only the model's constructor stops asking for it.
    """
    defs = copy.deepcopy(defs)
    for node in _walk(defs):
        tag = (
            node.get("discriminator", {}).get("propertyName")
            if isinstance(node.get("discriminator"), dict)
            else None
        )
        if not isinstance(tag, str):
            continue
        for key in ("oneOf", "anyOf"):
            for member in node.get(key, []) if isinstance(node.get(key), list) else []:
                _default_tag(_deref(defs, member), tag)
    return defs


def integral_defaults(defs: dict[str, Any]) -> dict[str, Any]:
    """An integer field's default written `2.0` (the same JSON integer) becomes `2`.

    JSON Schema counts 2.0 as an integer; Python's `x: int = 2.0` fails `mypy --strict`.
    """
    defs = copy.deepcopy(defs)
    for node in _walk(defs):
        declared = node.get("type")
        types = declared if isinstance(declared, list) else [declared]
        value = node.get("default")
        if not (isinstance(value, float) and value.is_integer()):
            continue
        if "integer" in types and "number" not in types:
            node["default"] = int(value)
    return defs


def _walk(node: Any) -> list[dict[str, Any]]:
    """Every schema object under `node` (data keywords skipped), parents first."""
    found: list[dict[str, Any]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            found.append(current)
            stack.extend(v for k, v in current.items() if k not in _DATA)
        elif isinstance(current, list):
            stack.extend(current)
    return found


def _deref(defs: dict[str, Any], member: Any) -> Any:
    """The schema a union member stands for: a local `$ref` (chains too) or the member."""
    seen: set[str] = set()
    while isinstance(member, dict) and isinstance(member.get("$ref"), str):
        ref = member["$ref"]
        if not ref.startswith("#/$defs/") or ref in seen:
            break
        seen.add(ref)
        member = defs.get(ref.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~"))
    return member


def _default_tag(member: Any, tag: str) -> None:
    if not isinstance(member, dict) or not isinstance(member.get("properties"), dict):
        return
    prop = member["properties"].get(tag)
    if not isinstance(prop, dict) or ("default" in prop and prop["default"] != _fixed(prop)):
        return
    value = _fixed(prop)
    if not isinstance(value, str | int | bool):
        return
    prop["default"] = value
    required = member.get("required")
    if isinstance(required, list) and tag in required:
        member["required"] = [name for name in required if name != tag]


def _fixed(prop: dict[str, Any]) -> Any:
    """The one value a tag property allows (`const`, or a one-value `enum`), else None."""
    if "const" in prop:
        return prop["const"]
    enum = prop.get("enum")
    if isinstance(enum, list) and len(enum) == 1:
        return enum[0]
    return None


def _reachable(defs: dict[str, Any], roots: list[str]) -> list[str]:
    seen: list[str] = []
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in defs:
            continue
        seen.append(name)
        stack.extend(_refs(defs[name]))
    return sorted(seen)


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                found.append(value.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~"))
            elif key not in ("enum", "const", "default", "examples"):
                found.extend(_refs(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_refs(item))
    return found


def _strip_closing(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip_closing(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        key: value if key in ("enum", "const", "default", "examples") else _strip_closing(value)
        for key, value in node.items()
        if not (key in _CLOSING and value is False)
    }


def _cut_root(source: str) -> str:
    """Remove the placeholder class (or alias) the generator made for the bundle's root."""
    tree = _parse(source)
    lines = source.splitlines(keepends=True)
    for node in tree.body:
        if _defines(node) == ROOT_NAME:
            start = node.lineno - 1
            if isinstance(node, ast.ClassDef) and node.decorator_list:
                start = node.decorator_list[0].lineno - 1
            end = node.end_lineno or node.lineno
            return "".join(lines[:start] + lines[end:])
    return source


def defined_names(source: str) -> list[str]:
    """Public top-level classes and aliases of a generated module, sorted."""
    names = {_defines(node) for node in _parse(source).body}
    return sorted(n for n in names if n and not n.startswith("_"))


def _check_defines(source: str, names: list[str]) -> None:
    defined = {_defines(node) for node in _parse(source).body}
    missing = [n for n in names if n not in defined]
    if missing:
        raise GenerationError(
            "generated models lack " + ", ".join(missing) + " (a schema name collides with "
            "them; rename the clashing $defs entry)"
        )


def _defines(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Name):
            return target.id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise GenerationError(f"generated models do not parse: {exc}") from exc
