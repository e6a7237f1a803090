"""Defaults written as the annotation's type: JSON arrays become tuples where a tuple is due.

JSON has no tuples, so datamodel-code-generator writes a `prefixItems` default as a list:
`location: tuple[float, float, float] = [0.0, 0.0, 0.0]`, which pydantic accepts but
`mypy --strict` rejects. Each field default (plain, `Field(default=...)` or a
`default_factory` lambda) is rewritten against its annotation, at any depth: tuples in
tuples, in lists, in dict values, behind type aliases, `Annotated` and unions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from generator.codegen.source_text import SourceText

_SEQUENCES = {"list", "List", "Sequence", "MutableSequence"}
_MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}


@dataclass(frozen=True)
class _Shape:
    """Where tuples are due in a type: `kind` is tuple, list, dict, union, float or leaf."""

    kind: str
    parts: tuple[_Shape, ...] = ()
    variadic: bool = False  # tuple[T, ...]


_LEAF = _Shape("leaf")
# Inside a container an int literal is widened: a `default_factory` lambda gives mypy no
# context, so `lambda: [(1, 2)]` would not be a `list[tuple[float, float]]`.
_FLOAT = _Shape("float")


def fix_tuple_defaults(source: str) -> str:
    """`source` with every list default that a tuple annotation expects written as a tuple."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    edits: list[tuple[ast.expr, ast.expr]] = []
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                shape = _shape(stmt.annotation, aliases, frozenset())
                if shape.kind != "float" and shape != _LEAF:
                    edits.extend(_default_edits(stmt.value, shape))
    if not edits:
        return source
    text = SourceText(source)
    return text.replace((*text.span(old), ast.unparse(new)) for old, new in edits)


def _default_edits(value: ast.expr, shape: _Shape) -> list[tuple[ast.expr, ast.expr]]:
    """(old node, new node) for the default in `value`, wherever the generator put it."""
    targets: list[ast.expr] = [value]
    if isinstance(value, ast.Call) and _name(value.func) in ("Field", "field"):
        targets = []
        for keyword in value.keywords:
            if keyword.arg == "default":
                targets.append(keyword.value)
            elif keyword.arg == "default_factory" and isinstance(keyword.value, ast.Lambda):
                targets.append(keyword.value.body)
    edits = []
    for target in targets:
        new = _convert(target, shape)
        if new is not None and ast.dump(new) != ast.dump(target):
            edits.append((target, new))
    return edits


def _aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level type aliases: `X = TypeAliasType("X", T)`, `X: TypeAlias = T`, `X = T`."""
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            value = node.value
            if not isinstance(target, ast.Name):
                continue
            if isinstance(value, ast.Call) and _name(value.func) == "TypeAliasType":
                if len(value.args) >= 2:
                    found[target.id] = value.args[1]
            else:
                found[target.id] = value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            found[node.target.id] = node.value
    return found


def _shape(node: ast.expr, aliases: dict[str, ast.expr], seen: frozenset[str]) -> _Shape:
    if isinstance(node, ast.Name):
        if node.id == "float":
            return _FLOAT
        if node.id in aliases and node.id not in seen:
            return _shape(aliases[node.id], aliases, seen | {node.id})
        return _LEAF
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([_shape(side, aliases, seen) for side in (node.left, node.right)])
    if not isinstance(node, ast.Subscript):
        return _LEAF
    outer = _name(node.value)
    args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if outer == "Annotated":
        return _shape(args[0], aliases, seen)
    if outer == "Optional":
        return _union([_shape(args[0], aliases, seen), _LEAF])
    if outer == "Union":
        return _union([_shape(arg, aliases, seen) for arg in args])
    if outer in ("tuple", "Tuple"):
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
            return _Shape("tuple", (_shape(args[0], aliases, seen),), variadic=True)
        return _Shape("tuple", tuple(_shape(arg, aliases, seen) for arg in args))
    if outer in _SEQUENCES:
        return _Shape("list", (_shape(args[0], aliases, seen),))
    if outer in _MAPPINGS and len(args) == 2:
        return _Shape("dict", (_shape(args[1], aliases, seen),))
    return _LEAF


def _union(members: list[_Shape]) -> _Shape:
    flat: list[_Shape] = []
    for member in members:
        flat.extend(member.parts if member.kind == "union" else [member])
    return (
        _Shape("union", tuple(flat))
        if any(m.kind not in ("leaf", "float") for m in flat)
        else _LEAF
    )


def _convert(value: ast.expr, shape: _Shape) -> ast.expr | None:
    """`value` rewritten for `shape`, or None when it does not fit that shape."""
    if shape.kind == "leaf":
        return value
    if shape.kind == "float":
        number = value.operand if isinstance(value, ast.UnaryOp) else value
        if isinstance(number, ast.Constant) and type(number.value) is int:
            return ast.copy_location(ast.Constant(float(ast.literal_eval(value))), value)
        return value
    if shape.kind == "union":
        # Containers first: a leaf member (say `None` or `int`) fits anything unchanged.
        for member in sorted(shape.parts, key=lambda m: m.kind in ("leaf", "float")):
            converted = _convert(value, member)
            if converted is not None:
                return converted
        return None
    if shape.kind == "dict":
        if not isinstance(value, ast.Dict):
            return None
        values = [_convert(v, shape.parts[0]) or v for v in value.values]
        return ast.Dict(keys=value.keys, values=values)
    if not isinstance(value, ast.List | ast.Tuple):
        return None
    if shape.kind == "list":
        return ast.List(elts=[_convert(e, shape.parts[0]) or e for e in value.elts])
    items = shape.parts * len(value.elts) if shape.variadic else shape.parts
    if len(items) != len(value.elts):
        return None
    elements = [_convert(e, s) for e, s in zip(value.elts, items, strict=True)]
    fitting = [e for e in elements if e is not None]
    return ast.Tuple(elts=fitting) if len(fitting) == len(elements) else None


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
