"""Loading one version of an env (or one schema or tool file) into what the diff compares.

A `Side` is a bundle (every `$ref` resolved into one `$defs` table, exactly as generation
bundles it), where each def came from (so changes point into the files people edit), and
what the model generator needs to make the Python API of that version.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from envgen_runtime.schemadiff import NO_RESET_SCHEMA, Version

from generator.diff.errors import RoleFileError
from generator.diff.model import Role
from generator.errors import InputError, ManifestError
from generator.schema.bundle import ROLES, Bundle, Bundler
from generator.schema.check import check_reset_params, check_role_root
from generator.schema.jsonio import read_json
from generator.schema.loader import (
    MANIFEST,
    EnvInput,
    Layout,
    did_you_mean,
    role_file,
    tool_roots,
)
from generator.schema.manifest import Manifest, check_env_name, load_manifest
from generator.schema.tools import ToolInput, check_tool, embed_refs, load_tools

_ROLE_CLASS = {
    "action": "Action",
    "observation": "Observation",
    "state": "State",
    "reset": "ResetParams",
}
NO_RESET = "EnvgenNoResetParams"
"""The def of an env without reset.schema.json (`NO_RESET_SCHEMA`): its clients send no
reset parameters (`{}` only), and its server declares none, so a parameter sent to it
counts as rejected."""


@dataclass
class Side:
    """One version of one env, bundled, with the provenance of every def."""

    label: str
    name: str
    manifest: Manifest | None
    bundle: Bundle
    owners: dict[str, tuple[str, str]]
    codegen: EnvInput
    hidden: frozenset[str] = frozenset()
    manifest_file: str = ""
    tools: tuple[ToolInput, ...] = ()
    """A tool env's tools (`schemas/<env>/tools/`), bundled as generation bundles them."""

    def role_def(self, role: Role) -> str:
        return self.bundle.role_names[role]

    @property
    def version(self) -> Version:
        """What the wire comparer reads of this side: every def, and each role's root."""
        return Version(defs=self.bundle.defs, roots=self.bundle.role_names)

    def where(self, def_name: str, pointer: str) -> tuple[str, str]:
        """File and JSON pointer (in that file) of a location inside a def."""
        file, base = self.owners.get(def_name, (self.label, ""))
        return file, base + pointer


def relabel(exc: InputError, label: str) -> InputError:
    """The same error, its file shown as `label:file` (a git revision's copy of the file)."""
    return type(exc)(
        exc.detail,
        file=f"{label}:{exc.file}",
        pointer=exc.pointer,
        line=exc.line,
        column=exc.column,
        hint=exc.hint,
    )


def load_env_side(
    layout: Layout,
    name: str,
    label: str,
    tools_from: Path | None = None,
    tools_display: Callable[[Path], str] | None = None,
) -> Side:
    """Read env.toml, the role schemas and the tools of `name` as `envgen generate` would.

    `tools_from`: a folder whose `tools/` to read instead of the env's own (a live server's
    listing, as `verify` compares it), shown in errors and changes by `tools_display`.
    """
    env_dir = layout.schemas / name
    problem = check_env_name(name)
    if problem:
        raise InputError(f"env name {name!r} {problem}", file=layout.display(env_dir))
    manifest_path = env_dir / MANIFEST
    if not manifest_path.is_file():
        raise ManifestError(
            f"no environment named {name!r}",
            file=layout.display(manifest_path),
            hint=did_you_mean(layout, name),
        )
    manifest = load_manifest(manifest_path, layout.display(manifest_path), name)
    prefix = manifest.class_prefix
    role_names = {role: f"{prefix}{_ROLE_CLASS[role]}" for role in ROLES}
    files = {role: role_file(env_dir, role) for role in ROLES}
    for role, path in files.items():
        check_role_root(read_json(path, layout.display(path)), layout.display(path), role)
    reset_path = role_file(env_dir, "reset")
    reset_display = layout.display(reset_path)
    if reset_path.exists():
        check_reset_params(read_json(reset_path, reset_display), reset_display)
        files["reset"] = reset_path
        role_names["reset"] = f"{prefix}{_ROLE_CLASS['reset']}"
    else:
        role_names["reset"] = NO_RESET
    found = load_tools(tools_from or env_dir, tools_display or layout.display)
    bundler = Bundler(layout.schemas, layout.root)
    bundler.preload(found.documents)
    bundle = bundler.bundle(files, role_names, tool_roots(found.tools))
    owners = _owners(bundler, bundle)
    hidden: frozenset[str] = frozenset()
    if "reset" not in files:
        bundle.defs[NO_RESET] = dict(NO_RESET_SCHEMA)
        owners[NO_RESET] = (reset_display, "")
        hidden = frozenset({NO_RESET})
    codegen = EnvInput(
        manifest=manifest, bundle=bundle, sources=(), schema_hash="", tools=found.tools
    )
    return Side(
        label=label,
        name=name,
        manifest=manifest,
        bundle=bundle,
        owners=owners,
        codegen=codegen,
        hidden=hidden,
        manifest_file=layout.display(manifest_path),
        tools=found.tools,
    )


