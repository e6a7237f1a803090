"""The generation cache: skip environments whose inputs and outputs have not changed.

`generated/.envgen-cache/cache.json` records, per environment, the SHA-256 of every
input file and of every output file as last rendered, under a fingerprint of the toolchain
(envgen's own source and templates, datamodel-code-generator and ruff versions). An env is
reused only when all of its inputs hash the same, its output folder holds exactly the
recorded files with the recorded hashes, and the toolchain is unchanged: then rendering it
again would give the very bytes on disk, so `generate` can skip it and `check` can pass it
without rendering. Anything else (no cache, a corrupt cache, one edited byte) falls back to
rendering, so the cache only ever saves time; it never changes a verdict. Its folder holds a
`.gitignore` of `*` (as ruff's and pytest's caches do), so no repository commits it: a
committed cache would be rewritten by a check under another toolchain (a pre-commit env).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from generator import __version__

CACHE_DIR = ".envgen-cache"
CACHE_FILE = f"{CACHE_DIR}/cache.json"
_LEGACY_CACHE_FILE = ".envgen-cache.json"  # envgen 0.1 kept it beside the env folders
_FORMAT = 1
_GENERATOR = Path(__file__).resolve().parent.parent
_OUTPUT_STAGES = ("schema", "codegen")
"""The generator's packages whose code decides the output's bytes (loading and rendering)."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


@cache
def toolchain_fingerprint(templates_dir: Path) -> str:
    """Everything besides the schemas that decides the output's bytes."""
    h = hashlib.sha256(f"envgen {__version__}\n".encode())
    for dist in ("datamodel-code-generator", "ruff", "pydantic"):
        try:
            h.update(f"{dist} {metadata.version(dist)}\n".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist} missing\n".encode())
    sources = [
        (f"{stage}/{path.name}", path)
        for stage in _OUTPUT_STAGES
        for path in sorted((_GENERATOR / stage).glob("*.py"))
    ]
    sources += [(path.name, path) for path in sorted(templates_dir.glob("*.jinja"))]
    for name, path in sources:
        h.update(name.encode() + b"\0" + digest(path.read_bytes()).encode())
    return h.hexdigest()


IGNORED_DIRS = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache"})


def output_files(folder: Path) -> dict[str, Path]:
    """Files under a generated env folder by relative POSIX path, caches left out."""
    if not folder.is_dir():
        return {}
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not IGNORED_DIRS.intersection(rel.parts):
            found[rel.as_posix()] = path
    return found


@dataclass
class EnvRecord:
    inputs: dict[str, str]  # repo-relative path -> digest
    outputs: dict[str, str]  # file name inside generated/<env>/ -> digest


@dataclass
class Cache:
    fingerprint: str
    envs: dict[str, EnvRecord] = field(default_factory=dict)

    def is_current(self, root: Path, out: Path, name: str, fingerprint: str) -> bool:
        """True when rendering `name` again would reproduce the bytes on disk."""
        record = self.envs.get(name)
        if record is None or fingerprint != self.fingerprint:
            return False
        for rel, expected in record.inputs.items():
            path = root / rel
            if not path.is_file() or digest(path.read_bytes()) != expected:
                return False
        if any(rel not in record.inputs for rel in _optional_inputs(root, record)):
            return False  # an optional input appeared since: it was not rendered
        on_disk = output_files(out / name)
        if set(on_disk) != set(record.outputs):
            return False
        return all(
            digest(on_disk[rel].read_bytes()) == expected
            for rel, expected in record.outputs.items()
        )


OPTIONAL_INPUTS = ("reset.schema.json",)
"""Files beside env.toml that an env may or may not have (the loader reads them if present)."""
OPTIONAL_GLOBS = ("tools/*.json",)
"""Patterns of the optional inputs an env may have any number of (a tool env's tools)."""


def _optional_inputs(root: Path, record: EnvRecord) -> list[str]:
    """The optional inputs that exist now beside each recorded env.toml."""
    found: list[str] = []
    for rel in record.inputs:
        if rel.endswith("/env.toml"):
            folder = rel.removesuffix("env.toml")
            found += [folder + name for name in OPTIONAL_INPUTS if (root / folder / name).is_file()]
            for pattern in OPTIONAL_GLOBS:
                matches = sorted((root / folder).glob(pattern))
                found += [folder + p.relative_to(root / folder).as_posix() for p in matches]
    return found


def load(out: Path) -> Cache | None:
    try:
        data: Any = json.loads((out / CACHE_FILE).read_text(encoding="utf-8"))
        if data.get("format") != _FORMAT:
            return None
        envs = {
            name: EnvRecord(inputs=dict(rec["inputs"]), outputs=dict(rec["outputs"]))
            for name, rec in data["envs"].items()
        }
        return Cache(fingerprint=str(data["fingerprint"]), envs=envs)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def cache_folder(out: Path) -> Path:
    """`out`'s cache folder, made with its `.gitignore` if missing (OSError if it cannot be)."""
    folder = out / CACHE_DIR
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.is_file():
        ignore.write_text("# Made by envgen: this cache is never committed.\n*\n")
    return folder


def save(out: Path, cache_: Cache) -> None:
    """Write the cache atomically; failure to write it is never an error."""
    data = {
        "format": _FORMAT,
        "fingerprint": cache_.fingerprint,
        "envs": {
            name: {"inputs": rec.inputs, "outputs": rec.outputs}
            for name, rec in sorted(cache_.envs.items())
        },
    }
    tmp = out / f"{CACHE_FILE}.{os.getpid()}.tmp"
    try:
        cache_folder(out)
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, out / CACHE_FILE)
        (out / _LEGACY_CACHE_FILE).unlink(missing_ok=True)
    except OSError:
        tmp.unlink(missing_ok=True)
