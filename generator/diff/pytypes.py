"""Is one generated Python annotation usable where another was?

Generated annotations are small: unions, `None`, `Literal[...]`, builtin scalars, generic
containers, model classes, `Annotated[...]` (whose metadata is validation, not typing). They
are parsed into sets of atoms and compared the way a type checker would for code that builds
values (actions) or reads them (observations, state). Containers are compared covariantly:
code reads them as sequences and builds them from literals.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

Atom = tuple[Any, ...]
PyType = frozenset[Atom]

_ANY: Atom = ("any",)
_NONE: Atom = ("none",)
_NUMERIC = {"bool": 0, "int": 1, "float": 2}


def parse(node: ast.expr | None) -> PyType:
    if node is None:
        return frozenset({_ANY})
    if isinstance(node, ast.Constant):
        if node.value is None:
            return frozenset({_NONE})
        if isinstance(node.value, str):
            try:
                return parse(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return frozenset({("name", node.value)})
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return parse(node.left) | parse(node.right)
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value).rsplit(".", 1)[-1]
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Annotated":
            return parse(args[0])
        if head == "Optional":
            return parse(args[0]) | {_NONE}
        if head == "Union":
            out: PyType = frozenset()
            for arg in args:
                out |= parse(arg)
            return out
        if head == "Literal":
            return frozenset(_literal(arg) for arg in args)
        return frozenset({("gen", head, tuple(parse(arg) for arg in args))})
    text = ast.unparse(node).rsplit(".", 1)[-1]
    if text == "Any":
        return frozenset({_ANY})
    return frozenset({("name", text)})


def _literal(node: ast.expr) -> Atom:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return ("name", ast.unparse(node))
    return ("lit", type(value).__name__, repr(value))


def is_subtype(a: PyType, b: PyType, renames: Mapping[str, str]) -> bool:
    """Every value of `a` is a value of `b` (old class names mapped through `renames`)."""
    return all(any(_atom_sub(x, y, renames) for y in b) for x in a)


def _atom_sub(x: Atom, y: Atom, renames: Mapping[str, str]) -> bool:
    if x == _ANY or y == _ANY:
        return True
    if x[0] == "name" and y[0] == "name":
        left, right = renames.get(str(x[1]), str(x[1])), str(y[1])
        if left == right:
            return True
        return left in _NUMERIC and right in _NUMERIC and _NUMERIC[left] <= _NUMERIC[right]
    if x[0] == "lit":
        if y[0] == "lit":
            return x == y or (x[2] == y[2] and x[1] in _NUMERIC and y[1] in _NUMERIC)
        if y[0] == "name":
            return _atom_sub(("name", x[1]), y, renames)
        return False
    if x[0] == "gen" and y[0] == "gen":
        if x[1] != y[1] or len(x[2]) != len(y[2]):
            return False
        pairs = zip(x[2], y[2], strict=True)
        return all(is_subtype(p, q, renames) for p, q in pairs)
    return x == y
