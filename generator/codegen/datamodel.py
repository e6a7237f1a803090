"""datamodel-code-generator, run in process, and the surgery every model module it makes gets.

The bundled schema goes in as text (no paths, no timestamps), so the output depends only on
the schema content and the pinned generator. The placeholder root class the generator makes
for the bundle is cut out, and names and defaults Python would misread are mended
(``field_names``, ``tuple_defaults``).
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from generator.codegen.field_names import fix_field_names
from generator.codegen.source_text import SourceText
from generator.codegen.tuple_defaults import fix_tuple_defaults
from generator.errors import GenerationError

ROOT_NAME = "EnvgenBundleRoot"
PYDANTIC_BASE = "envgen_runtime.EnvModel"


def generate_module(
    document: dict[str, Any], model_type: str, header: str, expected: list[str], **extra: Any
) -> str:
    """The source of one model module for ``document`` (a bundle), which must define
    ``expected``: generated, its root cut, its names and tuple defaults mended."""
    source = run_generator(document, model_type, header, **extra)
    source = fix_field_names(fix_tuple_defaults(_cut_root(source)))
    _check_defines(source, expected)
    return source


def run_generator(document: dict[str, Any], model_type: str, header: str, **extra: Any) -> str:
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
                "parts": {  # an inline item object: its class is named by singularizing
                    "type": "array",
                    "items": {"type": "object", "properties": {"at": {"$ref": "#/$defs/Pair"}}},
                },
            },
        },
        "Pair": {  # a constrained alias: a TypeAliasType
            "type": "array",
            "items": {"type": "integer", "minimum": 0},
            "minItems": 2,
            "maxItems": 2,
        },
    },
}
"""A schema whose call loads what real schemas' calls commonly need (the generator loads
some parts on first use only: its inflect copy, its type alias template)."""


def warm_up() -> None:
    """Import the model generator and make its first call, on a small schema.

    Its first call imports and builds most of it (about two thirds of its cost to a run
    that renders one env); a process that renders later pays that ahead of time.
    """
    run_generator(copy.deepcopy(_WARM_UP_DOCUMENT), "pydantic", "")


def _cut_root(source: str) -> str:
    """Remove the placeholder class (or alias) the generator made for the bundle's root."""
    tree = _parse(source)
    for node in tree.body:
        if _defines(node) == ROOT_NAME:
            first = node.lineno
            if isinstance(node, ast.ClassDef) and node.decorator_list:
                first = node.decorator_list[0].lineno
            text = SourceText(source)
            start, end = text.line_start(first), text.line_start((node.end_lineno or first) + 1)
            return text.replace([(start, end, "")])
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
