"""envgen's stateful HTTP protocol on starlette: one environment kept across ``/reset``,
``/step`` and ``/state``, with the request, reply and error shapes of ``apps.http_app``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..episode import EpisodeEnded
from ..serving import accepted
from .session import openenv_json, payload_json
from .threads import Runner


class ResetRequest(BaseModel):
    """openenv 0.10's ResetRequest: seed and episode id, other reset parameters allowed."""

    model_config = ConfigDict(extra="allow")
    seed: int | None = Field(default=None, ge=0)
    episode_id: str | None = Field(default=None, max_length=255)


class StepRequest(BaseModel):
    """openenv 0.10's StepRequest: the action, a timeout and a request id, others allowed."""

    model_config = ConfigDict(extra="allow")
    action: dict[str, Any]
    timeout_s: float | None = Field(default=None, gt=0)
    request_id: str | None = Field(default=None, max_length=255)


def _pydantic_json(content: Any) -> Response:
    """A 200 whose body is `content` as openenv's app writes a route's return value
    (``openenv_json``: FastAPI's ``dump_json``)."""
    return Response(openenv_json(content), media_type="application/json")


def _invalid(exc: ValidationError, where: tuple[str, ...] = ()) -> JSONResponse:
    """A 422 with pydantic's errors, under `where` (FastAPI's `body` for request bodies)."""
    detail = json.loads(exc.json(include_url=False))
    for item in detail:
        item["loc"] = [*where, *item["loc"]]
    return JSONResponse({"detail": detail}, status_code=422)


async def _body(request: Request, model: type[BaseModel], empty: bool) -> Any:
    """The request's JSON body as `model` (an empty one is the defaults when `empty`)."""
    raw = await request.body()
    if not raw.strip() and empty:
        return model()
    return model.model_validate_json(raw)


def http_routes(env: Any, action_cls: type[Any], thread: Runner) -> list[Route]:
    """The stateful routes over `env`, which every request shares. Its methods run on
    `thread` (made by the caller, which constructed `env` there: ``threads``), one call at a
    time in the order the requests came, so no lock is needed and a slow step blocks no
    `/health` or other request on the loop."""

    async def run(call: Callable[[], Any]) -> Response:
        """`call`'s observation; a ValidationError is a 422, a step after done a 409 (with
        `code`), the env's own failure a 500."""
        try:
            observation = await thread.run(call)
        except ValidationError as exc:
            return _invalid(exc)
        except EpisodeEnded as exc:
            return JSONResponse({"detail": str(exc), "code": exc.code}, status_code=409)
        except Exception as exc:
            return JSONResponse({"detail": f"{type(exc).__name__}: {exc}"}, status_code=500)
        return Response(payload_json(observation), media_type="application/json")

    async def reset(request: Request) -> Response:
        try:
            body = await _body(request, ResetRequest, empty=True)
        except ValidationError as exc:
            return _invalid(exc, ("body",))
        kwargs = body.model_dump(exclude_unset=True)
        return await run(lambda: env.reset(**accepted(env.reset, kwargs)))

    async def step(request: Request) -> Response:
        try:
            body = await _body(request, StepRequest, empty=False)
        except ValidationError as exc:
            return _invalid(exc, ("body",))
        kwargs = body.model_dump(exclude_unset=True, exclude={"action"})

        def call() -> Any:  # the action is validated here too: an invalid one is a 422
            action = action_cls.model_validate(body.action)
            return env.step(action, **accepted(env.step, kwargs))

        return await run(call)

    async def state(request: Request) -> Response:
        return _pydantic_json(await thread.run(lambda: env.state.model_dump(mode="json")))

    return [
        Route("/reset", reset, methods=["POST"]),
        Route("/step", step, methods=["POST"]),
        Route("/state", state, methods=["GET"]),
    ]
