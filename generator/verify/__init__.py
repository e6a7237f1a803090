"""`envgen verify`: check a live env server against the committed schemas.

Four kinds of check, each reported as a `Violation` with where it happened (a JSON pointer),
the offending value and the shortest action sequence found that reproduces it:

- drift: the server's own `GET /schema` against the committed schemas, through the diff
  engine with the server as the new side (what would break the committed client);
- fuzzing: seeded episodes of actions generated from the action schema (hypothesis and
  hypothesis-jsonschema, shrunk on failure); every reply is validated against the committed
  schemas and the protocol's invariants;
- negative cases: actions that break the action schema must be refused as invalid, and the
  server must stay usable.
- tool calls (a tool env): every committed tool called with arguments from its input
  schema, boundaries first, each result held to its output schema (`verify/tools`).

Nothing here is imported by the runtime or by generated clients.
"""

from generator.verify.model import VerifyReport, Violation

__all__ = ["VerifyReport", "Violation"]
