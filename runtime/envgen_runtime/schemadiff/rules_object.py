"""Keyword rules for objects: properties, required, closedness, pattern properties, counts.

Open objects are read the way schemas are used. A writer whose object is open may send
extension fields (names that neither side declares), so a reader that closes its object
(`additionalProperties: false`) breaks it. But an extension field is never assumed to
collide with a name the other side declares, so adding an optional property is safe, and so
is removing one from an open object. Schema registries that call every property added to an
open content model incompatible make the most common evolution impossible; envgen does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from .regexgen import samples
from .rules_scalar import count_bound
from .schemaops import Node, canon
from .walk import Site, Walker

EXTENSION = "x_envgen_extension"


@dataclass
class _Object:
    """One side's object keywords, read once."""

    node: Node
    props: dict[str, Any]
    required: set[str]
    extra: Any  # additionalProperties: True when absent
    patterns: dict[str, Any]

    @classmethod
    def of(cls, node: Node) -> _Object:
        s = node.d
        props = s.get("properties")
        patterns = s.get("patternProperties")
        return cls(
            node=node,
            props=props if isinstance(props, dict) else {},
            required={n for n in s.get("required", []) if isinstance(n, str)},
            extra=s.get("additionalProperties", True),
            patterns=patterns if isinstance(patterns, dict) else {},
        )

    @property
    def typed_extra(self) -> bool:
        return isinstance(self.extra, dict) and bool(self.extra)


def objects(wk: Walker, w: Node, r: Node, site: Site) -> None:
    wo, ro = _Object.of(w), _Object.of(r)
    closed = ro.extra is False and not wk.ignores_unknown
    note = "readers ignore unknown fields (policy)" if ro.extra is False and not closed else ""
    names = list(dict.fromkeys([*wo.props, *ro.props, *sorted(wo.required), *sorted(ro.required)]))
    for name in names:
        _property(wk, wo, ro, site, name, closed, note)
    _closedness(wk, wo, ro, site, closed, note)
    _patterns(wk, wo, ro, site, closed, note)

    def make(node: Node, count: int) -> list[Any]:
        return [
            wk.examples.object_with(node.schema),
            wk.examples.object_with(node.schema, fill=True),
        ]

    for keyword in ("minProperties", "maxProperties"):
        count_bound(wk, w, r, site, keyword, "object", (w.d.get(keyword), r.d.get(keyword)), make)


def _property(
    wk: Walker, wo: _Object, ro: _Object, site: Site, name: str, closed: bool, note: str
) -> None:
    w, r = wo.node, ro.node
    in_w, in_r = name in wo.props, name in ro.props
    w_req, r_req = name in wo.required, name in ro.required
    soft = (
        r_req
        and wk.policy.default_satisfies_required
        and isinstance(ro.props.get(name), dict)
        and "default" in ro.props[name]
    )
    soft_note = "a default satisfies required (default_satisfies_required)" if soft else ""
    w_loc, r_loc = w.loc_of("properties", name), r.loc_of("properties", name)
    below = replace(site.down(w.schema, name, False, name), required_in_writer=w_req)
    without = wk.pick(
        w.schema,
        r.schema,
        lambda: [wk.examples.object_with(w.schema, omit=frozenset({name}))],
    )
    if in_w and in_r:
        wk.compare(w.child("properties", name), r.child("properties", name), below)
    elif in_w:
        _writer_only(wk, wo, ro, site, name, closed, note, below)
    elif in_r:
        for key in _matching(wo.patterns, name):
            wk.compare(w.child("patternProperties", key), r.child("properties", name), below)
        if not _matching(wo.patterns, name) and wo.typed_extra:
            wk.compare(w.child("additionalProperties"), r.child("properties", name), below)
        if r_req and not w_req:
            rules = ("property.added-required", "property.removed-required")
            verb = "added (required)" if wk.w_old else "removed (it was required)"
            wk.emit(
                site,
                w_loc,
                r_loc,
                rules,
                not soft,
                f"property {name!r} {verb}",
                note=soft_note,
                witness=without,
                at=below.path,
            )
            return
        removed = "property.removed-required" if r_req else "property.removed"
        verb = "added" if wk.w_old else "removed"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("property.added", removed),
            False,
            f"property {name!r} {verb}",
            at=below.path,
        )
        return
    if r_req and not w_req:
        verb = "is now required" if wk.w_old else "is no longer required"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("required.added", "required.removed"),
            not soft,
            f"property {name!r} {verb}",
            note=soft_note,
            witness=without,
            at=below.path,
        )
    elif w_req and not r_req:
        verb = "is no longer required" if wk.w_old else "is now required"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("required.removed", "required.added"),
            False,
            f"property {name!r} {verb}",
            at=below.path,
        )


