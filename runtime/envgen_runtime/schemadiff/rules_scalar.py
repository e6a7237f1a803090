"""Keyword rules for numbers and strings, and the count bounds arrays and objects share.

Bounds and `multipleOf` of numbers, `minLength`/`maxLength`, `pattern` and `format` of
strings; `count_bound` also serves `minItems`/`maxItems` and `minProperties`/`maxProperties`.
Each function compares one family of keywords of a writer node `w` and a reader node `r`
and reports through the walker; messages say what changed from old to new.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .examples import FORMAT_MISSES
from .numeric import (
    Bound,
    integer_lower,
    integer_upper,
    is_multiple,
    lower_bound,
    upper_bound,
)
from .regexgen import samples
from .rules_general import show
from .schemaops import Node, canon
from .walk import Site, Walker

CandidateMaker = Callable[[Node, int], list[Any]]


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
