"""One `envgen verify` run: drift (a tool env's tool listing too), a tool env's tool calls,
boundary actions, fuzzing, negative cases, on one server."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from generator.schema.loader import Layout
from generator.verify.drift import check_drift, check_version
from generator.verify.fuzz import FuzzOptions, fuzz
from generator.verify.model import VerifyReport, Violation
from generator.verify.negative import check_negative
from generator.verify.play import Counters, Player, ServerDown
from generator.verify.probe import probe
from generator.verify.schemas import CommittedSchemas
from generator.verify.session import WireSession
from generator.verify.target import Target
from generator.verify.tool_drift import check_tool_drift
from generator.verify.tools import check_tools


@dataclass(frozen=True)
class VerifyOptions:
    """What to run and how much of it; the CLI's flags."""

    seed: int = 0
    max_examples: int = 50
    max_steps: int = 8
    time_budget_s: float = 45.0
    timeout_s: float = 15.0
    transport: str | None = None
    drift: bool = True
    negative: bool = True


def verify(
    layout: Layout, schemas: CommittedSchemas, target: Target, options: VerifyOptions
) -> VerifyReport:
    """Check the server at `target` against the committed schemas of `schemas.name`."""
    transport = options.transport or schemas.env.manifest.transport
    report = VerifyReport(env=schemas.name, url=target.url, transport=transport, seed=options.seed)
    if options.drift:
        check_drift(layout, schemas, target.url, report)
        check_version(layout, schemas, target.url, report)
        if schemas.env.tools:
            check_tool_drift(layout, schemas, target.url, report)
    counters = Counters()
    revive: Callable[[], str] | None = None
    if target.can_restart:

        def revive() -> str:
            report.notes.append("the server died and was started again")
            target.restart()
            return target.url

    session = WireSession(target.url, transport, options.timeout_s)
    player = Player(session, schemas, counters, revive)
    deadline = time.monotonic() + options.time_budget_s
    fuzz_options = FuzzOptions(options.max_examples, options.max_steps, options.seed, deadline)
    try:
        if schemas.env.tools:
            check_tools(player, report, fuzz_options)
        found = probe(player, report, fuzz_options)
        fuzz(player, report, fuzz_options, found)
        if options.negative:
            check_negative(player, report, options.seed)
    except ServerDown as exc:
        report.add(Violation("server.session-lost", str(exc), seed=options.seed))
    finally:
        session.close()
    report.episodes, report.steps = counters.episodes, counters.steps
    return report
