"""Drift: the server's own `GET /schema` against the committed schemas, and the version its
`GET /metadata` reports against env.toml's (`check_version`).

The committed schemas (as `schemas.json` holds them) are the old side and the server's the
new, judged by `envgen_runtime.schemadiff.drift`, the check generated clients run at
connect: what it calls breaking is what the running server would break in the committed
client. The server's reply is checked as `envgen pull` checks it first, so an unusable one
is reported as such.
"""

from __future__ import annotations

from envgen_runtime.schemadiff import Policy, drift

from generator.errors import EnvgenError
from generator.interop.openenv import check_schemas
from generator.interop.pull import fetch_json
from generator.schema.loader import Layout, role_file
from generator.schema.published import published_schemas
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
    try:
        check_schemas({role: body.get(role) for role in ROLES}, origin)
    except EnvgenError as exc:
        report.add(Violation("drift.breaking", f"the server's /schema is unusable: {exc}"))
        return
    policy = Policy.resolve(dict(schemas.env.manifest.compat), {})
    found = drift(published_schemas(schemas.env), body, policy)
    for change in found.breaking:
        committed_path = role_file(layout.schemas / schemas.name, change.role)
        report.add(
            Violation(
                check="drift.breaking",
                message=f"{change.role}: {change.rule}: {change.message}",
                # The pointer inside the role's schema, as the role's file would hold it.
                pointer=change.pointer.removeprefix(f"/{change.role}"),
                file=layout.display(committed_path),
            )
        )


def check_version(
    layout: Layout, schemas: CommittedSchemas, url: str, report: VerifyReport
) -> None:
    """Report a server whose `/metadata` version is not env.toml's (the schemas' version).

    A mismatch means the server was built from other schemas, or passes a version of its own
    instead of the generated `SPEC.version`.
    """
    try:
        body = fetch_json(url, "/metadata", optional=True)
    except EnvgenError as exc:
        report.notes.append(f"version not checked: {exc.message}")
        return
    served = body.get("version") if isinstance(body, dict) else None
    if served is None:
        report.notes.append("version not checked: the server's /metadata reports no version")
        return
    manifest = schemas.env.manifest
    if served != manifest.version:
        toml = layout.display(layout.schemas / schemas.name / "env.toml")
        report.add(
            Violation(
                check="drift.version",
                message=f"the server reports version {served!r} in /metadata, env.toml says "
                f"{manifest.version!r}: serve the generated SPEC.version (and rebuild the image)",
                pointer="/version",
                value=served,
                file=toml,
            )
        )
