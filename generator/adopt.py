"""Adding an environment made elsewhere (`pull`, `import`) to the project, safely.

The new schemas are first generated in a scratch project: only when that works are they
swapped into `schemas/<env>/` and the client written to `generated/<env>/`. An existing
environment is replaced only when asked (`--force`), and the change is shown.
"""

from __future__ import annotations

import difflib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from generator.env_folder import EnvFiles, write_env_folder
from generator.errors import EnvExistsError, EnvgenError
from generator.loader import Layout
from generator.manifest import check_env_name
from generator.output import build, write


@dataclass
class AdoptReport:
    target: Path
    replaced: bool
    changes: list[str] = field(default_factory=list)  # unified diff lines of schema files


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
    with tempfile.TemporaryDirectory(prefix="envgen-adopt-") as tmp:
        scratch = Layout.at(Path(tmp))
        write_env_folder(scratch.schemas / files.name, files)
        build(scratch, [files.name], use_cache=False)  # raises on any problem
        changes = _changes(target, scratch.schemas / files.name) if existed else []
    write_env_folder(target, files, replace=True)
    write(layout, build(layout, [files.name]))
    return AdoptReport(target=target, replaced=existed, changes=changes)


def _changes(old: Path, new: Path) -> list[str]:
    lines: list[str] = []
    names = sorted({p.name for p in old.glob("*.json")} | {p.name for p in new.glob("*.json")})
    for name in names:
        before = (old / name).read_text().splitlines() if (old / name).is_file() else []
        after = (new / name).read_text().splitlines() if (new / name).is_file() else []
        lines += difflib.unified_diff(
            before, after, f"{name} (before)", f"{name} (pulled)", lineterm=""
        )
    return lines
