"""Finding environments under `schemas/` and loading one into the generator's description."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.errors import InputError, ManifestError, SchemaError
from generator.schema.manifest import Manifest, check_env_name, load_manifest

if TYPE_CHECKING:
    from generator.schema.bundle import Bundle
    from generator.schema.tools import ToolInput

MANIFEST = "env.toml"


@dataclass(frozen=True)
class Layout:
    """Where a project keeps its inputs and outputs; all paths absolute."""

    root: Path
    schemas: Path
    generated: Path

    @classmethod
    def at(cls, root: Path, schemas: str = "schemas", generated: str = "generated") -> Layout:
        root = root.resolve()
        return cls(
            root=root, schemas=(root / schemas).resolve(), generated=(root / generated).resolve()
        )

    def display(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


@dataclass(frozen=True)
class EnvInput:
    """Everything the generator knows about one environment, before any code is made."""

    manifest: Manifest
    bundle: Bundle
    sources: tuple[str, ...]
    schema_hash: str
    tools: tuple[ToolInput, ...] = ()
    """A tool env's tools (`schemas/<env>/tools/`), sorted by file name; () for other envs."""

    @property
    def name(self) -> str:
        return self.manifest.name

    def class_name(self, role: str) -> str:
        return self.bundle.role_names[role]

    def tool_model(self, tool: ToolInput, kind: str) -> str:
        """`Arguments` or `Result`: the model name of a tool's input or output schema."""
        from generator.schema.bundle import tool_model_name

        return tool_model_name(tool.name, kind)

    @property
    def reset_class(self) -> str | None:
        """The reset parameters model's name, or None when the env has no reset.schema.json."""
        from generator.schema.bundle import RESET_ROLE

        return self.bundle.role_names.get(RESET_ROLE)

    @property
    def client_name(self) -> str:
        return f"{self.manifest.class_prefix}Env"


def discover_envs(layout: Layout) -> list[str]:
    """Every folder under schemas/ that holds an env.toml, in sorted order."""
    if not layout.schemas.is_dir():
        return []
    return sorted(p.parent.name for p in layout.schemas.glob(f"*/{MANIFEST}"))


def did_you_mean(layout: Layout, name: str) -> str | None:
    """ "did you mean 'echo_env'?" for an env name with no env.toml, when one is close."""
    import difflib

    close = difflib.get_close_matches(name, discover_envs(layout), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None


def role_file(env_dir: Path, role: str) -> Path:
    return env_dir / f"{role}.schema.json"


def load_env(layout: Layout, name: str) -> EnvInput:
    """Read env.toml, the three role schemas and the optional reset schema for `name`."""
    # Imported here: checking schemas loads jsonschema, which a cache hit never needs.
    from generator.schema.bundle import RESET_ROLE, ROLES, Bundler
    from generator.schema.check import check_reset_params, check_role_root
    from generator.schema.jsonio import read_json
    from generator.schema.tools import load_tools

    env_dir = layout.schemas / name
    problem = check_env_name(name)
    if problem:
        raise InputError(f"env name {name!r} {problem}", file=layout.display(env_dir))
    manifest_path = env_dir / MANIFEST
    if not manifest_path.is_file():
        create = f"create it with `envgen new {name}`"
        close = did_you_mean(layout, name)
        raise ManifestError(
            f"no environment named {name!r}",
            file=layout.display(manifest_path),
            hint=f"{close} (or {create})" if close else create,
        )
    manifest = load_manifest(manifest_path, layout.display(manifest_path), name)
    prefix = manifest.class_prefix
    role_names = {
        "action": f"{prefix}Action",
        "observation": f"{prefix}Observation",
        "state": f"{prefix}State",
    }
    role_files = {role: role_file(env_dir, role) for role in ROLES}
    for role, path in role_files.items():
        doc = read_json(path, layout.display(path))
        check_role_root(doc, layout.display(path), role)
    reset_path = role_file(env_dir, RESET_ROLE)
    if reset_path.exists():
        check_reset_params(
            read_json(reset_path, layout.display(reset_path)), layout.display(reset_path)
        )
        role_files[RESET_ROLE] = reset_path
        role_names[RESET_ROLE] = f"{prefix}ResetParams"
    found = load_tools(env_dir, layout.display)
    bundler = Bundler(layout.schemas, layout.root)
    bundler.preload(found.documents)
    bundle = bundler.bundle(role_files, role_names, tool_roots(found.tools))
    sources = tuple([layout.display(manifest_path), *bundle.sources])
    return EnvInput(
        manifest=manifest,
        bundle=bundle,
        sources=sources,
        schema_hash=_hash_sources(layout, sources),
        tools=found.tools,
    )


def tool_roots(tools: tuple[ToolInput, ...]) -> dict[str, tuple[Path, str]]:
    """Each tool's argument and result model name -> its schema in the tool file (the
    bundler's `embedded` roots); two tools whose names give one model name are an error."""
    from generator.schema.bundle import tool_model_name

    embedded: dict[str, tuple[Path, str]] = {}
    for tool in tools:
        roots = [("Arguments", tool.input_pointer), ("Result", tool.output_pointer)]
        for kind, pointer in roots:
            if pointer is None:
                continue
            model = tool_model_name(tool.name, kind)
            if model in embedded:
                raise SchemaError(
                    f"tool {tool.name!r} needs the model name {model!r}, which another "
                    "tool's name gives too",
                    file=tool.display,
                    pointer=pointer,
                    hint="rename one of the tools",
                )
            embedded[model] = (tool.path, pointer)
    return embedded


def _hash_sources(layout: Layout, sources: tuple[str, ...]) -> str:
    """Content hash over every input file: names and bytes, in a fixed order."""
    digest = hashlib.sha256()
    for rel in sorted(sources):
        data = (layout.root / rel).read_bytes().replace(b"\r\n", b"\n")
        digest.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return "sha256:" + digest.hexdigest()
