"""Keyword rules every schema gets, whatever its JSON type: `type` itself, enum/const,
defaults, annotations, and the keywords envgen does not reason about.

The comparer runs these on every pair of non-union nodes, before and after the rules of the
type's own family (`rules_scalar`, `rules_array`, `rules_object`). Each function compares one
family of keywords of a writer node `w` and a reader node `r` and reports through the walker;
messages say what changed from old to new, with values printed by `show`.
"""

from __future__ import annotations

import math
from typing import Any

from .schemaops import (
    ANNOTATIONS,
    KNOWN_KEYWORDS,
    OTHER_KEYWORDS,
    Node,
    admits,
    canon,
)
from .walk import Site, Walker


def show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float) and value == math.inf:
        return "unbounded"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return canon(value) if not isinstance(value, int | float) else str(value)


def annotation_changes(wk: Walker, w: Node, r: Node, site: Site) -> None:
    keys = sorted(
        k
        for k in set(w.d) | set(r.d)
        if (k in ANNOTATIONS or k not in KNOWN_KEYWORDS)
        and k not in ("$defs", "definitions", "$schema", "$id")
        and canon(w.d.get(k)) != canon(r.d.get(k))
    )
    if keys:
        wk.emit(
            site,
            w.loc,
            r.loc,
            ("annotation.changed", "annotation.changed"),
            False,
            "changed: " + ", ".join(keys),
        )


def defaults(wk: Walker, w: Node, r: Node, site: Site) -> None:
    """A reader fills in its own default when the field is absent: changing it misleads."""
    old, new = wk.old_new(w.d, r.d)
    if canon(old.get("default")) == canon(new.get("default")):
        return
    absent_possible = site.required_in_writer is False and not wk.w_old
    if "default" not in old:
        rule, breaking = "default.added", False
    elif "default" not in new:
        rule, breaking = "default.removed", absent_possible
    else:
        rule, breaking = "default.changed", absent_possible
    note = ""
    if breaking:
        note = (
            "no value is rejected: old clients fill in the old default when the new server "
            "leaves the field out, and so read a value the server did not mean"
        )
    elif wk.w_old and rule != "default.added":
        note = (
            "generated clients send defaults explicitly; clients that leave the field out now "
            "get the new default"
        )
    message = f"default {show(old.get('default'))} -> {show(new.get('default'))}"
    wk.emit(site, w.loc, r.loc, (rule, rule), breaking, message, note=note)


def types(wk: Walker, w: Node, r: Node, tw: frozenset[str], tr: frozenset[str], site: Site) -> None:
    extra_w = sorted(t for t in tw if not admits(tr, t) and not (t == "integer" and "number" in tw))
    extra_r = sorted(t for t in tr if not admits(tw, t) and not (t == "integer" and "number" in tr))
    if not extra_w and not extra_r:
        return
    old_t, new_t = wk.old_new(_types_text(tw), _types_text(tr))
    message = f"type {old_t} -> {new_t}"
    w_loc, r_loc = w.loc_of("type"), r.loc_of("type")
    non_null_w = [t for t in extra_w if t != "null"]
    non_null_r = [t for t in extra_r if t != "null"]
    if extra_w:
        if non_null_w and non_null_r:
            rules = ("type.changed", "type.changed")
        elif not non_null_w:
            rules = ("nullable.removed", "nullable.added")
        else:
            rules = ("type.narrowed", "type.widened")

        def candidates() -> list[Any]:
            out: list[Any] = []
            for kind in extra_w:
                typed = dict(w.d)
                typed["type"] = kind
                out.extend(wk.examples.values(typed, 16))
            return out

        wk.emit(
            site,
            w_loc,
            r_loc,
            rules,
            True,
            message,
            witness=wk.pick(w.schema, r.schema, candidates),
        )
        if rules[0] == "type.changed":
            return
    if extra_r:
        rules = (
            ("nullable.added", "nullable.removed")
            if not non_null_r
            else ("type.widened", "type.narrowed")
        )
        wk.emit(site, w_loc, r_loc, rules, False, message)


