"""Grid logic: walk, turn and pick up items on a seeded board.

The board is `size` x `size` (a reset parameter, `SIZE` by default); walls and items are
placed from the seed, `WALLS` walls, or one on every fourth cell at difficulty "hard"; the
agent starts in the top-left corner facing east. Picking an item earns 1.0; the episode ends
when every item is picked or after `MAX_STEPS` steps.
"""

from __future__ import annotations

import random
from typing import Any

from examples._logic import EpisodeError, EpisodeLogic, Outcome

SIZE = 5
MAX_STEPS = 40
ITEMS = ("key", "gem", "coin")
WALLS = 3
FLOOR, WALL, AGENT = ".", "#", "@"
GLYPHS = {"key": "k", "gem": "g", "coin": "c"}
HEADINGS = ("north", "east", "south", "west")
DELTAS = {"north": (-1, 0), "east": (0, 1), "south": (1, 0), "west": (0, -1)}
MAX_MOVE = 3

Cell = tuple[int, int]


class GridLogic(EpisodeLogic):
    """Deterministic given the seed: the same actions always see the same board."""

    def _reset(self, seed: int, size: int = SIZE, difficulty: str = "easy") -> Outcome:
        rng = random.Random(seed)
        self.size = size
        self.position: Cell = (0, 0)
        self.facing = "east"
        self.inventory: list[str] = []
        free = [(r, c) for r in range(size) for c in range(size) if (r, c) != (0, 0)]
        walls = WALLS if difficulty == "easy" else size * size // 4
        cells = rng.sample(free, len(ITEMS) + walls)
        self.items: dict[Cell, str] = dict(zip(cells[: len(ITEMS)], ITEMS, strict=True))
        self.walls: set[Cell] = set(cells[len(ITEMS) :])
        return self._outcome(f"{len(ITEMS)} items hidden on a {size}x{size} grid", 0.0)

    def _step(self, action: dict[str, Any]) -> Outcome:
        kind = action.get("type")
        if kind == "move":
            return self._move(action)
        if kind == "turn":
            return self._turn(action)
        if kind == "pick":
            return self._pick(action)
        raise EpisodeError(f"unknown action type {kind!r}")

    def _move(self, action: dict[str, Any]) -> Outcome:
        direction = action.get("direction")
        steps = action.get("steps", 1)
        if direction not in DELTAS:
            raise EpisodeError(f"direction must be one of {HEADINGS}, not {direction!r}")
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_MOVE:
            raise EpisodeError(f"steps must be an integer from 1 to {MAX_MOVE}")
        self.facing = direction
        moved = 0
        for _ in range(steps):
            nxt = self._ahead()
            if nxt is None or nxt in self.walls:
                break
            self.position = nxt
            moved += 1
        return self._outcome(f"moved {moved} of {steps} cells {direction}", 0.0)

    def _turn(self, action: dict[str, Any]) -> Outcome:
        rotation = action.get("rotation")
        if rotation not in ("left", "right"):
            raise EpisodeError(f"rotation must be 'left' or 'right', not {rotation!r}")
        offset = 1 if rotation == "right" else -1
        self.facing = HEADINGS[(HEADINGS.index(self.facing) + offset) % len(HEADINGS)]
        return self._outcome(f"now facing {self.facing}", 0.0)

    def _pick(self, action: dict[str, Any]) -> Outcome:
        cells = action.get("cells")
        if not isinstance(cells, list) or not cells:
            raise EpisodeError("cells must be a non-empty list of [row, col] pairs")
        picked: list[str] = []
        for pair in cells:
            if (
                not isinstance(pair, list | tuple)
                or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            ):
                raise EpisodeError(f"each cell must be a [row, col] pair of integers: {pair!r}")
            cell = (pair[0], pair[1])
            reach = abs(cell[0] - self.position[0]) + abs(cell[1] - self.position[1])
            if reach <= 1 and cell in self.items:
                picked.append(self.items.pop(cell))
        self.inventory.extend(picked)
        message = f"picked {', '.join(picked)}" if picked else "nothing within reach"
        return self._outcome(message, float(len(picked)))

    def _ahead(self) -> Cell | None:
        dr, dc = DELTAS[self.facing]
        row, col = self.position[0] + dr, self.position[1] + dc
        return (row, col) if 0 <= row < self.size and 0 <= col < self.size else None

    def _outcome(self, message: str, reward: float) -> Outcome:
        done = not self.items or self.step_count >= MAX_STEPS
        reward_or_none = reward if self.step_count else None
        return Outcome(
            {
                "grid": self._render(),
                "position": {"row": self.position[0], "col": self.position[1]},
                "facing": self.facing,
                "inventory": list(self.inventory),
                "message": message,
                "class_": self._class_ahead(),
            },
            reward=reward_or_none,
            done=done,
        )

    def _class_ahead(self) -> str:
        cell = self._ahead()
        if cell is None:
            return "edge"
        if cell in self.walls:
            return "wall"
        return "item" if cell in self.items else "floor"

    def _render(self) -> list[list[str]]:
        grid = [[FLOOR] * self.size for _ in range(self.size)]
        for row, col in self.walls:
            grid[row][col] = WALL
        for (row, col), item in self.items.items():
            grid[row][col] = GLYPHS[item]
        grid[self.position[0]][self.position[1]] = AGENT
        return grid

    def _state(self) -> dict[str, Any]:
        return {
            "grid_size": self.size,
            "agent_position": {"row": self.position[0], "col": self.position[1]},
            "items_left": len(self.items),
            "inventory": list(self.inventory),
        }
