"""Tool calls: every tool of a tool env called with arguments its input schema allows.

For each committed tool (`schemas/<env>/tools/`), as the typed client calls it: a step
`{"type": "call_tool", "tool_name": ..., "arguments": ...}` on the env's session, each after
its own `reset(seed)`, so every reproduction is one reset and one call. The arguments: the
simplest ones, then each boundary (`verify/boundaries`, as actions get them: one argument at
a bound), then seeded random ones (`strategies.from_schema`, shrunk by hypothesis when one
fails). Each reply is held to the committed observation and envelope, and its result to the
tool's output schema when it has one (`tool.output`; also when FastMCP's own check of the
result against the tool's output schema failed, `SELF_CHECKED`). A failed call is read as the client
reads it (`envgen_runtime.client.tools.ToolSpec.read`):

- `tool_not_found` for a committed tool is `tool.missing`, and arguments the input schema
  allows refused as invalid (`invalid_args`, or FastMCP's validation message) is
  `tool.rejected-valid`: violations, since the typed client's call (validated before
  sending) would fail there (`classify_error` says how openenv's guessed error types are
  read);
- any other tool error (the tool raised, or returned `is_error`) is `tool.error`: a note
  per tool, never a violation. An input schema says what shape the arguments have, not what
  the tool can do with them (dividing by zero, a file that does not exist); MCP makes such an
  error a result the agent reads, and the typed client raises `ToolError` with the session
  going on. So it is part of the contract; the note counts the calls that erred and shows
  the first, so a tool that errs on every call stands out.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as seeded
from hypothesis.errors import HypothesisException

from generator.schema.tools import ToolInput
from generator.verify.boundaries import Boundary
from generator.verify.fuzz import FuzzOptions
from generator.verify.model import VerifyReport, Violation
from generator.verify.play import Player, episode_id_for
from generator.verify.probe import plan
from generator.verify.schemas import validator_for
from generator.verify.session import Outcome
from generator.verify.strategies import MISSING, from_schema, simplest

MAX_EXAMPLES = 25
"""Random argument sets per tool at most (fewer with a smaller --max-examples)."""
RESULT = "/observation/result"
SELF_CHECKED = ("Output validation error:", "Invalid structured content returned by tool")
"""How FastMCP's errors begin when a tool's result breaks the tool's own output schema
(FastMCP checks it before replying): an output problem, not a tool error."""
RAISED = "Error calling tool "
"""How FastMCP's error begins when the tool itself raised: a tool error, whatever the type."""
ARGUMENTS_REFUSED = re.compile(r"^\d+ validation errors? for call\[")
"""FastMCP's (pydantic's) refusal of a call's arguments."""


def classify_error(error_type: str, message: str) -> str:
    """The check a failed call comes to: `tool.output`, `tool.missing`,
    `tool.rejected-valid`, or `tool.error` (a note).

    openenv 0.10 guesses `error_type` from words in the message ("not found" is
    `tool_not_found`, "invalid" or "argument" is `invalid_args`), so a tool raising "file not
    found" would look like a missing tool, and FastMCP's refusal of arguments is an
    `execution_error`: FastMCP's own messages are read first, `error_type` only after.
    """
    if message.startswith(SELF_CHECKED):
        return "tool.output"
    if message.startswith(RAISED):
        return "tool.error"
    if ARGUMENTS_REFUSED.match(message):
        return "tool.rejected-valid"
    return {"tool_not_found": "tool.missing", "invalid_args": "tool.rejected-valid"}.get(
        error_type, "tool.error"
    )


_Problem = tuple[str, str, str, Any]
"""(check, message, pointer, value)."""
STRUCTURED = RESULT + "/structured_content"


@dataclass(frozen=True)
class ToolDocuments:
    """One committed tool: its input (and output) schema as validator documents."""

    tool: ToolInput
    arguments: dict[str, Any]
    result: dict[str, Any] | None


def call_action(tool: str, arguments: Any) -> dict[str, Any]:
    """The step action that calls `tool`, as the generated client sends it."""
    return {"type": "call_tool", "tool_name": tool, "arguments": arguments}


