"""What `envgen verify` finds: violations with their reproductions, and the whole report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Check ids, grouped by the part of verify that raises them. Documented in the README.
CHECKS: dict[str, str] = {
    "drift.breaking": "the server's /schema differs from the committed schemas in a way "
    "that breaks the committed client",
    "drift.version": "the server's /metadata version is not env.toml's version",
    "drift.tool": "a tool env's live tool listing differs from the committed tools in a way "
    "that breaks the committed client (a tool gone, a new required argument, ...)",
    "reset.observation": "a reset reply breaks the committed observation schema or envelope",
    "reset.done": "a reset reply says the episode is already done",
    "step.observation": "a step reply breaks the committed observation schema or envelope",
    "step.reward": "a reward that is not a finite number (or null)",
    "state.schema": "a state breaks the committed state schema",
    "state.missing-field": "a field the state schema declares is missing from the state "
    "(the client would silently fill in its default)",
    "state.step-count": "state().step_count does not count the steps of the episode",
    "state.episode-id": "state().episode_id is not the episode id given to reset()",
    "server.error": "a valid request got a server error (HTTP 5xx, EXECUTION_ERROR, ...)",
    "server.rejected-valid": "a valid action was refused as invalid",
    "server.session-lost": "the connection or session dropped during a valid request",
    "negative.accepted": "an action that breaks the action schema was accepted",
    "negative.server-error": "an invalid action caused a server error, not a validation error",
    "negative.unusable": "after an invalid action the server could not play a new episode",
    "tool.output": "a tool's result breaks its committed output schema (or has no "
    "structured_content although the tool has one)",
    "tool.missing": "the server answers tool_not_found for a committed tool",
    "tool.rejected-valid": "the server refused (invalid_args) arguments the tool's input "
    "schema allows",
    "tool.reply": "the reply to a tool call is not a tool call's observation (no result "
    "and no error, another tool's name)",
    "tool.error": "(a note, never a violation) a tool error for arguments the input schema "
    "allows: the tool's own answer, counted per tool",
}
NOTE_CHECKS = frozenset({"tool.error"})
"""Check ids reported as notes only (`VerifyReport.add` refuses them)."""


@dataclass(frozen=True)
class Violation:
    """One problem, with the minimal reproduction found for it."""

    check: str
    message: str
    pointer: str = ""
    """Where in the offending document (a reply, a state, a schema) the problem is."""
    value: Any = None
    """The offending value, as JSON."""
    seed: int | None = None
    actions: tuple[Any, ...] = ()
    """The actions sent after `reset(seed=seed)` to reproduce it (shrunk when fuzzed)."""
    file: str | None = None
    """The committed schema file the problem concerns, for annotations."""
    reset_params: dict[str, Any] | None = None
    """The reset parameters sent with `reset(seed=seed)` (envs with reset.schema.json)."""
    boundary: dict[str, Any] | None = None
    """For a boundary action: the field's `pointer` in the action, the `bound` and the `value`
    (`role`: action, reset, or tool with the `tool`'s name: an argument at a bound)."""

    def as_dict(self) -> dict[str, Any]:
        out = {
            "check": self.check,
            "message": self.message,
            "pointer": self.pointer,
            "value": self.value,
            "seed": self.seed,
            "actions": list(self.actions),
            "file": self.file,
        }
        if self.reset_params is not None:
            out["reset_params"] = self.reset_params
        if self.boundary is not None:
            out["boundary"] = self.boundary
        return out


@dataclass
class VerifyReport:
    """Everything one `envgen verify` run found, in a stable order."""

    env: str
    url: str
    transport: str
    seed: int
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    episodes: int = 0
    steps: int = 0
    negative_cases: int = 0
    boundaries: int = 0
    """Boundary actions played (each one episode, counted in `episodes` too)."""

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, violation: Violation) -> None:
        if violation.check not in CHECKS or violation.check in NOTE_CHECKS:
            raise ValueError(f"unknown check {violation.check!r}")
        self.violations.append(violation)
