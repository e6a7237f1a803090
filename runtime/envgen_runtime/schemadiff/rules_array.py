"""Keyword rules for arrays: item schemas by position, item counts, uniqueness.

A closed tuple (`prefixItems` with `items: false`) is read as a maximum item count, so
closing or shortening a tuple is reported as `array.maxItems-lowered`.
"""

from __future__ import annotations

import math
from typing import Any

from .examples import MISSING
from .rules_scalar import count_bound
from .schemaops import Loc, Node, admits, resolve, value_types
from .walk import Site, Walker


def arrays(wk: Walker, w: Node, r: Node, site: Site) -> None:
    ws, rs = w.d, r.d
    w_prefix = _prefix(ws)
    r_prefix = _prefix(rs)
    w_max, r_max = _max_items(ws, w_prefix), _max_items(rs, r_prefix)

    def make(node: Node, length: int) -> list[Any]:
        return _of_length(wk, node, length)

    count_bound(wk, w, r, site, "minItems", "array", (ws.get("minItems"), rs.get("minItems")), make)
    if w_max != r_max:
        shown = (None if w_max == math.inf else w_max, None if r_max == math.inf else r_max)
        count_bound(wk, w, r, site, "maxItems", "array", shown, make)
    _unique(wk, w, r, site)
    positions = max(len(w_prefix), len(r_prefix))
    for index in range(positions):
        if index >= w_max or index >= r_max:
            return
        w_sub = w.child("prefixItems", index) if index < len(w_prefix) else w.child("items")
        r_sub = r.child("prefixItems", index) if index < len(r_prefix) else r.child("items")
        wk.compare(w_sub, r_sub, site.down(ws, index, True, str(index)))
    if w_max > positions and r_max > positions:
        wk.compare(w.child("items"), r.child("items"), site.down(ws, positions, True, "*"))


def _prefix(schema: dict[str, Any]) -> list[Any]:
    prefix = schema.get("prefixItems")
    return prefix if isinstance(prefix, list) else []


def _max_items(schema: dict[str, Any], prefix: list[Any]) -> float:
    maximum = schema.get("maxItems")
    limit = float(maximum) if isinstance(maximum, int) else math.inf
    if schema.get("items") is False:
        limit = min(limit, len(prefix))
    return limit


def _position(schema: dict[str, Any], index: int) -> Any:
    prefix = _prefix(schema)
    return prefix[index] if index < len(prefix) else schema.get("items", True)


def _of_length(wk: Walker, w: Node, length: int) -> list[Any]:
    if length == 0:
        return [[]]
    item = wk.examples.example(_position(w.d, length - 1))
    built = wk.examples.array_with(w.schema, length - 1, item)
    return [] if built is MISSING else [built]


def _unique(wk: Walker, w: Node, r: Node, site: Site) -> None:
    wu, ru = bool(w.d.get("uniqueItems")), bool(r.d.get("uniqueItems"))
    if wu == ru:
        return
    old, new = wk.old_new(wu, ru)
    message = f"uniqueItems {str(old).lower()} -> {str(new).lower()}"
    w_loc, r_loc = w.loc_of("uniqueItems"), r.loc_of("uniqueItems")
    added, removed = "array.uniqueItems-added", "array.uniqueItems-removed"
    if not ru:
        wk.emit(site, w_loc, r_loc, (removed, added), False, message)
        return
    pair = _equal_pair(wk, w.d)
    if pair is None:  # no two items can be equal (one item, or tuple positions of other types)
        wk.emit(site, w_loc, r_loc, (added, removed), False, message + " (items never repeat)")
        return

    def duplicates() -> list[Any]:
        first, second = pair
        length = max(int(w.d.get("minItems", 0)), second + 1)
        for value in wk.examples.values(_position(w.d, first), 6):
            if not wk.examples.valid(_position(w.d, second), value):
                continue
            out = []
            for index in range(length):
                item = value if index in pair else wk.examples.example(_position(w.d, index))
                if item is MISSING:
                    break
                out.append(item)
            else:
                return [out]
        return []

    wk.emit(
        site,
        w_loc,
        r_loc,
        (added, removed),
        True,
        message,
        witness=wk.pick(w.schema, r.schema, duplicates),
    )


def _equal_pair(wk: Walker, schema: dict[str, Any]) -> tuple[int, int] | None:
    """Two positions that could hold the same value, or None when items never repeat."""
    prefix = _prefix(schema)
    limit = _max_items(schema, prefix)
    count = int(min(limit, len(prefix) + 2))
    kinds = [value_types(_resolved(wk, _position(schema, i))) for i in range(count)]
    for second in range(count):
        for first in range(second):
            if any(admits(kinds[second], k) for k in kinds[first]) or any(
                admits(kinds[first], k) for k in kinds[second]
            ):
                return first, second
    return None


def _resolved(wk: Walker, schema: Any) -> Any:
    return resolve(Node(schema, Loc("")), wk.examples.defs).schema