def tool_documents(player: Player) -> list[ToolDocuments]:
    env = player.schemas.env
    defs = env.bundle.defs
    out = []
    for tool in env.tools:
        arguments = {"$defs": defs, "$ref": f"#/$defs/{env.tool_model(tool, 'Arguments')}"}
        result = None
        if tool.output_pointer is not None:
            result = {"$defs": defs, "$ref": f"#/$defs/{env.tool_model(tool, 'Result')}"}
        out.append(ToolDocuments(tool, arguments, result))
    return out


@dataclass
class _Errors:
    """The tool errors of one tool's calls, for its `tool.error` note."""

    calls: int = 0
    errors: int = 0
    first: str = ""


@dataclass
class _Caller:
    """Calls one tool, each call after its own reset, and checks the reply."""

    player: Player
    docs: ToolDocuments
    seed: int
    report: VerifyReport
    errors: _Errors = field(default_factory=_Errors)
    seen: set[tuple[str, str]] = field(default_factory=set)

    def call(self, arguments: Any, skip: frozenset[str] = frozenset()) -> Violation | None:
        """The first problem of one call with `arguments` (checks in `skip` pass)."""
        name = self.docs.tool.name
        action = call_action(name, arguments)
        counters = self.player.counters
        counters.episodes += 1
        outcome = self.player.reset(self.seed, episode_id_for(self.seed), None)
        found = self._failed("reset", outcome, ())
        if found is not None or outcome.reply is None:
            return found
        counters.steps += 1
        self.errors.calls += 1
        outcome = self.player.session.step(action)
        found = self._failed("step", outcome, (action,))
        if found is not None or outcome.reply is None:
            return found
        for check, message, pointer, value in self._problems(outcome.reply, arguments):
            if check not in skip:
                return self._violation(check, message, pointer, value, (action,))
        return None

    def _problems(self, reply: dict[str, Any], arguments: Any) -> Iterator[_Problem]:
        name = self.docs.tool.name
        for problem in self.player.schemas.envelope_problems(reply):
            yield "step.observation", problem.message, problem.pointer, problem.value
        observation = reply.get("observation")
        if not isinstance(observation, dict):
            return
        error = observation.get("error")
        if isinstance(error, dict):
            kind, text = str(error.get("error_type") or "execution_error"), error.get("message")
            verdict = classify_error(kind, str(text))
            if verdict == "tool.output":
                message = f"{name}: the server's own check of its result failed: {text}"
                yield "tool.output", message, "/observation/error/message", text
            elif verdict == "tool.missing":
                yield "tool.missing", f"{name}: the server has no such tool: {text}", "", kind
            elif verdict == "tool.rejected-valid":
                message = f"{name}: arguments its input schema allows were refused: {text}"
                yield "tool.rejected-valid", message, "/observation/error", error
            else:
                self._tool_error(f"{kind} {json.dumps(text)}", arguments)
            return
        answered = observation.get("tool_name")
        if answered != name:
            message = f"called {name!r} but the reply is for {answered!r}"
            yield "tool.reply", message, "/observation/tool_name", answered
        result = observation.get("result")
        if not isinstance(result, dict):
            message = f"{name}: the reply holds neither a result object nor an error"
            yield "tool.reply", message, RESULT, result
            return
        if result.get("is_error", result.get("isError")):
            self._tool_error(f"is_error {json.dumps(result.get('content'))[:200]}", arguments)
            return
        if self.docs.result is None:
            return
        structured = result.get("structured_content", result.get("structuredContent"))
        if structured is None:
            message = f"{name} has an output schema but its result has no structured_content"
            yield "tool.output", message, STRUCTURED, None
            return
        for error in sorted(
            validator_for(self.docs.result).iter_errors(structured),
            key=lambda e: (list(map(str, e.absolute_path)), e.message),
        ):
            pointer = STRUCTURED + "".join(
                "/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path
            )
            yield "tool.output", f"{name}: {error.message}", pointer, error.instance

    def _tool_error(self, what: str, arguments: Any) -> None:
        self.errors.errors += 1
        if not self.errors.first:
            shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
            self.errors.first = f"{what} for arguments {shown[:200]}"

    def _failed(self, op: str, outcome: Outcome, actions: tuple[Any, ...]) -> Violation | None:
        checks = {
            "rejected": "server.rejected-valid",
            "server-error": "server.error",
            "lost": "server.session-lost",
            "protocol": "tool.reply" if op == "step" else "reset.observation",
        }
        if outcome.kind == "ok":
            return None
        message = f"{self.docs.tool.name}: {op}: {outcome.message}"
        return self._violation(checks[outcome.kind], message, "", None, actions)

    def _violation(
        self, check: str, message: str, pointer: str, value: Any, actions: tuple[Any, ...]
    ) -> Violation:
        file = self.docs.tool.display
        if check.startswith(("step.", "reset.")):
            file = self.player.schemas.files["observation"]
        return Violation(
            check=check,
            message=message,
            pointer=pointer,
            value=value,
            seed=self.seed,
            actions=actions,
            file=file,
        )

    def add(self, found: Violation, where: str = "") -> None:
        """Report `found` once per check (and boundary) of this tool."""
        if (found.check, where) not in self.seen:
            self.seen.add((found.check, where))
            self.report.add(found)


