"""A step after ``done`` is refused by the real servers, as ``EpisodeEndedError`` everywhere.

envgen_runtime.server refuses it on both protocols (WebSocket: openenv's ``EXECUTION_ERROR``
carrying the ``EPISODE_ENDED`` message; HTTP: 409 with ``code``), and both transports, sync and
asyncio, raise the one typed error; a reset then plays the next episode.
"""

from __future__ import annotations

import asyncio

import pytest
from envgen_runtime import EpisodeEndedError, ServerError

from generated.quiz_env import AsyncQuizEnv, QuizAction, QuizEnv
from tests.e2e.conftest import SERVED

pytestmark = pytest.mark.e2e
TRANSPORTS = sorted({t for _, t in SERVED})
_ANSWER = QuizAction(answer="no idea")
_MAX_STEPS = 100


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_step_after_done_raises_episode_ended(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    with QuizEnv(servers[("quiz_env", transport)], transport=transport) as env:  # type: ignore[arg-type]
        result = env.reset(seed=4)
        for _ in range(_MAX_STEPS):
            result = env.step(_ANSWER)
            if result.done:
                break
        assert result.done
        with pytest.raises(EpisodeEndedError) as raised:
            env.step(_ANSWER)
        error = raised.value
        assert isinstance(error, ServerError)
        assert error.op == "step"
        assert "call reset()" in str(error)
        assert error.status == (409 if transport == "http" else None)
        # the refusal left the session usable: the next episode plays
        env.reset(seed=5)
        assert env.step(_ANSWER).observation is not None


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_async_step_after_done_raises_episode_ended(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    async def play() -> None:
        url = servers[("quiz_env", transport)]
        async with AsyncQuizEnv(url, transport=transport) as env:  # type: ignore[arg-type]
            result = await env.reset(seed=4)
            for _ in range(_MAX_STEPS):
                result = await env.step(_ANSWER)
                if result.done:
                    break
            assert result.done
            with pytest.raises(EpisodeEndedError):
                await env.step(_ANSWER)
            await env.reset(seed=6)
            await env.step(_ANSWER)

    asyncio.run(play())
