"""`envgen diff`: direction-aware breaking-change checks between two versions of env schemas.

The parts, in the order data flows through them: `run` drives a diff; `sides` (and
`gitrev` for git revisions) load each version of an env through the same bundler that
generation uses; `engine` compares two versions role by role: `wire` runs `compare` (with
`rules_scalar`, `rules_array`, `rules_object`, over `schemaops`) in the role's direction and
`witness` proves each break with a JSON value built by `examples` and judged by
`validation`; `codeapi` (with `pytypes`) compares the generated Python API. `ignore` and
`gate` decide which changes fail, `formats` prints the report and `command` is the click
command. `rules` documents every rule id. Nothing here is imported by `envgen_runtime`.
"""
