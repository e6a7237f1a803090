"""Field names Python would misread get a name of their own and keep their wire name as alias.

A property name reaches a class body as written, and three things can go wrong there:

- Python folds identifiers to Unicode NFKC (PEP 3131), so a property written `ﬁ` becomes the
  attribute `fi`: its wire name is lost, and beside a real `fi` one field replaces the other.
- A field named like another field once folded (or by datamodel-code-generator's own
  renaming: `int` becomes `int_` beside a real `int_`) replaces it.
- A field named like a name the module's annotations use (`int`, `Field`, `Annotated`, a
  model's name) shadows it in the class namespace, where pydantic and mypy read those
  annotations: the import fails (`'NoneType' object is not callable`). A field named like a
  builtin type is renamed even where no annotation uses that type yet, so that its Python
  name stays the same when a type changes.

Each such field is renamed to its folded form plus `_` (unique within its class and clear of
every name the module uses; `field_` first where pydantic reserves the prefix, as in
`model_dump_`) and keeps its wire name as a pydantic alias.
"""

from __future__ import annotations

import ast

from generator.codegen.source_text import SourceText

# Where the alias wrapping's two names come from: (local name wanted, modules, name).
_ANNOTATED = ("Annotated", ("typing", "typing_extensions"), "Annotated")
_FIELD = ("Field", ("pydantic",), "Field")
# Builtin types generated annotations may name. A field named like one is renamed whether or
# not this module's annotations use it today, so its Python name does not change with types.
_TYPE_NAMES = frozenset({"bool", "bytes", "dict", "float", "int", "list", "set", "str", "tuple"})
# Prefixes pydantic warns about in a field name (its protected namespaces), even with a `_`.
_PROTECTED = ("model_dump", "model_validate")


def fix_field_names(source: str) -> str:
    """`source` with every class field Python would fold or read as another name renamed
    and aliased to its wire name."""
    tree = ast.parse(source)
    text = SourceText(source)
    bound = _module_bindings(tree)
    annotated, annotated_import = _imported_as(tree, bound, *_ANNOTATED)
    field, field_import = _imported_as(tree, bound, *_FIELD)
    used = _loaded_names(tree) | {annotated, field} | _TYPE_NAMES
    edits: list[tuple[int, int, str]] = []
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        fields = [
            (stmt, stmt.target, text.segment(stmt.target))
            for stmt in cls.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
        ]
        renamed, taken = _misread(fields, used)
        for stmt, target, written in renamed:
            name = _unique(target.id, taken)
            taken.add(name)
            edits.append((*text.span(target), name))
            if not _has_alias(stmt):
                ann = text.segment(stmt.annotation)
                wrapped = f"{annotated}[{ann}, {field}(alias={written!r})]"
                edits.append((*text.span(stmt.annotation), wrapped))
    if not edits:
        return source
    fixed = text.replace(edits)
    needed = [line for line in (annotated_import, field_import) if line is not None]
    return _add_imports(fixed, needed) if needed else fixed


_Field = tuple[ast.AnnAssign, ast.Name, str]  # the statement, its target, the name as written


def _misread(fields: list[_Field], used: set[str]) -> tuple[list[_Field], set[str]]:
    """The fields of one class that need a new name, and the names the others keep (with
    `used`: what a new name must avoid). The first of two same-named fields keeps its name."""
    kept: set[str] = set()
    renamed: list[_Field] = []
    for stmt, target, written in fields:
        clash = target.id in used or target.id in kept or target.id.startswith(_PROTECTED)
        if written != target.id or clash:
            renamed.append((stmt, target, written))
        else:
            kept.add(target.id)
    return renamed, used | kept


def _unique(folded: str, taken: set[str]) -> str:
    base = f"field_{folded}" if folded.startswith(_PROTECTED) else folded
    name = f"{base}_"
    counter = 2
    while name in taken:
        name = f"{base}_{counter}"
        counter += 1
    return name


def _has_alias(stmt: ast.AnnAssign) -> bool:
    """Whether the field already names its wire key (an `alias=` in a Field call)."""
    nodes = [stmt.annotation, *([stmt.value] if stmt.value is not None else [])]
    return any(
        isinstance(node, ast.Call) and any(k.arg == "alias" for k in node.keywords)
        for root in nodes
        for node in ast.walk(root)
    )


def _loaded_names(tree: ast.Module) -> set[str]:
    """Every name the module reads: in annotations, defaults, decorators, bases, aliases."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _module_bindings(tree: ast.Module) -> list[str]:
    """Each top-level binding's name, once per binding (a name bound twice is listed twice)."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.extend(alias.asname or alias.name.split(".")[0] for alias in node.names)
    return names


def _imported_as(
    tree: ast.Module, bound: list[str], wanted: str, modules: tuple[str, ...], name: str
) -> tuple[str, str | None]:
    """The local name `modules`' `name` is imported as (bound once, so nothing replaces it),
    and None; or a free name for it and the import line that binds it."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in modules:
            for alias in node.names:
                local = alias.asname or alias.name
                if alias.name == name and bound.count(local) == 1:
                    return local, None
    local, counter = wanted, 2
    while local in bound:
        local, counter = f"{wanted}_{counter}", counter + 1
    suffix = "" if local == name else f" as {local}"
    return local, f"from {modules[0]} import {name}{suffix}\n"


def _add_imports(source: str, lines: list[str]) -> str:
    """`lines` placed after the `__future__` import (the formatter sorts them in later)."""
    future = "from __future__ import annotations\n"
    if future in source:
        return source.replace(future, future + "".join(lines), 1)
    return "".join(lines) + source