def check_tools(player: Player, report: VerifyReport, options: FuzzOptions) -> None:
    """Call every committed tool: simplest arguments, boundaries, then random ones."""
    for docs in tool_documents(player):
        caller = _Caller(player, docs, options.seed, report)
        base = simplest(docs.arguments, docs.arguments["$defs"])
        if base is MISSING:
            report.notes.append(f"tool {docs.tool.name}: no arguments can be built")
            continue
        boundaries, notes = plan(docs.arguments)
        report.notes += [f"tool {docs.tool.name}: {note}" for note in notes]
        plain = caller.call(base)
        if plain is not None:
            caller.add(plain)
        skip = frozenset(check for check, _ in caller.seen)
        for boundary in boundaries:
            if time.monotonic() >= options.deadline:
                report.notes.append(f"tool {docs.tool.name}: boundaries not all tried (time)")
                break
            report.boundaries += 1
            found = caller.call(boundary.action, skip)
            if found is not None:
                caller.add(_at_boundary(found, docs.tool.name, boundary), boundary.pointer)
        _random_calls(caller, options)
        _note_errors(report, docs.tool.name, caller.errors)


def _at_boundary(found: Violation, tool: str, boundary: Boundary) -> Violation:
    return Violation(
        check=found.check,
        message=f"at the boundary {boundary.describe()}: {found.message}",
        pointer=found.pointer,
        value=found.value,
        seed=found.seed,
        actions=found.actions,
        file=found.file,
        boundary={
            "role": "tool",
            "tool": tool,
            "pointer": boundary.pointer,
            "bound": boundary.bound,
            "value": boundary.value,
        },
    )


class _Found(Exception):
    def __init__(self, violation: Violation) -> None:
        super().__init__(violation.check)
        self.violation = violation


def _random_calls(caller: _Caller, options: FuzzOptions) -> None:
    """Seeded random arguments until a search finds nothing new; each failure shrunk."""
    try:
        arguments = from_schema(caller.docs.arguments)
    except HypothesisException as exc:
        caller.report.notes.append(f"tool {caller.docs.tool.name}: no random arguments ({exc})")
        return
    while time.monotonic() < options.deadline:
        found = _search(caller, arguments, options, frozenset(c for c, _ in caller.seen))
        if found is None:
            return
        caller.add(found)


def _search(
    caller: _Caller, arguments: Any, options: FuzzOptions, skip: frozenset[str]
) -> Violation | None:
    """One hypothesis search of `max_examples` argument sets; the shrunk failure, or None."""

    @seeded(options.seed)
    @settings(
        max_examples=min(MAX_EXAMPLES, options.max_examples),
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )
    @given(arguments)
    def one_call(values: Any) -> None:
        if time.monotonic() >= options.deadline:
            return
        found = caller.call(values, skip)
        if found is not None:
            raise _Found(found)

    try:
        one_call()
    except _Found as found:
        return found.violation
    return None


def _note_errors(report: VerifyReport, tool: str, errors: _Errors) -> None:
    if errors.errors:
        report.notes.append(
            f"tool.error: {tool}: {errors.errors} of {errors.calls} call(s) with arguments its "
            f"input schema allows were tool errors (the tool's own answer, not a violation); "
            f"first: {errors.first}"
        )
