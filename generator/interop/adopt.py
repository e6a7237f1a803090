"""Adding an environment made elsewhere (`pull`, `import`) to the project, safely.

The new schemas are first generated in a scratch project: only when that works are they
swapped into `schemas/<env>/` and the client written to `generated/<env>/`. An existing
environment is replaced only when asked (`--force`), and the change is shown twice over:
classified as `envgen diff` classes it (breaking, breaking-code, safe), and as a text diff.
"""

from __future__ import annotations

import dataclasses
import difflib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from envgen_runtime.schemadiff import Policy

from generator.codegen.output import build, write
from generator.diff.engine import compare_sides
from generator.diff.model import Change
from generator.diff.sides import load_env_side
from generator.errors import EnvExistsError, EnvgenError
from generator.schema.env_folder import EnvFiles, write_env_folder
from generator.schema.loader import Layout
from generator.schema.manifest import check_env_name


@dataclass
class AdoptReport:
    target: Path
    replaced: bool
    changes: list[str] = field(default_factory=list)  # unified diff lines of schema files
    classified: list[Change] = field(default_factory=list)  # as `envgen diff` judges them
    unclassified_reason: str = ""  # why `classified` is empty although files changed
    old_version: str | None = None
    new_version: str | None = None


def adopt(layout: Layout, files: EnvFiles, *, force: bool = False) -> AdoptReport:
    problem = check_env_name(files.name)
    if problem:
        raise EnvgenError(f"env name {files.name!r} {problem}", hint="pass --name NAME")
    target = layout.schemas / files.name
    existed = target.exists()
    if existed and not force:
        raise EnvExistsError(
            f"{layout.display(target)} already exists",
            hint="pass --force to replace it (the changes are shown)",
        )
    files = _keep_reset_schema(target, files)
    with tempfile.TemporaryDirectory(prefix="envgen-adopt-") as tmp:
        scratch = Layout.at(Path(tmp))
        write_env_folder(scratch.schemas / files.name, files)
        build(scratch, [files.name], use_cache=False)  # raises on any problem
        report = AdoptReport(target=target, replaced=existed, new_version=files.version)
        if existed:
            report.changes = _changes(target, scratch.schemas / files.name)
            _classify(report, layout, scratch, files.name)
    write_env_folder(target, files, replace=True)
    write(layout, build(layout, [files.name]))
    return report


def _keep_reset_schema(target: Path, files: EnvFiles) -> EnvFiles:
    """An existing reset.schema.json stays when the new files bring none.

    Servers that do not publish their reset parameters (openenv 0.10 publishes none) say
    nothing about them, so a hand-written reset schema is not dropped by `pull --force`.
    """
    kept = target / "reset.schema.json"
    extra = dict(files.extra_files or {})
    if "reset" in files.schemas or kept.name in extra or not kept.is_file():
        return files
    extra[kept.name] = kept.read_text(encoding="utf-8")
    return dataclasses.replace(files, extra_files=extra)


def _classify(report: AdoptReport, old: Layout, new: Layout, name: str) -> None:
    """Judge the replacement as `envgen diff` would, with the old env's [compat] policy."""
    try:
        before = load_env_side(old, name, "before")
        after = load_env_side(new, name, "pulled")
    except EnvgenError as exc:
        report.unclassified_reason = f"the existing schemas could not be read: {exc}"
        return
    report.old_version = before.manifest.version if before.manifest else None
    settings = dict(before.manifest.compat) if before.manifest else {}
    report.classified = compare_sides(before, after, Policy.resolve(settings, {}))


def _changes(old: Path, new: Path) -> list[str]:
    lines: list[str] = []

    def names(folder: Path) -> set[str]:  # a tool env's tools/*.json too
        return {p.relative_to(folder).as_posix() for p in folder.rglob("*.json")}

    for name in sorted(names(old) | names(new)):
        before = (old / name).read_text().splitlines() if (old / name).is_file() else []
        after = (new / name).read_text().splitlines() if (new / name).is_file() else []
        lines += difflib.unified_diff(
            before, after, f"{name} (before)", f"{name} (pulled)", lineterm=""
        )
    return lines
