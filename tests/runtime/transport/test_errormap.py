"""transport.errormap: the refusal of a step after done becomes one error type on both wires."""

from __future__ import annotations

import json

from envgen_runtime import EpisodeEndedError, ServerError
from envgen_runtime.transport.errormap import episode_ended
from envgen_runtime.transport.http.engine import http_error
from envgen_runtime.transport.websocket.errors import ws_error

_TEXT = "EPISODE_ENDED: the episode has ended (the last step returned done=true); reset"


def test_http_409_with_code_is_episode_ended() -> None:
    body = json.dumps({"detail": _TEXT, "code": "EPISODE_ENDED"})
    error = http_error(409, body, op="step", url="http://127.0.0.1:9/")
    assert isinstance(error, EpisodeEndedError) and isinstance(error, ServerError)
    assert (error.status, error.code, error.op) == (409, "EPISODE_ENDED", "step")
    assert "call reset()" in str(error) and "http://127.0.0.1:9" in str(error)


def test_websocket_execution_error_with_the_message_is_episode_ended() -> None:
    data = {"code": "EXECUTION_ERROR", "message": _TEXT}
    error = ws_error(data, op="step", raw=json.dumps(data))
    assert isinstance(error, EpisodeEndedError)
    assert (error.status, error.code) == (None, "EXECUTION_ERROR")


def test_other_server_errors_are_not_episode_ended() -> None:
    data = {"code": "EXECUTION_ERROR", "message": "ValueError: nothing to pop"}
    assert type(ws_error(data, op="step", raw="")) is ServerError
    assert type(http_error(500, '{"detail": "boom"}', op="step", url="http://h/")) is ServerError
    assert episode_ended("episode ended", code=None, status=409, body="", op="step") is None
