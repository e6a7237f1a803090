# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""Serve grid_env: `python -m examples.grid_env.server --protocol websocket|http`.

The action is a tagged union. openenv 0.10 validates actions with `action_cls.model_validate`
and publishes `action_cls.model_json_schema()`, so `GridAction` overrides both to use a
discriminated-union adapter. openenv-core 0.1.1 builds actions with `action_cls(**fields)`,
so there `GridAction` is a class whose construction returns the variant named by `type`.
"""

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from examples._serve import WIRE_NAME, EnvInfo, http_app, import_openenv_core, main, websocket_app
from examples.grid_env.logic import MAX_MOVE, GridLogic

INFO = EnvInfo(
    name="grid_env",
    description="A seeded gridworld: move, turn and pick up items.",
    version="0.1.0",
)

Heading = Literal["north", "east", "south", "west"]
Rotation = Literal["left", "right"]
CellClass = Literal["floor", "wall", "item", "edge"]


def build_websocket_app() -> Any:
    """openenv 0.10 app with pydantic models."""
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    class MoveAction(Action):
        """Face `direction` and walk up to `steps` cells, stopping at walls and edges."""

        type: Literal["move"] = Field(description="Tag: a move.")
        direction: Heading = Field(description="Compass direction to walk.")
        steps: int = Field(default=1, ge=1, le=MAX_MOVE, description="Cells to walk.")

    class TurnAction(Action):
        """Turn a quarter to the left or right."""

        type: Literal["turn"] = Field(description="Tag: a turn.")
        rotation: Rotation = Field(description="Which way to turn.")

    class PickAction(Action):
        """Pick up items at the given cells within reach: the agent's cell or a neighbour."""

        type: Literal["pick"] = Field(description="Tag: a pick.")
        cells: list[Annotated[list[int], Field(min_length=2, max_length=2)]] = Field(
            min_length=1, description="Cells to pick from, as [row, col] pairs."
        )

    union = TypeAdapter(
        Annotated[MoveAction | TurnAction | PickAction, Field(discriminator="type")]
    )

    class GridAction(Action):
        """One grid action, tagged by `type`: move, turn or pick."""

        # Never instantiated: openenv calls these two classmethods and nothing else.

        @classmethod
        def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Any:
            return union.validate_python(obj, *args, **kwargs)

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            schema: dict[str, Any] = union.json_schema(*args, **kwargs)
            return {"title": "GridAction", "description": cls.__doc__, **schema}

    class Position(BaseModel):
        """A cell on the grid."""

        row: int = Field(ge=0, description="Row index, 0 at the top.")
        col: int = Field(ge=0, description="Column index, 0 at the left.")

    class GridObservation(Observation):
        """What the agent sees after each action."""

        # `class` is a keyword: serialize_by_alias keeps the wire name in openenv's
        # `model_dump()`, which passes no `by_alias` of its own.
        model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

        grid: list[list[str]] = Field(description="Cell glyphs, row by row.")
        position: Position = Field(description="The agent's cell.")
        facing: Heading = Field(description="Direction the agent faces.")
        inventory: list[str] = Field(description="Items picked so far.")
        message: str = Field(description="What the last action did.")
        class_: CellClass = Field(alias="class", description="What lies in the cell ahead.")

    class GridState(State):
        """Base state plus the board's bookkeeping."""

        grid_size: int = Field(ge=1, description="Rows (and columns) of the square grid.")
        agent_position: Position = Field(description="The agent's cell.")
        items_left: int = Field(ge=0, description="Items still on the board.")
        inventory: list[str] = Field(description="Items picked so far.")

    return websocket_app(INFO, GridLogic, GridAction, GridObservation, GridState)


def build_http_app() -> Any:
    """openenv-core 0.1.1 app with dataclass models."""
    import_openenv_core()  # before importing from openenv_core: see its docstring
    from openenv_core.env_server.types import Action, Observation, State

    @dataclass(kw_only=True)
    class MoveAction(Action):
        type: str = "move"
        direction: str
        steps: int = 1

    @dataclass(kw_only=True)
    class TurnAction(Action):
        type: str = "turn"
        rotation: str

    @dataclass(kw_only=True)
    class PickAction(Action):
        type: str = "pick"
        cells: list[list[int]]

    variants: dict[str, type[Any]] = {"move": MoveAction, "turn": TurnAction, "pick": PickAction}

    class GridAction:
        """Constructed the way openenv-core constructs actions; returns the tagged variant."""

        def __new__(cls, **fields: Any) -> Any:
            variant = variants.get(fields.get("type"))  # type: ignore[arg-type]
            if variant is None:
                raise TypeError(f"action type must be one of {sorted(variants)}")
            return variant(**fields)

    @dataclass
    class Position:
        row: int
        col: int

    @dataclass(kw_only=True)
    class GridObservation(Observation):
        grid: list[list[str]]
        position: Position
        facing: str
        inventory: list[str]
        message: str
        class_: str = field(metadata={WIRE_NAME: "class"})

    @dataclass
    class GridState(State):
        grid_size: int = 0
        agent_position: dict[str, int] = field(default_factory=dict)
        items_left: int = 0
        inventory: list[str] = field(default_factory=list)

    def observation(fields: dict[str, Any]) -> dict[str, Any]:
        return {**fields, "position": Position(**fields["position"])}

    return http_app(
        INFO, GridLogic, GridAction, GridObservation, GridState, make_observation=observation
    )


if __name__ == "__main__":
    main(INFO, build_websocket_app, build_http_app)