def _writer_only(
    wk: Walker,
    wo: _Object,
    ro: _Object,
    site: Site,
    name: str,
    closed: bool,
    note: str,
    below: Site,
) -> None:
    """A property the writer declares and the reader does not."""
    w, r = wo.node, ro.node
    w_loc, r_loc = w.loc_of("properties", name), r.loc_of("properties", name)
    matches = _matching(ro.patterns, name)
    for key in matches:
        wk.compare(w.child("properties", name), r.child("patternProperties", key), below)
    if matches:
        return
    if ro.extra is False:
        verb = "removed from a closed object" if wk.w_old else "added, but the old object is closed"
        value_schema = wo.props[name]
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("property.removed-from-closed", "property.added-to-closed"),
            closed,
            f"property {name!r} {verb} (additionalProperties: false)",
            note=note,
            witness=wk.pick(
                w.schema,
                r.schema,
                lambda: [
                    wk.examples.object_with(
                        w.schema, force={name: wk.examples.example(value_schema)}
                    ),
                    wk.examples.object_with(w.schema, fill=True),
                ],
            ),
            at=below.path,
        )
        return
    if ro.typed_extra:
        wk.compare(w.child("properties", name), r.child("additionalProperties"), below)
    added = "property.added-required" if name in wo.required else "property.added"
    verb = "removed" if wk.w_old else "added"
    wk.emit(
        site,
        w_loc,
        r_loc,
        ("property.removed", added),
        False,
        f"property {name!r} {verb}",
        at=below.path,
    )


def _closedness(wk: Walker, wo: _Object, ro: _Object, site: Site, closed: bool, note: str) -> None:
    w, r = wo.node, ro.node
    w_loc, r_loc = w.loc_of("additionalProperties"), r.loc_of("additionalProperties")
    extension = _free_name(set(wo.props) | set(ro.props), [*wo.patterns, *ro.patterns])
    if ro.extra is False and wo.extra is not False:
        value_schema = wo.extra if isinstance(wo.extra, dict) else True
        verb = "added" if wk.w_old else "removed"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("object.closed", "object.opened"),
            closed,
            f"additionalProperties: false {verb}; unknown fields are "
            + ("now rejected" if wk.w_old else "now sent"),
            note=note,
            witness=wk.pick(
                w.schema,
                r.schema,
                lambda: [
                    wk.examples.object_with(
                        w.schema, force={extension: wk.examples.example(value_schema)}
                    )
                ],
            ),
        )
    elif wo.extra is False and ro.extra is not False:
        verb = "removed" if wk.w_old else "added"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("object.opened", "object.closed"),
            False,
            f"additionalProperties: false {verb}",
        )
    elif canon(wo.extra) != canon(ro.extra) and (wo.typed_extra or ro.typed_extra):
        wk.compare(
            w.child("additionalProperties"),
            r.child("additionalProperties"),
            site.down(w.schema, extension, False, "*"),
        )


def _patterns(wk: Walker, wo: _Object, ro: _Object, site: Site, closed: bool, note: str) -> None:
    w, r = wo.node, ro.node
    for key in wo.patterns:
        w_loc, r_loc = w.loc_of("patternProperties", key), r.loc_of("patternProperties", key)
        name = next(iter(samples(key, 1)), None)
        below = site.down(w.schema, name or key, False, name or key)
        if key in ro.patterns:
            wk.compare(w.child("patternProperties", key), r.child("patternProperties", key), below)
        elif ro.extra is False:
            value_schema = wo.patterns[key]
            verb = (
                "removed from a closed object"
                if wk.w_old
                else "added, but the old object is closed"
            )

            def candidates(n: str | None = name, v: Any = value_schema) -> list[Any]:
                if n is None:
                    return []
                return [wk.examples.object_with(w.schema, force={n: wk.examples.example(v)})]

            wk.emit(
                site,
                w_loc,
                r_loc,
                ("pattern-properties.removed-from-closed", "pattern-properties.added-to-closed"),
                closed,
                f"patternProperties {key!r} {verb}",
                note=note,
                witness=wk.pick(w.schema, r.schema, candidates),
            )
        else:
            if ro.typed_extra:
                wk.compare(
                    w.child("patternProperties", key), r.child("additionalProperties"), below
                )
            verb = "removed" if wk.w_old else "added"
            wk.emit(
                site,
                w_loc,
                r_loc,
                ("pattern-properties.removed", "pattern-properties.added"),
                False,
                f"patternProperties {key!r} {verb}",
            )
    for key in ro.patterns:
        if key in wo.patterns:
            continue
        w_loc, r_loc = w.loc_of("patternProperties", key), r.loc_of("patternProperties", key)
        if wo.typed_extra:
            name = next(iter(samples(key, 1)), key)
            wk.compare(
                w.child("additionalProperties"),
                r.child("patternProperties", key),
                site.down(w.schema, name, False, name),
            )
        verb = "added" if wk.w_old else "removed"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("pattern-properties.added", "pattern-properties.removed"),
            False,
            f"patternProperties {key!r} {verb}",
        )


def _matching(patterns: dict[str, Any], name: str) -> list[str]:
    found = []
    for key in patterns:
        try:
            if re.search(key, name):
                found.append(key)
        except re.error:
            continue
    return found


def _free_name(declared: set[str], patterns: list[str]) -> str:
    """A property name neither side declares or matches: an extension field."""
    for candidate in (EXTENSION, "zz_unknown_field", "x-unknown"):
        if candidate not in declared and not _matching(dict.fromkeys(patterns), candidate):
            return candidate
    return EXTENSION + "_0"
