"""Bundling: one environment's schema files into one self-contained document.

datamodel-code-generator runs in process on text, so every `$ref` (local or to another file
under `schemas/`) is resolved here and rewritten to point into a single `$defs` table. The
three role schemas become the defs named after the env's classes (`EchoAction`, ...); every
other referenced subschema keeps its own name where it can. Refs are followed only within the
schemas folder: remote refs and paths that leave it are errors, as are anchors and chains of
`$ref` that loop without ever reaching a schema.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from generator.errors import RefError, SchemaError
from generator.schema.check import check_meta_schema, json_pointer
from generator.schema.jsonio import canonical_json, read_json

ROLES = ("action", "observation", "state")
RESET_ROLE = "reset"
"""The optional fourth schema: `reset()`'s keyword arguments beyond seed and episode_id."""

# Keywords whose value maps names to subschemas (the names are data, not keywords).
_NAMED_SCHEMAS = {"properties", "patternProperties", "dependentSchemas"}
# Keywords whose value is data, copied verbatim.
_DATA = {"enum", "const", "default", "examples"}
# Keywords dropped from copies: their meaning is taken over by the bundle itself.
_DROPPED = {"$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$defs", "definitions"}
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_.\-/]+$")

Key = tuple[Path, str]


@dataclass
class Bundle:
    """The bundled document and where it came from."""

    defs: dict[str, Any]
    role_names: dict[str, str]
    sources: list[str] = field(default_factory=list)
    origins: dict[str, tuple[str, str]] = field(default_factory=dict)  # def -> (file, pointer)

    def document(self, root_name: str) -> dict[str, Any]:
        """The text handed to the model generator: a root that only holds `$defs`."""
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": root_name,
            "$defs": self.defs,
        }


