"""Direction-aware comparison of two versions of an env's wire schemas.

One comparer serves `envgen diff` (two revisions of `schemas/`), `envgen verify` and the
client's check at connect (the committed schemas against a server's `GET /schema`), so a
change is judged by the same rules wherever it is found. The action and reset parameters are
written by the client and read by the server; observation and state the other way round:
a change breaks when a writer may send what the reader rejects.

The modules, in the order data flows through them:

- `verdict`: a server's published schemas against committed ones (`drift`, `DriftReport`).
- `published`: a `/schema` reply as role schemas; each role as a `wire.Version`.
- `wire`: runs the comparer in the role's direction and proves each break.
- `compare`, `walk`: the comparer walks writer against reader; `walk` is all its rules see of it.
- `rules_general`, `rules_scalar`, `rules_array`, `rules_object`: the keyword rules.
- `schemaops`, `numeric`: reading and merging schema nodes; bounds and `multipleOf` arithmetic.
- `witness`, `examples`, `regexgen`, `validation`: build a breaking value, judge it by
  jsonschema (imported on first use).
- `roles`, `policy`: which side writes each role; how readers behave.
"""

from .policy import Policy
from .published import NO_RESET_SCHEMA, role_schemas, without_envelope_fields
from .roles import CLIENT_WRITTEN, ROLES, Role, writer_is_old
from .schemaops import json_pointer
from .verdict import QUIET, DriftReport, canonical_hash, drift
from .wire import Version, Where, WireChange, wire_changes

__all__ = [
    "CLIENT_WRITTEN",
    "NO_RESET_SCHEMA",
    "QUIET",
    "ROLES",
    "DriftReport",
    "Policy",
    "Role",
    "Version",
    "Where",
    "WireChange",
    "canonical_hash",
    "drift",
    "json_pointer",
    "role_schemas",
    "wire_changes",
    "without_envelope_fields",
    "writer_is_old",
]
