"""Schema drift: the server's own `GET /schema` against the committed schemas.

The server's schemas are read as `envgen pull` reads them (the envelope's reward and done
left out of the observation) and compared with the committed ones by the diff engine, the
committed schemas as the old side and the server as the new: what the diff calls breaking is
what the running server would break in the committed client.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from envgen_runtime.schemadiff import Policy

from generator.diff.engine import compare_sides
from generator.diff.sides import load_role_side
from generator.errors import EnvgenError
from generator.interop.openenv import check_schemas, without_envelope_fields
from generator.interop.pull import fetch_json
from generator.schema.loader import Layout, role_file
from generator.verify.model import VerifyReport, Violation
from generator.verify.schemas import ROLES, CommittedSchemas


def check_drift(layout: Layout, schemas: CommittedSchemas, url: str, report: VerifyReport) -> None:
    """Report every breaking difference between the server's schemas and the committed ones."""
    origin = url + "/schema"
    try:
        body = fetch_json(url, "/schema", optional=True)
    except EnvgenError as exc:
        report.notes.append(f"schema drift not checked: {exc.message}")
        return
    if body is None:
        report.notes.append("schema drift not checked: the server serves no /schema")
        return
    if not isinstance(body, dict):
        report.add(Violation("drift.breaking", "/schema is not a JSON object", value=body))
        return
    server: dict[str, Any] = {role: body.get(role) for role in ROLES}
    try:
        check_schemas(server, origin)
    except EnvgenError as exc:
        report.add(Violation("drift.breaking", f"the server's /schema is unusable: {exc}"))
        return
    server["observation"] = without_envelope_fields(server["observation"])
    name = schemas.name
    policy = Policy.resolve(dict(schemas.env.manifest.compat), {})
    with tempfile.TemporaryDirectory(prefix="envgen-verify-") as tmp:
        for role in ROLES:
            committed_path = role_file(layout.schemas / name, role)
            served_path = Path(tmp) / f"{role}.schema.json"
            served_path.write_text(json.dumps(server[role]), encoding="utf-8")
            committed = load_role_side(
                committed_path, role, layout.display(committed_path), layout.root, layout.schemas
            )
            served = load_role_side(served_path, role, f"{origin}#/{role}", Path(tmp))
            for change in compare_sides(committed, served, policy, roles=(role,), code=False):
                if change.change_class != "breaking":
                    continue
                report.add(
                    Violation(
                        check="drift.breaking",
                        message=f"{role}: {change.rule}: {change.message}",
                        pointer=change.pointer,
                        file=layout.display(committed_path),
                    )
                )
