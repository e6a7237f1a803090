"""The runtime's module graph: no import cycles, and the generator uses only public names."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import envgen_runtime

RUNTIME = Path(envgen_runtime.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "generator"

PROVIDER_ONLY = ("subprocess", "tempfile", "socket", "signal", "shlex", "selectors", "shutil")
"""Standard modules only starting or stopping a server needs: a client's import skips them."""


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> set[str]:
    """Sibling modules a module imports when it runs: at module level or inside functions.

    Imports under ``if TYPE_CHECKING:`` never run, so they cannot close a cycle.
    """
    found: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:  # from . import x
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            found.update(name.split(".")[1] for name in names if name.startswith("envgen_runtime."))
        stack.extend(ast.iter_child_nodes(node))
    return found


def _graph(root: Path) -> dict[str, set[str]]:
    modules = {path.stem: path for path in root.glob("*.py")}
    return {
        name: _runtime_imports(ast.parse(path.read_text())) & modules.keys() - {name}
        for name, path in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, each once, as the list of modules along it."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt == path[0]:
                key = frozenset(path)
                if key not in seen:
                    seen.add(key)
                    found.append([*path, nxt])
            elif nxt not in path and nxt > path[0]:  # start each cycle at its least module
                walk(nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, [start])
    return found


def test_the_cycle_finder_finds_a_lazy_import_cycle() -> None:
    # The shape _client_async and _launchers had: one imports the other at module level,
    # the other imports it back inside a function.
    lazy = ast.parse("def f():\n    from ._a import X\n")
    typed = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._a import X\n"
    )
    assert _runtime_imports(lazy) == {"_a"}
    assert _runtime_imports(typed) == set()
    assert _cycles({"_a": {"_b"}, "_b": {"_a"}, "_c": set()}) == [["_a", "_b", "_a"]]


def test_runtime_modules_import_no_cycle() -> None:
    graph = _graph(RUNTIME)
    assert "_client_async" in graph and "_launchers" in graph
    assert _cycles(graph) == []


def test_generator_imports_only_public_runtime_names() -> None:
    private = re.compile(r"^\s*(?:from|import)\s+envgen_runtime\._", re.M)
    offenders = [
        str(path.relative_to(GENERATOR))
        for path in sorted(GENERATOR.rglob("*.py"))
        if private.search(path.read_text())
    ]
    assert offenders == []


def test_importing_a_client_loads_no_provider_only_module() -> None:
    code = "import json, sys\nimport generated.echo_env\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    assert sorted(loaded & set(PROVIDER_ONLY)) == []
