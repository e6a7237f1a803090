"""The generated `reset()` signature: one typed keyword argument per reset parameter.

The parameters come from the reset parameters model that datamodel-code-generator made for
`reset.schema.json`, read back from its source with `ast`, so the argument types are exactly
the model's field types (constraints stripped: the model still checks them before anything
is sent). Everything written into the client is re-rendered from the syntax tree, never
copied from schema text; descriptions only reach the docstring through the `docstring` filter.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any

from generator.errors import GenerationError
from generator.schema.loader import EnvInput

# Names an argument type may use in client.py besides model names: builtins need no import,
# these come from `typing`.
_BUILTINS = {"int", "float", "str", "bool", "list", "dict", "tuple", "set", "frozenset", "None"}
TYPING_NAMES = ("Any", "Literal")


@dataclass(frozen=True)
class ResetParam:
    """One keyword argument of the generated `reset()`."""

    name: str  # the Python argument name (the model's field name)
    wire: str  # the key sent on the wire
    annotation: str  # Python source of the argument's type
    default: str | None  # Python source of its default; None: the argument is required
    sent_unless: str | None  # the default it is compared with before sending (None: always)
    doc: str  # one docstring line: name, default and the schema's description


@dataclass(frozen=True)
class ResetSignature:
    """What client.py needs for a typed `reset()`."""

    model: str
    params: list[ResetParam]
    model_imports: list[str]  # names of models.py the argument types use
    typing_imports: list[str]  # names of `typing` they use (`Literal as Literal_aliased`
    # where models.py has a model of that name)


def reset_signature(models_source: str, model: str, schema: dict[str, Any]) -> ResetSignature:
    """Read the fields of class `model` in `models_source` into `reset()` arguments."""
    tree = ast.parse(models_source)
    cls = _find_class(tree, model)
    known = _top_level_names(tree)
    aliases = _import_aliases(tree)
    # A name models.py also defines (a model called `Literal`) cannot be unaliased: client.py
    # imports that model too. A `typing` one keeps its alias (`Literal as Literal_aliased`);
    # a builtin one is left unknown, so the argument falls back to `Any`.
    renamed = {alias: name for alias, name in aliases.items() if name not in known}
    kept = {alias: name for alias, name in aliases.items() if name in known}
    kept = {alias: name for alias, name in kept.items() if name in TYPING_NAMES}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    params: list[ResetParam] = []
    model_imports: set[str] = set()
    typing_imports: set[str] = set()
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        name = node.target.id
        if name == "model_config":
            continue
        annotation, alias = _strip_annotated(node.annotation)
        annotation = _unalias(annotation, renamed)
        wire = alias or name
        names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
        unknown = names - _BUILTINS - set(TYPING_NAMES) - known - kept.keys()
        if unknown:
            annotation = ast.Name("Any")  # a pydantic type client.py cannot import cleanly
            names = {"Any"}
        model_imports |= names & known
        typing_imports |= names & set(TYPING_NAMES) - known
        typing_imports |= {f"{kept[alias]} as {alias}" for alias in names & kept.keys()}
        if node.value is not None:
            model_imports |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} & known
        prop = props.get(wire, {}) if isinstance(props, dict) else {}
        params.append(_param(name, wire, annotation, node.value, prop))
    # Required arguments first: Python needs no order among keyword-only ones, readers do.
    params.sort(key=lambda p: p.default is not None)
    return ResetSignature(
        model=model,
        params=params,
        model_imports=sorted(model_imports),
        typing_imports=sorted(typing_imports),
    )


def _param(
    name: str, wire: str, annotation: ast.expr, value: ast.expr | None, prop: Any
) -> ResetParam:
    prop = prop if isinstance(prop, dict) else {}
    text = ast.unparse(annotation)
    description = " ".join(str(prop.get("description", "")).split())
    if value is None:
        default, compare, shown = None, None, "required"
    elif _is_literal(value):
        default = compare = ast.unparse(value)
        shown = f"default {json.dumps(prop['default'])}" if "default" in prop else "optional"
    else:  # a mutable or computed default: left to the server unless given
        text = f"{text} | None" if "None" not in text else text
        default = compare = "None"
        shown = f"default {json.dumps(prop.get('default'))}"
    doc = f"{name} ({shown})" + (f": {description}" if description else "")
    return ResetParam(name, wire, text, default, compare, doc)


def _is_literal(node: ast.expr) -> bool:
    """A default that is safe and cheap to repeat in a signature: constants and enum members."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Tuple):
        return all(_is_literal(e) for e in node.elts)
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)


def _strip_annotated(node: ast.expr) -> tuple[ast.expr, str | None]:
    """The type inside every `Annotated[T, Field(...)]`, and the outer field's alias if any."""
    alias: str | None = None
    if _is_annotated(node):
        assert isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple)
        for extra in node.slice.elts[1:]:
            if isinstance(extra, ast.Call):
                for kw in extra.keywords:
                    if kw.arg == "alias" and isinstance(kw.value, ast.Constant):
                        alias = str(kw.value.value)

    class Strip(ast.NodeTransformer):
        def visit_Subscript(self, sub: ast.Subscript) -> ast.AST:
            if _is_annotated(sub):
                assert isinstance(sub.slice, ast.Tuple)
                inner: ast.AST = self.visit(sub.slice.elts[0])
                return inner
            self.generic_visit(sub)
            return sub

    stripped = Strip().visit(ast.parse(ast.unparse(node), mode="eval").body)
    if not isinstance(stripped, ast.expr):
        raise GenerationError("reset parameter type did not parse back")
    return stripped, alias


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """Builtins and `typing` names models.py imports under another name, by that name.

    datamodel-code-generator writes `from builtins import int as int_aliased` where a field
    is named `int`; client.py, whose reset() arguments shadow nothing, uses `int` itself.
    """
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in ("builtins", "typing"):
            for alias in node.names:
                usable = _BUILTINS if node.module == "builtins" else set(TYPING_NAMES)
                if alias.asname and alias.name in usable:
                    found[alias.asname] = alias.name
    return found


def _unalias(annotation: ast.expr, renamed: dict[str, str]) -> ast.expr:
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id in renamed:
            node.id = renamed[node.id]
    return annotation


def _is_annotated(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Annotated"
        and isinstance(node.slice, ast.Tuple)
    )


def _find_class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise GenerationError(f"generated models lack the reset parameters class {name}")


def _top_level_names(tree: ast.Module) -> set[str]:
    """Classes and aliases models.py defines (what client.py may import from it)."""
    found: set[str] = set()
    for node in tree.body:  # private names (`_x`) are never imported by client.py
        if isinstance(node, ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    return {name for name in found if not name.startswith("_")}


def reset_context(env: EnvInput, models_source: str) -> dict[str, Any]:
    """Template context for client.py: `reset` is None when the env has no reset schema."""
    model = env.reset_class
    if model is None:
        return {"reset": None}
    signature = reset_signature(models_source, model, env.bundle.defs.get(model, {}))
    listing = "\n".join(f"- {p.doc}" for p in signature.params)
    tail = (
        f"\n\nReset parameters ({model}), validated before anything is sent;\n"
        f"those left at their default are not sent:\n\n{listing}"
    )
    return {
        "reset": signature,
        "reset_doc": "Start a new episode (see ``EnvClient.reset``)." + tail,
        "pool_reset_doc": "Start new episodes in ``slots`` (see ``AsyncEnvPool.reset``)." + tail,
    }