def _types_text(kinds: frozenset[str]) -> str:
    shown = sorted(t for t in kinds if not (t == "integer" and "number" in kinds))
    return " | ".join(shown) if len(shown) < 6 else "any"


def _values(schema: dict[str, Any]) -> list[Any] | None:
    if "const" in schema:
        values = [schema["const"]]
        if isinstance(schema.get("enum"), list):
            values = [v for v in values if any(canon(v) == canon(e) for e in schema["enum"])]
        return values
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    return None


def _list(values: list[Any]) -> str:
    text = ", ".join(canon(v) for v in values[:6])
    return text + (", ..." if len(values) > 6 else "")


def enums(wk: Walker, w: Node, r: Node, site: Site) -> bool:
    """Enum and const; returns whether the writer's values are a finite list."""
    vw, vr = _values(w.d), _values(r.d)
    if vw is None and vr is None:
        return False
    uses_enum = "enum" in w.d or "enum" in r.d
    keyword = "enum" if uses_enum else "const"
    w_loc, r_loc = w.loc_of(keyword), r.loc_of(keyword)
    extensible = wk.policy.extensible_enums and "enum" in r.d and "const" not in r.d
    note = "readers accept enum values they do not know (extensible_enums)" if extensible else ""
    if vr is None:
        assert vw is not None
        rules = ("enum.removed", "enum.added") if uses_enum else ("const.removed", "const.added")
        old, new = wk.old_new(vw, None)
        message = (
            f"{keyword} {'restriction added: ' + _list(new) if new else 'restriction removed'}"
        )
        wk.emit(site, w_loc, r_loc, rules, False, message)
        return True
    if vw is None:
        rules = ("enum.added", "enum.removed") if uses_enum else ("const.added", "const.removed")
        old, new = wk.old_new(None, vr)
        message = (
            f"{keyword} {'restriction added: ' + _list(new) if new else 'restriction removed'}"
        )
        allowed = {canon(v) for v in vr}

        def outside() -> list[Any]:
            pool = [*wk.examples.values(w.schema, 8), "x_unlisted", 0, -1, 0.5, None, False]
            return [v for v in pool if canon(v) not in allowed]

        wk.emit(
            site,
            w_loc,
            r_loc,
            rules,
            not extensible,
            message,
            note=note,
            witness=wk.pick(w.schema, r.schema, outside),
        )
        return False
    in_r, in_w = {canon(v) for v in vr}, {canon(v) for v in vw}
    extra_w = [v for v in vw if canon(v) not in in_r]
    extra_r = [v for v in vr if canon(v) not in in_w]
    if not uses_enum:
        if extra_w:
            old, new = wk.old_new(vw[0] if vw else None, vr[0] if vr else None)
            wk.emit(
                site,
                w_loc,
                r_loc,
                ("const.changed", "const.changed"),
                True,
                f"const {show(old)} -> {show(new)}",
                witness=wk.pick(w.schema, r.schema, lambda: list(extra_w)),
            )
        return True
    if extra_w:
        verb = "removed" if wk.w_old else "added"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("enum.value-removed", "enum.value-added"),
            not extensible,
            f"enum values {verb}: {_list(extra_w)}",
            note=note,
            witness=wk.pick(w.schema, r.schema, lambda: list(extra_w)),
        )
    if extra_r:
        verb = "added" if wk.w_old else "removed"
        wk.emit(
            site,
            w_loc,
            r_loc,
            ("enum.value-added", "enum.value-removed"),
            False,
            f"enum values {verb}: {_list(extra_r)}",
        )
    return True


def other_keywords(wk: Walker, w: Node, r: Node, site: Site) -> None:
    for keyword in sorted(OTHER_KEYWORDS):
        if canon(w.d.get(keyword)) != canon(r.d.get(keyword)):
            wk.emit(
                site,
                w.loc_of(keyword),
                r.loc_of(keyword),
                ("keyword.changed", "keyword.changed"),
                True,
                f"`{keyword}` changed; envgen does not prove changes to it compatible",
            )
