"""An env written the way the public OpenEnv envs are: pydantic models with nested `$defs`
(items inside a bag inside the observation) and a hand-written client beside it."""

# mypy: disable-error-code="misc,no-any-unimported,import-untyped"
from __future__ import annotations

import random
from typing import Any, Literal

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, Field


class Item(BaseModel):
    name: str = Field(description="What the item is.")
    weight: float = Field(ge=0, description="Kilograms.")
    tags: list[str] = Field(default_factory=list)


class Bag(BaseModel):
    items: list[Item] = Field(default_factory=list)
    capacity: float = Field(gt=0, default=10.0)


class InventoryAction(Action):
    op: Literal["take", "drop"] = Field(description="Take an item from the shelf or drop one.")
    index: int = Field(ge=0, description="Which shelf slot or bag slot.")


class InventoryObservation(Observation):
    bag: Bag
    shelf: list[Item]
    note: str | None = None


class InventoryEnvironment(Environment[InventoryAction, InventoryObservation, State]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State()
        self._shelf: list[Item] = []
        self._bag = Bag()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> InventoryObservation:
        rng = random.Random(seed or 0)
        self._state = State(episode_id=episode_id or f"inv-{seed}", step_count=0)
        self._shelf = [
            Item(name=f"thing{i}", weight=round(rng.uniform(0.5, 4.0), 2), tags=["shelf"])
            for i in range(4)
        ]
        self._bag = Bag()
        return InventoryObservation(bag=self._bag, shelf=self._shelf, metadata={"seed": seed})

    def step(self, action: InventoryAction, **kwargs: Any) -> InventoryObservation:
        self._state.step_count += 1
        note = None
        if action.op == "take" and action.index < len(self._shelf):
            item = self._shelf.pop(action.index)
            self._bag.items.append(item)
            note = f"took {item.name}"
        elif action.op == "drop" and action.index < len(self._bag.items):
            self._shelf.append(self._bag.items.pop(action.index))
            note = "dropped"
        load = sum(i.weight for i in self._bag.items)
        return InventoryObservation(
            bag=self._bag,
            shelf=self._shelf,
            note=note,
            reward=load,
            done=load > self._bag.capacity,
            metadata={"load": load},
        )

    @property
    def state(self) -> State:
        return self._state


def build_app() -> Any:
    return create_app(
        InventoryEnvironment,
        InventoryAction,
        InventoryObservation,
        env_name="inventory_env",
        max_concurrent_envs=8,
    )


class HandWrittenInventoryClient(EnvClient[InventoryAction, InventoryObservation, State]):
    """A client as the public envs write them by hand."""

    def _step_payload(self, action: InventoryAction) -> dict[str, Any]:
        return {"op": action.op, "index": action.index}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[InventoryObservation]:
        obs = payload.get("observation", {})
        observation = InventoryObservation(
            bag=Bag(**obs.get("bag", {})),
            shelf=[Item(**i) for i in obs.get("shelf", [])],
            note=obs.get("note"),
            done=payload.get("done", False),
            reward=payload.get("reward"),
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(episode_id=payload.get("episode_id"), step_count=payload.get("step_count", 0))
