"""What changed in the generated Python API between two versions (`breaking-code`).

Whether a type change breaks code depends on how code uses the class: actions are built by
user code (the new type must accept every old value), observations and state are read (the
new type must fit inside the old one). A tool's arguments are built and its result read,
the same way round. A tool method removed or renamed (`env.tools.<name>`), or returning
another type, breaks the code calling it. The API itself is read by `diff/apiread`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.diff.apiread import Api, api_of
from generator.diff.model import CLIENT_WRITTEN, ROLES, Change, ChangeClass, ReportRole
from generator.diff.pytypes import PyType, is_subtype
from generator.diff.sides import Side
from generator.errors import EnvgenError
from generator.schema.check import json_pointer

# -- comparing -----------------------------------------------------------------------------------


@dataclass
class _Ctx:
    old: Side
    new: Side
    old_api: Api
    new_api: Api
    renames: dict[str, str]
    changes: list[Change] = field(default_factory=list)

    def add(
        self,
        rule: str,
        cls: ChangeClass,
        side: Side,
        api: Api,
        name: str,
        wire: str | None,
        message: str,
    ) -> None:
        file, pointer = _place(side, api, name)
        if wire is not None:
            pointer += json_pointer(["properties", wire])
        roles = api.uses.get(name, set())
        role: ReportRole | None = next((r for r in ROLES if r in roles), None)
        if role is None and name in api.tool_uses:
            role = "tool"
        self.changes.append(
            Change(
                rule=rule,
                change_class=cls,
                role=role,
                file=file,
                pointer=pointer,
                message=message,
            )
        )


def code_changes(old: Side, new: Side) -> list[Change]:
    """Every difference in the generated API between two versions of an env."""
    try:
        old_api = api_of(old)
    except EnvgenError:
        return []  # the old version never generated, so there is no API to break
    try:
        new_api = api_of(new)
    except EnvgenError as exc:
        file, _ = new.where(new.role_def("action"), "")
        return [
            Change(
                rule="code.generation-failed",
                change_class="breaking-code",
                role=None,
                file=file,
                pointer="",
                message=f"the new schemas do not generate: {exc}",
            )
        ]
    ctx = _Ctx(old, new, old_api, new_api, _renames(old_api, new_api))
    _model_type(ctx)
    _compare_names(ctx)
    _compare_methods(ctx)
    return ctx.changes


def _compare_methods(ctx: _Ctx) -> None:
    """Tool methods by wire name: removed, renamed, returning another type, added.

    A tool gone whose arguments class reappears under another tool (the class renamed, as
    `_renames` matches them by shape) is reported as its method renamed."""
    old, new = ctx.old_api.methods, ctx.new_api.methods
    gone, fresh = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    moved: dict[str, str] = {}
    for wire in gone:
        target = ctx.renames.get(old[wire].arguments)
        match = [w for w in fresh if new[w].arguments == target and w not in moved.values()]
        if match:
            moved[wire] = match[0]
    for wire in gone:
        was = old[wire]
        if wire in moved:
            now = new[moved[wire]]
            message = f"tools.{was.name}() is now tools.{now.name}() (tool {moved[wire]!r})"
            _method_change(ctx, "code.method-renamed", "breaking-code", now.file, "/name", message)
        else:
            message = f"tools.{was.name}() is no longer generated"
            _method_change(ctx, "code.method-removed", "breaking-code", was.file, "", message)
    for wire in fresh:
        if wire not in moved.values():
            message = f"tools.{new[wire].name}() is new"
            _method_change(ctx, "code.method-added", "safe", new[wire].file, "", message)
    for wire in sorted(old.keys() & new.keys()):
        was, now = old[wire], new[wire]
        if ctx.renames.get(was.result, was.result) != now.result:
            message = f"tools.{now.name}() returns {now.result}, not {was.result}"
            _method_change(
                ctx, "code.method-result-changed", "breaking-code", now.file, "", message
            )


def _method_change(
    ctx: _Ctx, rule: str, cls: ChangeClass, file: str, pointer: str, message: str
) -> None:
    ctx.changes.append(
        Change(
            rule=rule, change_class=cls, role="tool", file=file, pointer=pointer, message=message
        )
    )


def _renames(old: Api, new: Api) -> dict[str, str]:
    """Old name -> new name for classes that moved: role classes, then identical shapes."""
    renames: dict[str, str] = {}
    for role, name in old.role_classes.items():
        new_name = new.role_classes.get(role)
        if new_name and new_name != name and name not in new.names():
            renames[name] = new_name
    gone = sorted(old.names() - new.names() - set(renames))
    fresh = sorted(new.names() - old.names() - set(renames.values()))
    for name in gone:
        shape = old.shape(name)
        for candidate in fresh:
            if new.shape(candidate) == shape and candidate not in renames.values():
                renames[name] = candidate
                break
    return renames


def _model_type(ctx: _Ctx) -> None:
    old_m, new_m = ctx.old.manifest, ctx.new.manifest
    if old_m and new_m and old_m.model_type != new_m.model_type:
        env_toml = ctx.new.manifest_file
        ctx.changes.append(
            Change(
                rule="code.model-type-changed",
                change_class="breaking-code",
                role=None,
                file=env_toml,
                pointer="/model_type",
                message=f"model_type changed from {old_m.model_type} to {new_m.model_type}; "
                "generated classes change kind",
            )
        )


def _compare_names(ctx: _Ctx) -> None:
    old_api, new_api = ctx.old_api, ctx.new_api
    for old_name in sorted(old_api.names()):
        new_name = ctx.renames.get(old_name, old_name)
        if new_name not in new_api.names():
            ctx.add(
                "code.class-removed",
                "breaking-code",
                ctx.old,
                old_api,
                old_name,
                None,
                f"{old_name} is no longer generated",
            )
            continue
        if new_name != old_name:
            ctx.add(
                "code.class-renamed",
                "breaking-code",
                ctx.new,
                new_api,
                new_name,
                None,
                f"{old_name} is now generated as {new_name}",
            )
        if old_name in old_api.aliases and new_name in new_api.aliases:
            _compare_type(
                ctx, old_name, new_name, None, old_api.aliases[old_name], new_api.aliases[new_name]
            )
        elif old_name in old_api.classes and new_name in new_api.classes:
            _compare_attrs(ctx, old_name, new_name)
        else:
            ctx.add(
                "code.type-changed",
                "breaking-code",
                ctx.new,
                new_api,
                new_name,
                None,
                f"{new_name} changed between a class and a type alias",
            )
    for name in sorted(new_api.names() - {ctx.renames.get(n, n) for n in old_api.names()}):
        ctx.add("code.class-added", "safe", ctx.new, new_api, name, None, f"{name} is new")


def _compare_attrs(ctx: _Ctx, old_name: str, new_name: str) -> None:
    old_attrs = ctx.old_api.classes[old_name]
    new_attrs = ctx.new_api.classes[new_name]
    writes, _ = _usage(ctx, old_name, new_name)
    for wire, old_attr in old_attrs.items():
        new_attr = new_attrs.get(wire)
        label = f"{new_name}.{old_attr.name}"
        if new_attr is None:
            ctx.add(
                "code.attribute-removed",
                "breaking-code",
                ctx.old,
                ctx.old_api,
                old_name,
                wire,
                f"{old_name}.{old_attr.name} is no longer generated",
            )
            continue
        if new_attr.name != old_attr.name:
            ctx.add(
                "code.attribute-renamed",
                "breaking-code",
                ctx.new,
                ctx.new_api,
                new_name,
                wire,
                f"{old_name}.{old_attr.name} is now {new_name}.{new_attr.name} "
                f"(wire name {wire!r})",
            )
        if new_attr.annotation != old_attr.annotation:
            _compare_type(
                ctx,
                old_name,
                new_name,
                wire,
                (old_attr.annotation, old_attr.type),
                (new_attr.annotation, new_attr.type),
                label,
            )
        if writes and new_attr.required and not old_attr.required:
            ctx.add(
                "code.attribute-now-required",
                "breaking-code",
                ctx.new,
                ctx.new_api,
                new_name,
                wire,
                f"{label} has no default any more; code building {new_name} must pass it",
            )
    for wire, new_attr in new_attrs.items():
        if wire in old_attrs:
            continue
        breaks = writes and new_attr.required
        ctx.add(
            "code.attribute-now-required" if breaks else "code.attribute-added",
            "breaking-code" if breaks else "safe",
            ctx.new,
            ctx.new_api,
            new_name,
            wire,
            f"{new_name}.{new_attr.name} is new" + (" and required" if breaks else ""),
        )


def _usage(ctx: _Ctx, old_name: str, new_name: str) -> tuple[bool, bool]:
    roles = ctx.old_api.uses.get(old_name, set()) | ctx.new_api.uses.get(new_name, set())
    roles |= ctx.old_api.tool_uses.get(old_name, set()) | ctx.new_api.tool_uses.get(new_name, set())
    return bool(roles & set(CLIENT_WRITTEN)), bool(roles & {"observation", "state"})


def _compare_type(
    ctx: _Ctx,
    old_name: str,
    new_name: str,
    wire: str | None,
    old: tuple[str, PyType],
    new: tuple[str, PyType],
    label: str | None = None,
) -> None:
    if old[0] == new[0]:
        return
    writes, reads = _usage(ctx, old_name, new_name)
    if not (writes or reads):  # not reachable from a role: any change may break its users
        writes = reads = True
    widens = is_subtype(old[1], new[1], ctx.renames)
    narrows = is_subtype(new[1], old[1], ctx.renames)
    fits = (widens or not writes) and (narrows or not reads)
    label = label or new_name
    how = (
        "built by code"
        if writes and not reads
        else "read by code"
        if reads and not writes
        else "used"
    )
    ctx.add(
        "code.type-changed-compatibly" if fits else "code.type-changed",
        "safe" if fits else "breaking-code",
        ctx.new,
        ctx.new_api,
        new_name,
        wire,
        f"{label}: {old[0]} -> {new[0]} ({how})",
    )


def _place(side: Side, api: Api, name: str) -> tuple[str, str]:
    """Where a class or alias comes from: its def, or the attribute that holds it."""
    if name in side.owners:
        return side.owners[name]
    for owner, wire in api.mentions.get(name, []):
        if owner in side.owners:
            file, pointer = side.owners[owner]
            return file, pointer + json_pointer(["properties", wire])
    return side.where(side.role_def("action"), "")[0], ""
