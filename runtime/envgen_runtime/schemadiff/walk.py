"""What the comparer and its keyword rules share: where the walk is and what a rule may ask.

The keyword rules (`rules_general`, `rules_scalar`, `rules_array`, `rules_object`) are
called by the comparer (`compare.Comparer`) and call back into it, to report a finding or to
compare the schemas one level down. They see it only as the `Walker` protocol here, so the
comparer can import the rules while no rule imports the comparer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .examples import Examples
from .policy import Policy
from .schemaops import Loc, Node


@dataclass(frozen=True)
class Frame:
    """One level of the writer's value on the way to a finding: its schema and the step down."""

    schema: Any
    key: str | int
    is_item: bool


@dataclass(frozen=True)
class Site:
    """Where the walk is: the writer's levels above, the instance path, the property context."""

    frames: tuple[Frame, ...] = ()
    path: str = ""
    required_in_writer: bool | None = None
    quiet: bool = False

    def down(self, schema: Any, key: str | int, is_item: bool, shown: str) -> Site:
        token = shown.replace("~", "~0").replace("/", "~1")
        return Site(
            frames=(*self.frames, Frame(schema, key, is_item)),
            path=f"{self.path}/{token}",
            quiet=self.quiet,
        )


class Walker(Protocol):
    """The comparer as a keyword rule sees it: one role's writer schema against its reader's.

    `w_old` says the writer is the old schema (the action) rather than the new one.
    """

    w_old: bool
    policy: Policy
    examples: Examples
    ignores_unknown: bool

    def compare(self, w: Node, r: Node, site: Site) -> None:
        """Compare a writer node with a reader node, one level below the rule's."""
        ...

    def old_new(self, w_value: Any, r_value: Any) -> tuple[Any, Any]:
        """(old, new) from (writer's, reader's)."""
        ...

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
        """Record a finding; `rules` is (rule when the writer is old, when it is new).

        `at` is the instance path when it is below `site` (a property of the object at
        `site`); `site` still decides how the witness is built.

        `{W}`/`{R}` in the message become "old schema"/"new schema" for this direction.
        """
        ...

    def pick(
        self, w_schema: Any, r_schema: Any, candidates: Callable[[], list[Any]]
    ) -> Callable[[], Any]:
        """A witness maker: the first candidate the writer accepts and the reader rejects."""
        ...
