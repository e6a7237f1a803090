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


def envelope_problem(payload: Any) -> str | None:
    """What is wrong with a reset/step reply's envelope (None: nothing).

    ``build_step_result`` raises it; the HTTP engine asks before it counts a reply as a
    result (one that is not says nothing about the server's environment).
    """
    if type(payload) is not dict and not isinstance(payload, Mapping):
        return "is not a JSON object"
    observation = payload.get("observation")
    if type(observation) is not dict and not isinstance(observation, Mapping):
        if "observation" not in payload:
            return "has no 'observation' key"
        return f"has an 'observation' that is {type(observation).__name__}, not an object"
    done = payload.get("done", False)
    if not isinstance(done, bool):
        return f"has a non-boolean done ({type(done).__name__})"
    reward = payload.get("reward")
    if reward is not None and not isinstance(reward, bool | int | float):
        return f"has a non-numeric reward ({type(reward).__name__})"
    return None


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
    problem = envelope_problem(payload)
    if problem is not None:
        raise _envelope_error(problem, payload)
    observation = payload["observation"]
    done = payload.get("done", False)
    reward = payload.get("reward")
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
