"""The layout's rules, read from the code: no import cycle, and arrows only run downwards.

Both packages are walked as text (``ast``), every import counted: at module level, inside a
function and under ``if TYPE_CHECKING:`` alike, since a cycle a type checker sees is still a
knot a reader must untie. ``docs/architecture.md`` draws the layers these tests hold.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO

PACKAGES = {"generator": REPO / "generator", "envgen_runtime": REPO / "runtime" / "envgen_runtime"}

# What each layer may import besides itself. A module directly in a package (its face, its
# program, its foundation) is named by its dotted name; a subpackage by its name.
RUNTIME_LAYERS: dict[str, set[str]] = {
    "envgen_runtime.core": set(),
    "envgen_runtime.transport": {"envgen_runtime.core"},
    "envgen_runtime.providers": {"envgen_runtime.core", "envgen_runtime.transport"},
    "envgen_runtime.client": {
        "envgen_runtime.core",
        "envgen_runtime.transport",
        "envgen_runtime.providers",
        "envgen_runtime.schemadiff",
    },
    "envgen_runtime.pool": {
        "envgen_runtime.core",
        "envgen_runtime.transport",
        "envgen_runtime.providers",
        "envgen_runtime.client",
    },
    "envgen_runtime.vector": {
        "envgen_runtime.core",
        "envgen_runtime.client",
        "envgen_runtime.pool",
        "envgen_runtime.schemadiff",
    },
    "envgen_runtime.server": {"envgen_runtime.core"},
    "envgen_runtime.schemadiff": set(),  # imports none of the runtime: the generator uses it
    "envgen_runtime.compat": set(),
    "envgen_runtime.containers": {"envgen_runtime.providers"},
}
_FOUNDATION = {"generator", "generator.errors", "generator.verbosity"}
GENERATOR_LAYERS: dict[str, set[str]] = {
    "generator.errors": set(),
    "generator.verbosity": set(),
    "generator.schema": _FOUNDATION,
    "generator.codegen": _FOUNDATION | {"generator.schema"},
    "generator.scaffold": _FOUNDATION | {"generator.schema"},
    "generator.image": _FOUNDATION | {"generator.schema"},
    "generator.diff": _FOUNDATION | {"generator.schema", "generator.codegen"},
    "generator.interop": _FOUNDATION | {"generator.schema", "generator.codegen", "generator.diff"},
    "generator.verify": _FOUNDATION | {"generator.schema", "generator.diff", "generator.interop"},
    "generator.cli": _FOUNDATION
    | {
        "generator.schema",
        "generator.codegen",
        "generator.scaffold",
        "generator.image",
        "generator.diff",
        "generator.interop",
        "generator.verify",
    },
    "generator.entry": {"generator.cli", "generator.codegen"},
    "generator.__main__": {"generator.entry"},
}
PUBLIC_RUNTIME = {
    "envgen_runtime",
    "envgen_runtime.compat",
    "envgen_runtime.containers",
    "envgen_runtime.schemadiff",
    "envgen_runtime.server",
}
"""What the generator (and generated code) may import of the runtime: its public faces."""


def module_name(path: Path) -> str:
    """The dotted name of a module file of one of the two packages."""
    for package, root in PACKAGES.items():
        if path.is_relative_to(root):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise ValueError(f"{path} is in neither package")


def modules() -> dict[str, Path]:
    """Every module of both packages, by dotted name."""
    return {
        module_name(path): path
        for root in PACKAGES.values()
        for path in sorted(root.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def imported_modules(path: Path, name: str, known: dict[str, Path]) -> Iterator[str]:
    """The modules of ``known`` that ``path`` (the module ``name``) imports, wherever it does.

    ``from package import module`` imports the module; the package counts only when a name
    of its own is taken from it (its ``__init__`` runs either way, as every parent's does).
    """
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            submodules = [f"{target}.{alias.name}" for alias in node.names]
            yield from (module for module in submodules if module in known)
            if target in known and not all(module in known for module in submodules):
                yield target


def graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of both packages it imports (itself left out)."""
    return {name: set(imported_modules(path, name, known)) - {name} for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, each once, starting at its least module."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt == path[0]:
                key = frozenset(path)
                if key not in seen:
                    seen.add(key)
                    found.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:
                walk(nxt, [*path, nxt])

    for start in sorted(edges):
        walk(start, [start])
    return found


def layer_of(name: str, layers: dict[str, set[str]]) -> str | None:
    """The longest layer name that ``name`` is or is inside."""
    matches = [layer for layer in layers if name == layer or name.startswith(layer + ".")]
    return max(matches, key=len) if matches else None


def upward_arrows(edges: dict[str, set[str]], layers: dict[str, set[str]]) -> list[str]:
    """Imports from one layer into another that the layer table does not allow."""
    wrong = []
    for source, targets in sorted(edges.items()):
        here = layer_of(source, layers)
        if here is None:
            continue
        for target in sorted(targets):
            there = layer_of(target, layers) or target
            if there != here and there not in layers[here]:
                wrong.append(f"{source} -> {target}")
    return wrong


def test_the_graph_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import c\n")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import X\n"
    )
    (pkg / "b.py").write_text("def f():\n    from pkg.sub.c import Y\n")
    (pkg / "sub" / "c.py").write_text("from ..a import Z\nimport pkg.b\n")
    known = {
        "pkg": pkg / "__init__.py",
        "pkg.a": pkg / "a.py",
        "pkg.b": pkg / "b.py",
        "pkg.sub": pkg / "sub" / "__init__.py",
        "pkg.sub.c": pkg / "sub" / "c.py",
    }
    edges = graph(known)
    assert edges == {
        "pkg": set(),
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.sub.c"},
        "pkg.sub": {"pkg.sub.c"},
        "pkg.sub.c": {"pkg.a", "pkg.b"},
    }
    assert cycles(edges) == [
        ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"],
        ["pkg.b", "pkg.sub.c", "pkg.b"],
    ]
    layers = {"pkg.a": {"pkg.b"}, "pkg.b": set(), "pkg.sub": {"pkg.a"}}
    assert upward_arrows(edges, layers) == ["pkg.b -> pkg.sub.c", "pkg.sub.c -> pkg.b"]


def test_no_import_cycle_in_either_package() -> None:
    edges = graph(modules())
    assert "envgen_runtime.client.aio" in edges and "envgen_runtime.schemadiff.compare" in edges
    assert cycles(edges) == []


@pytest.mark.parametrize(
    ("package", "layers"), [("envgen_runtime", RUNTIME_LAYERS), ("generator", GENERATOR_LAYERS)]
)
def test_every_module_sits_in_a_layer_and_imports_only_layers_below(
    package: str, layers: dict[str, set[str]]
) -> None:
    known = modules()
    faces = {package}  # the package face (its __init__) gathers from every layer
    unplaced = [n for n in known if n.startswith(package + ".") and layer_of(n, layers) is None]
    assert unplaced == [], f"add these to the layer table (and docs/architecture.md): {unplaced}"
    inside = {
        name: {target for target in targets if target.split(".")[0] == package}
        for name, targets in graph(known).items()
        if name.split(".")[0] == package and name not in faces
    }
    assert upward_arrows(inside, layers) == []


def test_the_runtime_never_imports_the_generator_and_the_generator_only_its_faces() -> None:
    known = modules()
    edges = graph(known)
    runtime_to_generator = [
        f"{s} -> {t}"
        for s, ts in edges.items()
        if s.startswith("envgen_runtime")
        for t in ts
        if t.startswith("generator")
    ]
    assert runtime_to_generator == []
    into_runtime = sorted(
        f"{name} -> {target}"
        for name, path in known.items()
        if name.startswith("generator")
        for target in imported_modules(path, name, known)
        if target.startswith("envgen_runtime") and target not in PUBLIC_RUNTIME
    )
    assert into_runtime == []


def test_no_module_is_longer_than_450_lines() -> None:
    long = {
        name: lines
        for name, path in modules().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 450
    }
    assert long == {}