def load_role_side(
    path: Path, role: Role, label: str, cwd: Path, schemas_root: Path | None = None
) -> Side:
    """One schema file for `--role`: its refs resolved relative to its own folder.

    Refs may reach anywhere under `schemas_root` (default: the file's own folder), as a
    committed env's refs reach `schemas/_shared/`.
    """
    if not path.is_file():
        raise RoleFileError("file not found", file=label)
    display = label
    if role == "reset":
        check_reset_params(read_json(path, display), display)
    else:
        check_role_root(read_json(path, display), display, role)
    name = _ROLE_CLASS[role]
    bundler = Bundler(schemas_root or path.parent, cwd)
    every = (*ROLES, "reset")
    bundle = bundler.bundle({r: path for r in every}, {r: name for r in every})
    owners = _owners(bundler, bundle)
    owners[name] = (display, "")
    # The model generator needs all three roles; the other two are placeholders left out of
    # the API comparison.
    defs = dict(bundle.defs)
    role_names: dict[str, str] = {}
    hidden = set()
    for other in every:
        if other == role:
            role_names[other] = name
        else:
            placeholder = f"EnvgenUnused{_ROLE_CLASS[other]}"
            defs[placeholder] = {"type": "object"}
            role_names[other] = placeholder
            hidden.add(placeholder)
    codegen = EnvInput(
        manifest=_file_manifest(),
        bundle=Bundle(defs=defs, role_names=role_names),
        sources=(),
        schema_hash="",
    )
    return Side(
        label=label,
        name=display,
        manifest=None,
        bundle=bundle,
        owners=owners,
        codegen=codegen,
        hidden=frozenset(hidden),
    )


def load_tool_side(path: Path, label: str, cwd: Path) -> Side:
    """One tool file for `--role tool`, checked as `envgen generate` checks tool files.

    Its refs are resolved relative to its own folder; the three role models the generator
    needs are placeholders left out of the comparison.
    """
    if not path.is_file():
        raise RoleFileError("file not found", file=label)
    doc = read_json(path, label)
    tool = replace(check_tool(doc, label, path), display=label)
    bundler = Bundler(path.parent, cwd)
    bundler.preload({path: embed_refs(doc)})
    roots = tool_roots((tool,))
    bundle = bundler.bundle({}, {}, roots)
    owners = _owners(bundler, bundle)
    owners.update({model: (label, pointer) for model, (_, pointer) in roots.items()})
    defs = dict(bundle.defs)
    role_names: dict[str, str] = {}
    for role in (*ROLES, "reset"):
        placeholder = f"EnvgenUnused{_ROLE_CLASS[role]}"
        defs[placeholder] = {"type": "object"}
        role_names[role] = placeholder
    codegen = EnvInput(
        manifest=_file_manifest(),
        bundle=Bundle(defs=defs, role_names=role_names),
        sources=(),
        schema_hash="",
        tools=(tool,),
    )
    return Side(
        label=label,
        name=label,
        manifest=None,
        bundle=Bundle(defs=bundle.defs, role_names=role_names),
        owners=owners,
        codegen=codegen,
        hidden=frozenset(role_names.values()),
        tools=(tool,),
    )


def _file_manifest() -> Manifest:
    """The manifest a diff of bare files generates with (no env.toml to read)."""
    return Manifest(
        name="role_diff",
        version="0.0.0",
        description="",
        class_prefix="",
        transport="websocket",
        model_type="pydantic",
        server_command=(),
        health_path="/health",
        startup_timeout_s=60.0,
        docker_image=None,
        docker_port=8000,
    )


def _owners(bundler: Bundler, bundle: Bundle) -> dict[str, tuple[str, str]]:
    """Def name -> (file, pointer) it was taken from, as the bundler recorded it.

    Asking the bundler keeps generation and diff on one bundling code path instead of a
    second resolver that could disagree.
    """
    out: dict[str, tuple[str, str]] = {}
    for name in bundle.defs:
        origin = bundler.origin(name)
        if origin is not None:
            out[name] = origin
    return out
