"""openenv 0.10's ``/ws`` request messages, validated alike so errors read alike."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ResetMessage(_Message):
    type: Literal["reset"] = "reset"
    data: dict[str, Any] = Field(default_factory=dict)


class StepMessage(_Message):
    type: Literal["step"] = "step"
    data: dict[str, Any]


class StateMessage(_Message):
    type: Literal["state"] = "state"


class CloseMessage(_Message):
    type: Literal["close"] = "close"
