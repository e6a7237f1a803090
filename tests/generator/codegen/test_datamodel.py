"""The surgery on datamodel-code-generator's output: the root placeholder cut out whole."""

from __future__ import annotations

import pytest

from generator.codegen.datamodel import ROOT_NAME, _cut_root


@pytest.mark.parametrize("sep", ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\r"])
def test_the_root_placeholder_is_cut_whole(sep: str) -> None:
    source = (
        f'class A:\n    """x{sep}y"""\n\n    a: int = 1\n\n\n'
        f"class {ROOT_NAME}:\n    b: int = 2\n\n\nclass C:\n    c: int = 3\n"
    )
    kept = f'class A:\n    """x{sep}y"""\n\n    a: int = 1\n\n\n\n\nclass C:\n    c: int = 3\n'
    assert _cut_root(source) == kept
