"""What ``reset`` and ``step`` return, and how the reply envelope becomes one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .errors import ProtocolError
from .text import quote

if TYPE_CHECKING:
    from .codec import ModelCodec


ObsT = TypeVar("ObsT")

ENVELOPE_KEYS = frozenset({"observation", "reward", "done"})
"""Keys of a reset/step reply that StepResult holds as typed fields; all others go to extra."""


@dataclass(frozen=True)
class StepResult(Generic[ObsT]):
    """One reset or step outcome.

    ``extra`` holds every top-level reply key other than observation/reward/done (for
    example ``metadata``), so nothing a server sends is dropped; ``raw`` is the reply as
    received.
    """

    observation: ObsT
    reward: float | None
    done: bool
    extra: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def metadata(self) -> Any:
        """The top-level ``metadata`` key of the reply, if the server sent one."""
        return self.extra.get("metadata")


METADATA = "metadata"


def _envelope_error(problem: str, payload: Any) -> ProtocolError:
    received = quote(payload if not isinstance(payload, Mapping) else dict(payload))
    # The op (reset or step) and the "<op> failed: " prefix are added by the client.
    return ProtocolError(
        f"the reply {problem}; expected "
        '{"observation": {...}, "reward": number|null, "done": bool}; '
        f"received: {received}",
        received=received,
        op=None,
    )


def build_step_result(
    payload: Mapping[str, Any], codec: ModelCodec[ObsT], *, strict: bool = False
) -> StepResult[ObsT]:
    """Check the reply envelope's shape and decode its observation with ``codec``.

    A missing ``done`` is read as False and a missing ``reward`` as None (older servers omit
    them); anything else of the wrong type is a ProtocolError quoting the reply. ``strict``
    applies to the observation only (see ``ModelCodec.decode``): top-level keys beyond
    observation/reward/done always go to ``extra``.
    """
    if type(payload) is not dict and not isinstance(payload, Mapping):
        raise _envelope_error("is not a JSON object", payload)
    observation = payload.get("observation")
    if type(observation) is not dict and not isinstance(observation, Mapping):
        problem = (
            "has no 'observation' key"
            if "observation" not in payload
            else f"has an 'observation' that is {type(observation).__name__}, not an object"
        )
        raise _envelope_error(problem, payload)
    done = payload.get("done", False)
    if not isinstance(done, bool):
        raise _envelope_error(f"has a non-boolean done ({type(done).__name__})", payload)
    reward = payload.get("reward")
    if reward is not None and not isinstance(reward, bool | int | float):
        raise _envelope_error(f"has a non-numeric reward ({type(reward).__name__})", payload)
    extra = {key: value for key, value in payload.items() if key not in ENVELOPE_KEYS}
    if observation.get(METADATA) is None and codec.declares(METADATA):
        # OpenEnv observations always carry a metadata dict, but openenv-core 0.1 strips it
        # from the observation (openenv 0.10 keeps it, and copies it to the top level when
        # not empty): the top-level copy, else {}, gives the same observation from both.
        top = payload.get(METADATA)
        observation = {**observation, METADATA: dict(top) if isinstance(top, Mapping) else {}}
    return StepResult(
        observation=codec.decode(observation, strict=strict),
        reward=None if reward is None else float(reward),
        done=done,
        extra=extra,
        raw=dict(payload),
    )
