"""Running a diff: git revisions or two files in, a judged `Report` out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from envgen_runtime.schemadiff import Policy

from generator.diff import ignore
from generator.diff.engine import compare_sides
from generator.diff.gate import judge
from generator.diff.gitrev import checkout, toplevel
from generator.diff.locate import line_of
from generator.diff.model import (
    REPORT_ROLES,
    Change,
    ChangeClass,
    EnvReport,
    EnvVersion,
    Report,
    ReportRole,
)
from generator.diff.sides import Side, load_env_side, load_role_side, load_tool_side, relabel
from generator.errors import InputError
from generator.schema.loader import Layout, discover_envs

WORKING_TREE = "working tree"


@dataclass
class Options:
    fail_on: str = "breaking-code"
    overrides: dict[str, bool | None] = field(default_factory=dict)
    ignore_files: tuple[Path, ...] = ()
    code: bool = True
    roles: tuple[ReportRole, ...] = REPORT_ROLES  # `--role` with `--base`: only these


def diff_revisions(
    layout: Layout, base: str, head: str | None, envs: list[str], options: Options
) -> Report:
    """Compare schemas/ at `base` with `head` (the working tree when None)."""
    report = Report(base=base, head=head or WORKING_TREE, fail_on=options.fail_on)
    prefix = Path(os.path.relpath(layout.root, toplevel(layout.root))).as_posix()
    report.path_prefix = "" if prefix == "." else prefix + "/"
    extra = (ignore.REPO_FILE,)
    with checkout(layout, base, extra) as old_layout, _head(layout, head, extra) as new_layout:
        names = _names(old_layout, new_layout, envs, layout)
        repo_entries = ignore.load(
            new_layout.root / ignore.REPO_FILE, _shown(ignore.REPO_FILE, head), None
        )
        for path in options.ignore_files:
            repo_entries += ignore.load(path, str(path), None)
        for name in names:
            old = _load(old_layout, name, base)
            new = _load(new_layout, name, head)
            env_file = new_layout.schemas / name / ignore.ENV_FILE
            entries = ignore.load(env_file, _shown(new_layout.display(env_file), head), name)
            env_report = _env_report(name, old, new, options)
            env_report.ignore_file = layout.display(layout.schemas / name / ignore.ENV_FILE)
            env_report.manifest_file = layout.display(layout.schemas / name / "env.toml")
            judge(env_report, options.fail_on, ignore.IgnoreSet([*repo_entries, *entries]))
            _add_lines(env_report, new_layout if new else old_layout)
            report.envs.append(env_report)
    return report


def diff_files(
    role: ReportRole, old_path: Path, new_path: Path, options: Options, cwd: Path
) -> Report:
    """Compare two schema files for one role (`tool`: two tool files)."""
    old_label, new_label = _display(old_path, cwd), _display(new_path, cwd)
    report = Report(base=old_label, head=new_label, fail_on=options.fail_on)
    old, new = _file_sides(role, ((old_path, old_label), (new_path, new_label)), cwd)
    policy = Policy.resolve({}, options.overrides)
    env_report = EnvReport(
        env=new_label, status="changed", version=EnvVersion(None, None), policy=policy.as_dict()
    )
    env_report.changes = compare_sides(old, new, policy, roles=(role,), code=options.code)
    if not env_report.changes:
        env_report.status = "unchanged"
    entries: list[ignore.Entry] = []
    for path in options.ignore_files:
        entries += ignore.load(path, str(path), "*")
    judge(env_report, options.fail_on, ignore.IgnoreSet(entries))
    for change in env_report.changes:
        change.line = line_of(new_path if change.file == new_label else old_path, change.pointer)
    report.envs.append(env_report)
    return report


def _file_sides(
    role: ReportRole, pairs: tuple[tuple[Path, str], tuple[Path, str]], cwd: Path
) -> tuple[Side, Side]:
    def load(path: Path, label: str) -> Side:
        if role == "tool":
            return load_tool_side(path.resolve(), label, cwd)
        return load_role_side(path.resolve(), role, label, cwd)

    return load(*pairs[0]), load(*pairs[1])


@contextmanager
def _head(layout: Layout, head: str | None, extra: tuple[str, ...]) -> Iterator[Layout]:
    if head is None:
        with nullcontext(layout) as same:
            yield same
    else:
        with checkout(layout, head, extra) as other:
            yield other


def _names(old: Layout, new: Layout, wanted: list[str], layout: Layout) -> list[str]:
    present = set(discover_envs(old)) | set(discover_envs(new))
    if not wanted:
        return sorted(present)
    for name in wanted:
        if name not in present:
            raise InputError(
                f"no environment named {name!r} at either revision",
                file=layout.display(layout.schemas / name),
            )
    return list(dict.fromkeys(wanted))


def _shown(path: str, rev: str | None) -> str:
    return path if rev is None else f"{rev}:{path}"


def _load(layout: Layout, name: str, rev: str | None) -> Side | None:
    if not (layout.schemas / name / "env.toml").is_file():
        return None
    try:
        return load_env_side(layout, name, rev or WORKING_TREE)
    except InputError as exc:
        raise relabel(exc, rev) if rev is not None else exc from None


def _env_report(name: str, old: Side | None, new: Side | None, options: Options) -> EnvReport:
    either = new or old
    manifest = either.manifest if either is not None else None
    settings = dict(manifest.compat) if manifest is not None else {}
    policy = Policy.resolve(settings, options.overrides)
    version = EnvVersion(
        old.manifest.version if old and old.manifest else None,
        new.manifest.version if new and new.manifest else None,
    )
    report = EnvReport(env=name, status="changed", version=version, policy=policy.as_dict())
    if old is None and new is not None:
        report.status = "added"
        report.changes = [_env_change(new, "env.added", "safe", f"environment {name!r} added")]
    elif new is None and old is not None:
        report.status = "removed"
        report.changes = [
            _env_change(
                old,
                "env.removed",
                "breaking",
                f"environment {name!r} removed; clients of it can no longer talk to it",
            )
        ]
    elif old is not None and new is not None:
        report.changes = compare_sides(old, new, policy, options.roles, code=options.code)
        if not report.changes:
            report.status = "unchanged"
    return report


def _env_change(side: Side, rule: str, cls: ChangeClass, message: str) -> Change:
    return Change(
        rule=rule, change_class=cls, role=None, file=side.manifest_file, pointer="", message=message
    )


def _add_lines(report: EnvReport, layout: Layout) -> None:
    for change in report.changes:
        if change.file:
            change.line = line_of(layout.root / change.file, change.pointer)


def _display(path: Path, cwd: Path) -> str:
    try:
        return path.resolve().relative_to(cwd.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
