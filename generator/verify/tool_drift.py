"""Tool drift: a tool env's live tool listing against its committed `tools/` files.

`/schema` says nothing of a tool env's tools (its action is the generic `call_tool`), so
`check_drift` cannot see a renamed tool or a new required argument; calls reveal them only
when a planted value happens to touch them. Here the listing `envgen pull` would write
(`interop.tool_listing.pull_tools`: MCP's `tools/list`, else OpenEnv's `list_tools` step) is
judged against the committed tools by `envgen diff`'s tool rules (`diff.tooldiff`), the
server as the new side: what breaks a committed client (a tool gone, a new required
argument, a narrowed type, a result the client cannot read) is a `drift.tool` violation on
the committed tool file; what does not (a new tool, a new optional argument) is a note. A
listing without output schemas (the `list_tools` step lists none) has its output schemas
left out of the judgement, said in a note.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from envgen_runtime.schemadiff import Policy

from generator.diff.sides import load_env_side
from generator.diff.tooldiff import tool_changes
from generator.errors import EnvgenError, SchemaError
from generator.interop.tool_listing import PulledTools, pull_tools
from generator.schema.loader import Layout
from generator.schema.tools import TOOLS_DIR
from generator.verify.model import VerifyReport, Violation
from generator.verify.schemas import CommittedSchemas

OUTPUT_RULES = ("tool.output-removed", "tool.output-added")


def check_tool_drift(
    layout: Layout, schemas: CommittedSchemas, url: str, report: VerifyReport
) -> None:
    """Report every tool change between the committed tools and the server's listing."""
    try:
        pulled = pull_tools(url)
    except SchemaError as exc:
        report.add(Violation("drift.tool", f"the server's tool listing is unusable: {exc}"))
        return
    except EnvgenError as exc:
        report.notes.append(f"tool drift not checked: {exc.message}")
        return
    committed_dir = layout.schemas / schemas.name / TOOLS_DIR
    with tempfile.TemporaryDirectory(prefix="envgen-tools-") as folder:
        _write(Path(folder), pulled)
        committed = load_env_side(layout, schemas.name, "committed")
        served = load_env_side(
            layout,
            schemas.name,
            pulled.origin,
            tools_from=Path(folder),
            tools_display=lambda path: f"{pulled.origin} ({TOOLS_DIR}/{path.name})",
        )
        policy = Policy.resolve(dict(schemas.env.manifest.compat), {})
        changes = tool_changes(committed, served, policy)
    if not pulled.lists_outputs:
        report.notes.append(
            f"tool drift: {pulled.origin} lists no output schemas, so only the tools and "
            "their input schemas were compared"
        )
        changes = [
            c
            for c in changes
            if c.rule not in OUTPUT_RULES and not c.pointer.startswith("/outputSchema")
        ]
    for change in changes:
        name = _file_name(change.file)
        own = committed_dir / name
        file = layout.display(own) if own.is_file() else change.file
        message = change.message
        if not message.startswith("tool "):  # a wire change: say whose schema it is in
            message = f"tool {name.removesuffix('.json')!r}: {message}"
        if change.change_class == "breaking":
            report.add(
                Violation(
                    check="drift.tool",
                    message=f"{change.rule}: {message}",
                    pointer=change.pointer,
                    file=file,
                )
            )
        else:
            report.notes.append(f"tool drift ({change.change_class}): {message}")


def _file_name(shown: str) -> str:
    """The tool file's name in what a change shows: `tools/add.json`, `add.json` (as the
    bundler shows a file outside the repository) or the listing's `URL (tools/add.json)`."""
    return shown.rsplit("/", 1)[-1].removesuffix(")")


def _write(folder: Path, pulled: PulledTools) -> None:
    """The listing as tool files, where `load_env_side` reads a `tools/` folder."""
    for relative, text in pulled.files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / TOOLS_DIR).mkdir(exist_ok=True)
