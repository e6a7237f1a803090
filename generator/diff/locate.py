"""Line numbers for JSON pointers, so annotations land on the line that changed.

A small scanner over the JSON text records the line where each member's key (or each array
element) starts. A pointer that no longer exists (a removed property) falls back to its
nearest existing parent.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from generator.schema.check import json_pointer

_WS = " \t\r\n"


def line_of(path: Path, pointer: str) -> int | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    lines = _index(str(path), stat.st_mtime_ns, stat.st_size)
    if not lines:
        return None
    while True:
        if pointer in lines:
            return lines[pointer]
        if not pointer:
            return None
        pointer = pointer.rsplit("/", 1)[0]


@lru_cache(maxsize=64)
def _index(path: str, mtime: int, size: int) -> dict[str, int]:
    """Pointer -> line for one version of a file (the stat values key the cache)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    scanner = _Scanner(text)
    try:
        scanner.value("")
    except (IndexError, ValueError):
        return {}
    return scanner.lines


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.lines: dict[str, int] = {}
        self._decoder = json.JSONDecoder()

    def _line(self) -> int:
        return self.text.count("\n", 0, self.pos) + 1

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def value(self, pointer: str) -> None:
        self._skip()
        self.lines.setdefault(pointer, self._line())
        char = self.text[self.pos]
        if char == "{":
            self._object(pointer)
        elif char == "[":
            self._array(pointer)
        else:
            _, self.pos = self._decoder.raw_decode(self.text, self.pos)

    def _object(self, pointer: str) -> None:
        self.pos += 1
        self._skip()
        if self.text[self.pos] == "}":
            self.pos += 1
            return
        while True:
            self._skip()
            line = self._line()
            key, self.pos = self._decoder.raw_decode(self.text, self.pos)
            here = pointer + json_pointer([key])
            self.lines[here] = line
            self._skip()
            self.pos += 1  # the colon
            self.value(here)
            self._skip()
            if self.text[self.pos] == ",":
                self.pos += 1
                continue
            self.pos += 1
            return

    def _array(self, pointer: str) -> None:
        self.pos += 1
        self._skip()
        if self.text[self.pos] == "]":
            self.pos += 1
            return
        index = 0
        while True:
            self.value(f"{pointer}/{index}")
            index += 1
            self._skip()
            if self.text[self.pos] == ",":
                self.pos += 1
                continue
            self.pos += 1
            return
