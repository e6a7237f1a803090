"""`envgen diff`: direction-aware breaking-change checks between two versions of env schemas.

It takes two versions of envs' schemas (two git revisions of `schemas/`, or two schema files)
and a `Policy`, and hands on a judged `model.Report`: every change with its rule id, its
class in the role's direction (safe, breaking, breaking-code), where it is, and for a wire
break a JSON value that proves it. `generator.cli` runs and prints it; `generator.interop` and
`generator.verify` take the bare changes from `engine.compare_sides`. The wire comparer itself
(its rules, witnesses and `Policy`) is `envgen_runtime.schemadiff`, which generated clients
also run at connect; nothing here is imported by `envgen_runtime`.

The modules, in the order data flows through them:

- `run`: drives a diff; revisions or files in, a judged report out.
- `sides`, `gitrev`: load each version through the bundler generation uses (`gitrev`: from git).
- `engine`: compares two versions role by role (`schemadiff.wire_changes`), then their
  generated API.
- `tooldiff`: a tool env's tools (role `tool`): tools added and removed, each input schema
  judged as the action, each output schema as the observation.
- `apiread`, `codeapi`, `pytypes`: read each version's generated Python API, compare the
  two (`breaking-code`).
- `ignore`, `gate`, `resolve`: decide which changes fail, and what would let them pass.
- `locate`, `formats`: line numbers for pointers; the report as text, JSON, Markdown or GitHub.
- `model`, `rules`, `errors`: the data, every rule id, bad input.
"""
