"""The runtime's public API as text: every public name, its kind and its signature.

``tests/runtime/public_api.txt`` holds the API as it is meant to be; the test compares the
two, so a moved, renamed or re-signed name is a failing test rather than a surprise for a
user. After a deliberate change, rewrite the file (and say so in the CHANGELOG):

    python -m tests.runtime.public_api --write
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("public_api.txt")
MODULES = (
    "envgen_runtime",
    "envgen_runtime.compat",
    "envgen_runtime.containers",
    "envgen_runtime.schemadiff",
    "envgen_runtime.server",
)
"""Where users import from: the package face, the public submodules, and every module path
generated code imports (``envgen_runtime`` and ``envgen_runtime.server``)."""


def _public(module: Any) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_") and _own(v, module)]
    return sorted(names)


def _own(value: Any, module: Any) -> bool:
    """Whether ``value`` is defined in the runtime (not an import from elsewhere)."""
    if inspect.ismodule(value):
        return False
    owner = getattr(value, "__module__", None)
    return (owner is None and not callable(value)) or str(owner).startswith("envgen_runtime")


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return re.sub(r" at 0x[0-9a-f]+>", ">", text)  # a default's repr may hold its address


_SPECIAL = ("__init__", "__enter__", "__aenter__", "__iter__", "__len__", "__getitem__")


def _members(cls: type) -> list[str]:
    """Public members, inherited ones included, as far as the runtime defines them."""
    names = sorted(
        {
            name
            for klass in cls.__mro__
            if klass.__module__.startswith("envgen_runtime")
            for name in vars(klass)
            if not name.startswith("_") or name in _SPECIAL
        }
    )
    lines = []
    for name in names:
        value = inspect.getattr_static(cls, name)
        if isinstance(value, property):
            lines.append(f"    property {name}")
        elif isinstance(value, classmethod | staticmethod):
            kind = "classmethod" if isinstance(value, classmethod) else "staticmethod"
            lines.append(f"    {kind} {name}{_signature(getattr(cls, name))}")
        elif inspect.isfunction(value):
            prefix = "async def" if inspect.iscoroutinefunction(value) else "def"
            lines.append(f"    {prefix} {name}{_signature(value)}")
        elif not callable(value):
            lines.append(f"    attribute {name}")
    return lines


def describe() -> str:
    """The public API of every module in ``MODULES``, one block a name."""
    lines: list[str] = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        lines.append(f"[{module_name}]")
        for name in _public(module):
            value = getattr(module, name)
            if inspect.isclass(value):
                bases = ", ".join(b.__name__ for b in value.__bases__)
                lines.append(f"class {name}({bases})")
                lines.extend(_members(value))
            elif inspect.isfunction(value) or inspect.isbuiltin(value):
                lines.append(f"def {name}{_signature(value)}")
            else:
                lines.append(f"{name}: {type(value).__name__}")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        SNAPSHOT.write_text(describe(), encoding="utf-8")
        print(f"wrote {SNAPSHOT}")
    else:
        print(describe())