class Bundler:
    """Collects role schemas and everything they reference into one `$defs` table."""

    def __init__(self, schemas_root: Path, repo_root: Path) -> None:
        self._schemas_root = schemas_root.resolve()
        self._repo_root = repo_root.resolve()
        self._docs: dict[Path, Any] = {}
        self._names: dict[Key, str] = {}
        self._owners: dict[str, Key] = {}
        self._defs: dict[str, Any] = {}
        self._queue: deque[Key] = deque()

    def display(self, path: Path) -> str:
        """Repo-relative POSIX path: what error messages and generated headers show."""
        try:
            return path.resolve().relative_to(self._repo_root).as_posix()
        except ValueError:
            return path.name

    def origin(self, def_name: str) -> tuple[str, str] | None:
        """Where a bundled def came from: (repo-relative file, JSON pointer), if known."""
        key = self._owners.get(def_name)
        if key is None:
            return None
        path, pointer = key
        return self.display(path), pointer

    def preload(self, documents: dict[Path, Any]) -> None:
        """Documents already read and checked (tool files, refs pointing into the file)."""
        for path, doc in documents.items():
            self._docs[path.resolve()] = doc

    def bundle(
        self,
        role_files: dict[str, Path],
        role_names: dict[str, str],
        embedded: dict[str, Key] | None = None,
    ) -> Bundle:
        """`embedded`: more defs by name, each a schema inside a preloaded file (tools')."""
        for role in [*ROLES, RESET_ROLE]:
            if role not in role_files:
                continue
            path = role_files[role].resolve()
            self._load(path)
            self._claim((path, ""), role_names[role])
        for name, (path, pointer) in (embedded or {}).items():
            if _fold(name) in {_fold(n) for n in self._owners}:
                raise SchemaError(
                    f"the model name {name!r} is taken twice",
                    file=self.display(path),
                    pointer=pointer,
                )
            self._claim((path.resolve(), pointer), name)
        while self._queue:
            key = self._queue.popleft()
            path, pointer = key
            node = self._at(path, pointer, None)
            self._defs[self._names[key]] = self._rewrite(node, path, pointer)
        self._check_ref_cycles()
        self._merge_identical(set(role_names.values()) | set(embedded or {}))
        ordered = {name: self._defs[name] for name in sorted(self._defs)}
        return Bundle(
            defs=ordered,
            role_names=dict(role_names),
            sources=sorted(self.display(p) for p in self._docs),
            origins={name: where for name in ordered if (where := self.origin(name))},
        )

    # -- loading -----------------------------------------------------------------------------

    def _load(self, path: Path) -> Any:
        if path in self._docs:
            return self._docs[path]
        display = self.display(path)
        if not _SAFE_PATH.match(display):
            raise SchemaError(
                "schema file paths may only use letters, digits, '_', '-', '.' and '/'",
                file=display,
            )
        doc = read_json(path, display)
        check_meta_schema(doc, display)
        self._docs[path] = doc
        return doc

    def _at(self, path: Path, pointer: str, ref_site: tuple[str, str] | None) -> Any:
        node = self._docs[path]
        for raw in pointer.split("/")[1:] if pointer else []:
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                where_file, where_ptr = ref_site or (self.display(path), pointer)
                raise RefError(
                    f"$ref target #{pointer} does not exist in {self.display(path)}",
                    file=where_file,
                    pointer=where_ptr,
                )
        return node

    # -- naming --------------------------------------------------------------------------------

    def _claim(self, key: Key, name: str) -> str:
        self._names[key] = name
        self._owners[name] = key
        self._queue.append(key)
        return name

    def _name_for(self, key: Key) -> str:
        if key in self._names:
            return self._names[key]
        path, pointer = key
        if pointer:
            last = pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            base = _identifier(last)
        else:
            base = _identifier(path.name.removesuffix(".json").removesuffix(".schema"))
        stem = _identifier(path.name.removesuffix(".json").removesuffix(".schema"))
        candidates = [base, f"{stem}{base}"] + [f"{base}{n}" for n in range(2, 1000)]
        reserved = {_fold(n) for n in self._owners}
        for candidate in candidates:
            if _fold(candidate) not in reserved:
                return self._claim(key, candidate)
        raise RefError("too many schemas share one name", file=self.display(path), pointer=pointer)

    # -- rewriting -----------------------------------------------------------------------------

    def _rewrite(self, node: Any, path: Path, pointer: str) -> Any:
        if isinstance(node, list):
            return [self._rewrite(v, path, f"{pointer}/{i}") for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            here = pointer + json_pointer([key])
            if key in _DROPPED:
                continue
            if key in _DATA:
                out[key] = value
            elif key in _NAMED_SCHEMAS and isinstance(value, dict):
                out[key] = {
                    name: self._rewrite(sub, path, here + json_pointer([name]))
                    for name, sub in value.items()
                }
            elif key == "$ref" and isinstance(value, str):
                target = self._resolve(value, path, here)
                out[key] = "#/$defs/" + _escape(self._name_for(target))
            else:
                out[key] = self._rewrite(value, path, here)
        return out

    def _resolve(self, ref: str, path: Path, here: str) -> Key:
        display = self.display(path)
        url, _, fragment = ref.partition("#")
        if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", url):
            raise RefError(
                f"remote $ref {ref!r} is not supported",
                file=display,
                pointer=here,
                hint="copy the schema under schemas/ and refer to it by relative path",
            )
        target = (path.parent / unquote(url)).resolve() if url else path
        if url:
            if not target.is_relative_to(self._schemas_root):
                raise RefError(
                    f"$ref {ref!r} leaves the schemas folder", file=display, pointer=here
                )
            if not target.is_file():
                raise RefError(
                    f"$ref {ref!r}: file {self.display(target)} not found",
                    file=display,
                    pointer=here,
                )
            self._load(target)
        fragment = unquote(fragment)
        if fragment and not fragment.startswith("/"):
            raise RefError(
                f"$ref {ref!r} uses an anchor, which envgen does not resolve",
                file=display,
                pointer=here,
                hint="use a JSON pointer such as '#/$defs/Name'",
            )
        self._at(target, fragment, (display, here))
        return (target, fragment)

    def _merge_identical(self, keep: set[str]) -> None:
        """Defs with the same content (say `Position` in two files) become one class."""
        while True:
            first: dict[str, str] = {}
            alias: dict[str, str] = {}
            # Role defs first so they are the ones kept; then in order of discovery.
            for name in sorted(self._defs, key=lambda n: n not in keep):
                text = canonical_json(self._defs[name])
                if text in first and name not in keep:
                    alias[name] = first[text]
                else:
                    first.setdefault(text, name)
            if not alias:
                return
            for name in alias:
                del self._defs[name]
            targets = {
                f"#/$defs/{_escape(old)}": f"#/$defs/{_escape(new)}" for old, new in alias.items()
            }
            self._defs = {name: _retarget(node, targets) for name, node in self._defs.items()}

    def _check_ref_cycles(self) -> None:
        """A def that is only a `$ref` to itself, directly or through others, defines nothing."""
        for start in self._defs:
            seen: list[str] = []
            name = start
            while True:
                node = self._defs.get(name)
                if not (
                    isinstance(node, dict)
                    and set(node) <= {"$ref", "title", "description"}
                    and "$ref" in node
                ):
                    break
                if name in seen:
                    path, pointer = self._owners[start]
                    chain = " -> ".join([*seen, name])
                    raise RefError(
                        f"$ref cycle that never reaches a schema: {chain}",
                        file=self.display(path),
                        pointer=pointer,
                    )
                seen.append(name)
                name = node["$ref"].removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~")


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _retarget(node: Any, targets: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_retarget(v, targets) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        key: value
        if key in _DATA
        else targets.get(value, value)
        if key == "$ref" and isinstance(value, str)
        else _retarget(value, targets)
        for key, value in node.items()
    }


def _identifier(text: str) -> str:
    """CamelCase letters and digits of `text`: a def name that survives class naming."""
    parts = re.split(r"[^0-9A-Za-z]+", text)
    name = "".join(p[:1].upper() + p[1:] for p in parts if p)
    if not name or name[0].isdigit():
        name = "Schema" + name
    return name


def tool_model_name(tool: str, kind: str) -> str:
    """`search` -> `SearchArguments` / `SearchResult`: a tool's model names (`kind` appended)."""
    return _identifier(tool) + kind


def _fold(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())
