"""Field names that Python would read as another name get a name of their own and an alias.

Python folds identifiers to Unicode NFKC when it parses them, so a property written `ﬁ` (the
ligature) becomes an attribute named `fi`: its wire name is lost, and beside a real `fi`
property one field silently replaces the other. Each such field is renamed to its folded
form (made unique within the class) and keeps its wire name as a pydantic alias.
"""

from __future__ import annotations

import ast
import unicodedata


def fix_folded_names(source: str) -> str:
    """`source` with every class field whose written name Python folds renamed and aliased."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))

    def at(lineno: int, col: int) -> int:
        return offsets[lineno - 1] + col

    edits: list[tuple[int, int, str]] = []  # start, end (byte offsets), new text
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        fields = [s for s in cls.body if isinstance(s, ast.AnnAssign)]
        taken = {s.target.id for s in fields if isinstance(s.target, ast.Name)}
        for stmt in fields:
            target = stmt.target
            if not isinstance(target, ast.Name):
                continue
            row = lines[target.lineno - 1].encode()
            written = row[target.col_offset : target.end_col_offset].decode()
            if unicodedata.normalize("NFKC", written) == written:
                continue
            name = _unique(target.id, taken)
            taken.add(name)
            start = at(target.lineno, target.col_offset)
            edits.append((start, start + len(written.encode()), name))
            if not _has_alias(stmt):
                ann = stmt.annotation
                wrapped = f"Annotated[{ast.unparse(ann)}, Field(alias={written!r})]"
                end = at(ann.end_lineno or ann.lineno, ann.end_col_offset or 0)
                edits.append((at(ann.lineno, ann.col_offset), end, wrapped))
    if not edits:
        return source
    data = source.encode()
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text.encode() + data[end:]
    return _ensure_imports(data.decode())


def _unique(folded: str, taken: set[str]) -> str:
    name = f"{folded}_"
    counter = 2
    while name in taken:
        name = f"{folded}_{counter}"
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


def _ensure_imports(source: str) -> str:
    """`Annotated` and `Field` are imported where the wrapping needs them."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    missing = [
        line
        for name, line in (
            ("Annotated", "from typing import Annotated\n"),
            ("Field", "from pydantic import Field\n"),
        )
        if name not in imported
    ]
    if not missing:
        return source
    future = "from __future__ import annotations\n"
    if future in source:
        return source.replace(future, future + "".join(missing), 1)
    return "".join(missing) + source
