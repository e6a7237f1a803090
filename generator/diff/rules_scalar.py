"""Keyword rules for types, enum/const, numbers, strings, defaults and annotations.

Each function compares one family of keywords of a writer node `w` and a reader node `r`
and reports through the walker; messages say what changed from old to new.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from generator.diff.examples import FORMAT_MISSES
from generator.diff.regexgen import samples
from generator.diff.schemaops import (
    ANNOTATIONS,
    KNOWN_KEYWORDS,
    OTHER_KEYWORDS,
    Bound,
    Node,
    admits,
    canon,
    integer_lower,
    integer_upper,
    is_multiple,
    lower_bound,
    upper_bound,
)

if TYPE_CHECKING:
    from generator.diff.compare import Site, Walker

CandidateMaker = Callable[[Node, int], list[Any]]


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


def numbers(wk: Walker, w: Node, r: Node, ints: bool, site: Site) -> None:
    for side, bound_of in (("minimum", lower_bound), ("maximum", upper_bound)):
        lower = side == "minimum"
        bw, br = bound_of(w.d), bound_of(r.d)
        order = _compare_bounds(bw, br, lower, ints)
        if order == 0:
            continue
        exclusive = "exclusiveMinimum" if lower else "exclusiveMaximum"
        keyword = side if side in (w.d | r.d) else exclusive
        narrow = f"number.{side}-raised" if lower else f"number.{side}-lowered"
        wide = f"number.{side}-lowered" if lower else f"number.{side}-raised"
        old, new = wk.old_new(bw, br)
        message = f"{side} {_bound_text(old)} -> {_bound_text(new)}"
        w_loc, r_loc = w.loc_of(keyword), r.loc_of(keyword)
        if order > 0:
            wk.emit(site, w_loc, r_loc, (wide, narrow), False, message)
            continue
        assert br is not None
        edge, step = br[0], (1 if ints else 0.5)
        near = [edge, edge - step, edge - 1] if lower else [edge, edge + step, edge + 1]
        cands: list[Any] = [int(c) if float(c).is_integer() else c for c in near]
        wk.emit(
            site,
            w_loc,
            r_loc,
            (narrow, wide),
            True,
            message,
            witness=wk.pick(w.schema, r.schema, _const(cands)),
        )
    _multiple_of(wk, w, r, ints, site)


def _const(values: list[Any]) -> Callable[[], list[Any]]:
    return lambda: values


def _bound_text(bound: Bound | None) -> str:
    if bound is None:
        return "none"
    return ("exclusive " if bound[1] else "") + show(bound[0])


def _compare_bounds(bw: Bound | None, br: Bound | None, lower: bool, ints: bool) -> int:
    """-1: the writer goes past the reader's bound; 1: the reader's bound is looser; 0: same."""
    if ints:
        convert = integer_lower if lower else integer_upper
        vw, vr = convert(bw), convert(br)
        bw = None if vw is None else (vw, False)
        br = None if vr is None else (vr, False)
    if bw == br:
        return 0
    if br is None:
        return 1
    if bw is None:
        return -1
    sign = 1 if lower else -1
    strict_w, strict_r = (sign * bw[0], bw[1]), (sign * br[0], br[1])
    if strict_w == strict_r:
        return 0
    return -1 if strict_w < strict_r else 1


def _multiple_of(wk: Walker, w: Node, r: Node, ints: bool, site: Site) -> None:
    mw, mr = w.d.get("multipleOf"), r.d.get("multipleOf")
    if canon(mw) == canon(mr):
        return
    effective = mw if mw is not None else (1 if ints else None)
    w_fits = mr is None or (effective is not None and is_multiple(effective, mr))
    r_fits = mw is None or (mr is not None and is_multiple(mr, mw))
    old, new = wk.old_new(mw, mr)
    message = f"multipleOf {show(old)} -> {show(new)}"
    w_loc, r_loc = w.loc_of("multipleOf"), r.loc_of("multipleOf")
    stricter, looser = "number.multipleOf-stricter", "number.multipleOf-looser"
    if w_fits:
        wk.emit(site, w_loc, r_loc, (looser, stricter), False, message)
        return
    changed = mw is not None and not r_fits
    rules = ("number.multipleOf-changed",) * 2 if changed else (stricter, looser)
    step = float(mr) if isinstance(mr, int | float) else 1.0

    def candidates() -> list[Any]:
        out: list[Any] = [step / 2, step * 1.5, 1, 0.5, 0.25]
        if mw is not None:
            out += [mw, mw * 3, mw * 5]
        return [int(c) if float(c).is_integer() else c for c in out]

    wk.emit(
        site,
        w_loc,
        r_loc,
        (rules[0], rules[1]),
        True,
        message,
        witness=wk.pick(w.schema, r.schema, candidates),
    )


def count_bound(
    wk: Walker,
    w: Node,
    r: Node,
    site: Site,
    keyword: str,
    family: str,
    values: tuple[Any, Any],
    make: CandidateMaker,
) -> None:
    """minLength/maxLength, minItems/maxItems, minProperties/maxProperties."""
    lower = keyword.startswith("min")
    none = 0 if lower else math.inf
    vw = none if values[0] is None else values[0]
    vr = none if values[1] is None else values[1]
    if vw == vr:
        return
    raised, lowered = f"{family}.{keyword}-raised", f"{family}.{keyword}-lowered"
    narrow, wide = (raised, lowered) if lower else (lowered, raised)
    old, new = wk.old_new(vw, vr)
    message = f"{keyword} {show(float(old))} -> {show(float(new))}"
    w_loc, r_loc = w.loc_of(keyword), r.loc_of(keyword)
    if (vw < vr) if lower else (vw > vr):
        target = int(vw) if lower else int(vr) + 1
        wk.emit(
            site,
            w_loc,
            r_loc,
            (narrow, wide),
            True,
            message,
            witness=wk.pick(w.schema, r.schema, lambda: make(w, target)),
        )
    else:
        wk.emit(site, w_loc, r_loc, (wide, narrow), False, message)


def strings(wk: Walker, w: Node, r: Node, site: Site) -> None:
    for keyword in ("minLength", "maxLength"):
        count_bound(
            wk,
            w,
            r,
            site,
            keyword,
            "string",
            (w.d.get(keyword), r.d.get(keyword)),
            _string_candidates(wk),
        )
    _pattern(wk, w, r, site)
    _format(wk, w, r, site)


def _string_candidates(wk: Walker) -> CandidateMaker:
    def make(w: Node, length: int) -> list[Any]:
        texts = [s for s in wk.examples.values(w.schema, 4) if isinstance(s, str)] or ["a"]
        out: list[Any] = [(t * (length // max(len(t), 1) + 1))[:length] for t in texts if t]
        return [*out, "a" * length]

    return make


def _string_keyword(
    wk: Walker,
    w: Node,
    r: Node,
    site: Site,
    keyword: str,
    *,
    changed_note: str,
    added_note: str,
    candidates: Callable[[], list[Any]],
) -> None:
    """`pattern` or `format` (string.<keyword>-added/-removed/-changed): same verdict shape.

    Dropping the keyword on the reader's side only widens it; adding or changing it may
    reject what the writer sends, with a witness picked from `candidates`.
    """
    kw, kr = w.d.get(keyword), r.d.get(keyword)
    if kw == kr:
        return
    old, new = wk.old_new(kw, kr)
    message = f"{keyword} {show(old)} -> {show(new)}"
    w_loc, r_loc = w.loc_of(keyword), r.loc_of(keyword)
    added, removed = f"string.{keyword}-added", f"string.{keyword}-removed"
    if kr is None:
        wk.emit(site, w_loc, r_loc, (removed, added), False, message)
        return
    if kw is None:
        rules, note = (added, removed), added_note
    else:
        changed = f"string.{keyword}-changed"
        rules, note = (changed, changed), changed_note
    wk.emit(
        site,
        w_loc,
        r_loc,
        rules,
        True,
        message,
        note=note,
        witness=wk.pick(w.schema, r.schema, candidates),
    )


def _pattern(wk: Walker, w: Node, r: Node, site: Site) -> None:
    pw = w.d.get("pattern")

    def candidates() -> list[Any]:
        out: list[Any] = list(samples(pw, 40)) if isinstance(pw, str) else []
        return [*out, "", "a", "0", " ", "~", "example", "A-1", "a" * 40]

    _string_keyword(
        wk,
        w,
        r,
        site,
        "pattern",
        changed_note="envgen does not prove one regular expression includes another",
        added_note="",
        candidates=candidates,
    )


def _format(wk: Walker, w: Node, r: Node, site: Site) -> None:
    note = "generated models check formats (date-time, date, uuid, email, uri, ...)"
    _string_keyword(
        wk,
        w,
        r,
        site,
        "format",
        changed_note=note,
        added_note=note,
        candidates=lambda: list(FORMAT_MISSES),
    )


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
