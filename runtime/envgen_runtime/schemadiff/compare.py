"""The wire comparer: is every value the writer may send accepted by the reader?

It walks the writer's and the reader's schema side by side (refs followed, `allOf` merged,
unions matched branch to branch) and records each difference as a `Finding`: a rule id named
for what changed from old to new, whether it breaks in this direction, where it is, and a
way to build a witness. For the action the writer is the old schema and the reader the new
one; for observation and state it is the other way round. The keyword families live in
`rules_general`, `rules_scalar`, `rules_array` and `rules_object`, which see the comparer as
the `walk.Walker` protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from . import rules_array, rules_general, rules_object, rules_scalar
from .examples import MISSING, Examples
from .policy import Policy
from .roles import Role, writer_is_old
from .schemaops import (
    Loc,
    Node,
    admits,
    branches,
    canon,
    merge,
    resolve,
    split_types,
    types_of,
    union_kind,
    value_types,
)
from .validation import Validation, reader_defs, view
from .walk import Frame, Site

BUDGET = 20000


class TooComplex(Exception):
    """The schemas are too large or too recursive to compare within the budget."""


@dataclass
class Finding:
    rule: str
    breaking: bool
    old_loc: Loc
    new_loc: Loc
    path: str
    message: str
    note: str = ""
    witness: Callable[[], Any] | None = None
    frames: tuple[Frame, ...] = ()


@dataclass
class Context:
    """What every comparer of one role shares: both schemas, the policy, the judges."""

    role: Role
    writer_defs: dict[str, Any]
    reader_raw_defs: dict[str, Any]
    policy: Policy

    def __post_init__(self) -> None:
        self.w_old = writer_is_old(self.role)
        self.examples = Examples(Validation(self.writer_defs))
        self.reader_view = reader_defs(self.reader_raw_defs, self.policy, self.role)
        self.reader_check = Validation(self.reader_view)
        self.ignores_unknown = self.policy.reader_ignores_unknown(self.role)


class Comparer:
    """Compares one role's writer schema with its reader schema (the rules' `walk.Walker`)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.w_old = ctx.w_old
        self.policy = ctx.policy
        self.examples = ctx.examples
        self.ignores_unknown = ctx.ignores_unknown
        self.findings: list[Finding] = []
        self.visited: set[tuple[Any, ...]] = set()
        self.calls = 0

    def run(self, writer_root: str, reader_root: str) -> list[Finding]:
        self.compare(
            Node({"$ref": _ref(writer_root)}, Loc(writer_root)),
            Node({"$ref": _ref(reader_root)}, Loc(reader_root)),
            Site(),
        )
        return self.findings

    def compare(self, w: Node, r: Node, site: Site) -> None:
        self.calls += 1
        if self.calls > BUDGET:
            raise TooComplex
        w = resolve(w, self.ctx.writer_defs)
        r = resolve(r, self.ctx.reader_raw_defs)
        key = (w.loc, r.loc, canon(w.schema), canon(r.schema), site.quiet)
        if key in self.visited:
            return
        self.visited.add(key)
        if _accepts_all(w.schema) and _accepts_all(r.schema):
            return
        if w.schema is False:
            if r.schema is not False:
                self.emit(
                    site,
                    w.loc,
                    r.loc,
                    ("schema.was-false", "schema.now-false"),
                    False,
                    "the {W} is `false` here: nothing is sent",
                )
            return
        if r.schema is False:
            self.emit(
                site,
                w.loc,
                r.loc,
                ("schema.now-false", "schema.was-false"),
                True,
                "the {R} is `false` here and accepts nothing",
                witness=self.example_of(w.schema),
            )
            return
        w_alts = branches(w, self.ctx.writer_defs)
        r_alts = branches(r, self.ctx.reader_raw_defs)
        if len(w_alts) > 1 or len(r_alts) > 1 or union_kind(r) == "oneOf":
            self._union(w, r, w_alts, r_alts, site)
        else:
            self.compare_single(w, r, site)

    def compare_single(self, w: Node, r: Node, site: Site) -> None:
        """Two non-union schemas, keyword family by keyword family."""
        rules_general.annotation_changes(self, w, r, site)
        rules_general.defaults(self, w, r, site)
        tw, tr = value_types(w.schema), value_types(r.schema)
        rules_general.types(self, w, r, tw, tr, site)
        finite = rules_general.enums(self, w, r, site)
        common = {t for t in tw if admits(tr, t)}
        if not finite:
            if common & {"integer", "number"}:
                rules_scalar.numbers(self, w, r, "number" not in tw, site)
            if "string" in common:
                rules_scalar.strings(self, w, r, site)
            if "array" in common:
                rules_array.arrays(self, w, r, site)
            if "object" in common:
                rules_object.objects(self, w, r, site)
        rules_general.other_keywords(self, w, r, site)
        for index, branch in enumerate(r.d.get("allOf", [])):
            self.compare(w, Node(branch, r.loc.at("allOf", index)), replace(site, quiet=True))

    # -- reporting -----------------------------------------------------------------------------

    def old_new(self, w_value: Any, r_value: Any) -> tuple[Any, Any]:
        """(old, new) from (writer's, reader's)."""
        return (w_value, r_value) if self.w_old else (r_value, w_value)

    def emit(
        self,
        site: Site,
        w_loc: Loc,
        r_loc: Loc,
        rules: tuple[str, str],
        breaking: bool,
        message: str,
        note: str = "",
        witness: Callable[[], Any] | None = None,
        at: str | None = None,
    ) -> None:
        """Record a finding, as `walk.Walker.emit` describes."""
        if site.quiet and not breaking:
            return
        old_loc, new_loc = self.old_new(w_loc, r_loc)
        w_name = "old schema" if self.w_old else "new schema"
        r_name = "new schema" if self.w_old else "old schema"
        self.findings.append(
            Finding(
                rule=rules[0] if self.w_old else rules[1],
                breaking=breaking,
                old_loc=old_loc,
                new_loc=new_loc,
                path=site.path if at is None else at,
                message=message.replace("{W}", w_name).replace("{R}", r_name),
                note=note,
                witness=witness if breaking else None,
                frames=site.frames,
            )
        )

    def example_of(self, schema: Any) -> Callable[[], Any]:
        return lambda: self.examples.example(schema)

    def pick(
        self, w_schema: Any, r_schema: Any, candidates: Callable[[], list[Any]]
    ) -> Callable[[], Any]:
        """A witness maker: the first candidate the writer accepts and the reader rejects."""

        def make() -> Any:
            policy = self.policy
            r_view = view(
                r_schema,
                self.ignores_unknown,
                policy.default_satisfies_required,
                policy.extensible_enums,
            )
            for value in [*candidates(), *self.examples.values(w_schema, 8)]:
                if value is MISSING:
                    continue
                if self.examples.valid(w_schema, value) and not self.ctx.reader_check.valid(
                    r_view, value
                ):
                    return value
            return MISSING

        return make

    # -- unions --------------------------------------------------------------------------------

    def _union(self, w: Node, r: Node, w_alts: list[Node], r_alts: list[Node], site: Site) -> None:
        """Match each writer branch to a reader branch that accepts it."""
        w_alts = [part for alt in w_alts for part in split_types(alt)]
        r_alts = [part for alt in r_alts for part in split_types(alt)]
        matched: set[int] = set()
        for index, alt in enumerate(w_alts):
            chosen = self._match(alt, index, r_alts, site)
            if chosen is None:
                self._unmatched(alt, r.loc, site, writer_side=True, level=(w, r))
                continue
            j, trial = chosen
            self.findings.extend(trial.findings)
            self.visited |= trial.visited
            matched.add(j)
            if union_kind(r) == "oneOf":
                self._overlaps(w, alt, j, r_alts, site)
        for j, other in enumerate(r_alts):
            if j not in matched:
                self._unmatched(other, w.loc, site, writer_side=False)

    def _match(
        self, alt: Node, index: int, r_alts: list[Node], site: Site
    ) -> tuple[int, Comparer] | None:
        w_types = types_of(alt.schema)
        candidates = [
            j for j, other in enumerate(r_alts) if _types_meet(w_types, types_of(other.schema))
        ]
        ranked = sorted(candidates, key=lambda j: -_affinity(alt, r_alts[j], index, j))
        for j in ranked:
            trial = self._dry(alt, r_alts[j], site)
            if not any(f.breaking for f in trial.findings):
                return j, trial
        best = _affinity(alt, r_alts[ranked[0]], index, ranked[0]) if ranked else -1
        if best >= 2 or (len(ranked) == 1 and best >= 0):
            return ranked[0], self._dry(alt, r_alts[ranked[0]], site)
        return None

    def _dry(self, w: Node, r: Node, site: Site) -> Comparer:
        trial = Comparer(self.ctx)
        trial.visited = set(self.visited)
        trial.calls = self.calls
        trial.compare(w, r, site)
        self.calls = trial.calls
        return trial

    def _unmatched(
        self,
        alt: Node,
        other_loc: Loc,
        site: Site,
        writer_side: bool,
        level: tuple[Node, Node] | None = None,
    ) -> None:
        """A branch on one side that no branch on the other side covers.

        A writer's branch the reader lacks breaks; a reader's branch the writer lacks is safe.
        """
        if types_of(alt.schema) == frozenset({"null"}):
            rules, what = ("nullable.removed", "nullable.added"), "null"
        else:
            rules = ("union.branch-removed", "union.branch-added")
            what = f"the branch at {alt.loc.pointer or '/'}"
        if writer_side:
            self.emit(
                site,
                alt.loc,
                other_loc,
                rules,
                True,
                what + " is accepted by the {W} and by no branch of the {R}",
                witness=self._branch_witness(alt, level),
            )
        else:
            self.emit(
                site,
                other_loc,
                alt.loc,
                (rules[1], rules[0]),
                False,
                what + " is accepted only by the {R}",
            )

    def _branch_witness(self, alt: Node, level: tuple[Node, Node] | None) -> Callable[[], Any]:
        """A value of the branch that the writer's whole union still accepts (oneOf!)."""
        if level is None:
            return self.example_of(alt.schema)
        w, r = level
        return self.pick(w.schema, r.schema, lambda: list(self.examples.values(alt.schema, 12)))

    def _overlaps(self, w: Node, alt: Node, chosen: int, r_alts: list[Node], site: Site) -> None:
        """Values of `alt` that also match a second branch of the reader's oneOf are rejected.

        Reported only with a value that matches both: overlap is proven, never guessed.
        """
        for k, other in enumerate(r_alts):
            if k == chosen or not _types_meet(types_of(alt.schema), types_of(other.schema)):
                continue
            both = merge(alt, resolve(other, self.ctx.reader_raw_defs), self.ctx.writer_defs)
            found = next(
                (
                    value
                    for value in self.examples.values(both.schema, 6)
                    if self.examples.valid(w.schema, value)
                    and self.ctx.reader_check.valid(other.schema, value)
                ),
                MISSING,
            )
            if found is MISSING:
                continue
            self.emit(
                site,
                alt.loc,
                other.loc,
                ("oneOf.branch-overlap", "oneOf.branch-overlap"),
                True,
                f"values of the branch at {alt.loc.pointer or '/'} also match the {{R}}'s oneOf "
                f"branch at {other.loc.pointer or '/'}, and oneOf rejects a value that matches "
                "two branches",
                witness=_const(found),
            )


def _const(value: Any) -> Callable[[], Any]:
    return lambda: value


def _accepts_all(schema: Any) -> bool:
    return schema is True or schema == {}


def _ref(name: str) -> str:
    return "#/$defs/" + name.replace("~", "~0").replace("/", "~1")


def _types_meet(a: frozenset[str], b: frozenset[str]) -> bool:
    return any(admits(b, t) for t in a) or any(admits(a, t) for t in b)


def _affinity(a: Node, b: Node, i: int, j: int) -> int:
    """How likely two union branches are the same branch, old and new."""
    score = 0
    if a.loc == b.loc:
        score += 2
    tags_a, tags_b = _tags(a.d), _tags(b.d)
    shared = set(tags_a) & set(tags_b)
    if any(tags_a[k] == tags_b[k] for k in shared):
        score += 4
    elif shared:
        score -= 4
    if i == j:
        score += 1
    return score


def _tags(schema: dict[str, Any]) -> dict[str, str]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return {}
    return {
        name: canon(sub["const"])
        for name, sub in props.items()
        if isinstance(sub, dict) and "const" in sub
    }
