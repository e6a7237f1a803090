"""The data a diff produces: changes, their classes, and the per-env and overall reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# The roles and their directions are the comparer's, in the runtime: one definition.
from envgen_runtime.schemadiff import CLIENT_WRITTEN as CLIENT_WRITTEN
from envgen_runtime.schemadiff import ROLES as ROLES
from envgen_runtime.schemadiff import Role as Role
from envgen_runtime.schemadiff import writer_is_old as writer_is_old

ReportRole = Role | Literal["tool"]
"""What a change is reported under: a wire role, or `tool` for a tool env's tool files (each
tool's input schema is judged the action's way, its output schema the observation's)."""
REPORT_ROLES: tuple[ReportRole, ...] = (*ROLES, "tool")
OUTPUT = "/outputSchema"


def tool_direction(pointer: str) -> Role:
    """The wire role a tool-file pointer is judged as: its output schema the observation's
    way, the rest (its input schema, the tool itself) the action's: clients call tools."""
    if pointer == OUTPUT or pointer.startswith(OUTPUT + "/"):
        return "observation"
    return "action"


ChangeClass = Literal["breaking", "breaking-code", "safe"]
CLASS_ORDER: dict[str, int] = {"safe": 0, "breaking-code": 1, "breaking": 2}

# What became of a change once policy, version and ignore files were applied.
Status = Literal["fails", "allowed", "ignored", "reported", "ok"]

NO_WITNESS = object()


@dataclass
class Change:
    """One difference between the old and new schemas, with its verdict."""

    rule: str
    change_class: ChangeClass
    role: ReportRole | None
    file: str
    pointer: str
    message: str
    path: str = ""
    line: int | None = None
    witness: Any = NO_WITNESS
    note: str = ""
    status: Status = "ok"
    ignore_reason: str = ""

    @property
    def has_witness(self) -> bool:
        return self.witness is not NO_WITNESS

    @property
    def is_breaking(self) -> bool:
        return self.change_class != "safe"

    def sort_key(self) -> tuple[int, str, str, str]:
        role_index = REPORT_ROLES.index(self.role) if self.role else -1
        return (role_index, self.file, self.pointer, self.rule)


@dataclass
class EnvVersion:
    base: str | None
    head: str | None

    @property
    def major_bumped(self) -> bool:
        """Compatibility version raised: 1.x -> 2.x, and 0.1.x -> 0.2.x as Cargo reads semver.

        (The name is kept for the JSON report's `major_bumped` key.)
        """
        if not self.base or not self.head:
            return False
        return compat_level(self.head) > compat_level(self.base)


def compat_level(version: str) -> tuple[int, int, int]:
    """The part of a semantic version that must change for a break: its leftmost non-zero."""
    core = version.split("-", 1)[0].split("+", 1)[0]
    parts = [int(p) for p in core.split(".")[:3]]
    major, minor, patch = [*parts, 0, 0, 0][:3]
    if major:
        return (major, 0, 0)
    if minor:
        return (0, minor, 0)
    return (0, 0, patch)


@dataclass
class EnvReport:
    """Every change found for one env (or one pair of files in --role mode)."""

    env: str
    status: Literal["changed", "unchanged", "added", "removed"]
    version: EnvVersion
    policy: dict[str, bool] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    stale_ignores: list[str] = field(default_factory=list)
    # Where an ignore entry for this env goes (schemas/<env>/compat-ignore.toml); "" when
    # comparing two files, where entries go in a file passed with --ignore.
    ignore_file: str = ""
    manifest_file: str = ""  # the env.toml whose version a compatibility raise changes

    def failing(self) -> list[Change]:
        return [c for c in self.changes if c.status == "fails"]


@dataclass
class Report:
    """The whole run: what was compared, with what threshold, and what was found."""

    base: str
    head: str
    fail_on: str
    envs: list[EnvReport] = field(default_factory=list)
    # Where the project sits inside its git repository ("" at the top): annotations on
    # GitHub name files from the repository's top.
    path_prefix: str = ""

    @property
    def failed(self) -> bool:
        return any(env.failing() for env in self.envs)

    def counts(self) -> dict[str, int]:
        out = {"breaking": 0, "breaking-code": 0, "safe": 0, "failing": 0}
        for env in self.envs:
            for change in env.changes:
                out[change.change_class] += 1
                out["failing"] += change.status == "fails"
        return out
