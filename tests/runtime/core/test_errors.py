"""The exception tree and the one place that maps low-level errors onto it."""

from __future__ import annotations

import json
import pickle

import pydantic
import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    ProtocolError,
    ProviderError,
    ServerError,
    ServerValidationError,
    SessionLostError,
    ValidationIssue,
)
from envgen_runtime.core import errors as exceptions
from envgen_runtime.core import jsonbody, text
from envgen_runtime.transport import errormap


def test_tree_shape() -> None:
    for cls in (
        EnvConnectionError,
        EnvTimeoutError,
        ProtocolError,
        ProviderError,
        ServerError,
        EnvValidationError,
    ):
        assert issubclass(cls, EnvgenRuntimeError)
    assert issubclass(ServerValidationError, ServerError)
    assert issubclass(ServerValidationError, EnvValidationError)
    assert not issubclass(EnvValidationError, ServerError)
    assert issubclass(SessionLostError, EnvConnectionError)
    doc = exceptions.__doc__ or ""
    for name in (
        "EnvConnectionError",
        "ServerValidationError",
        "ProviderError",
        "SessionLostError",
    ):
        assert name in doc


def test_server_validation_error_has_both_parents_data() -> None:
    issue = ValidationIssue(loc=("body", "seed"), message="too small", type="greater_than_equal")
    err = ServerValidationError("reset request", [issue], status=422, body="{}", op="reset")
    assert err.status == 422 and err.code is None and err.op == "reset" and err.body == "{}"
    assert err.role == "reset request" and err.errors == [issue]
    assert "body.seed: too small" in str(err)
    assert "HTTP 422" in str(err)


@pytest.mark.parametrize(
    "error",
    [
        EnvConnectionError("c", op="step", url="http://x"),
        EnvTimeoutError("t", op="step", url="http://x", timeout_s=1.0),
        EnvTimeoutError("t", op="reset", url="http://x", timeout_s=1.0, during_connect=True),
        SessionLostError("lost", op="state", url="ws://x/ws"),
        ProtocolError("p", received="r", op="state"),
        ProviderError("v", output="o", exit_code=3),
        ServerError(500, "body", "step", code="X"),
        EnvValidationError("action", [ValidationIssue(loc=("a",), message="m")]),
        ServerValidationError(
            "action",
            [ValidationIssue(loc=("a",), message="m")],
            status=None,
            body="b",
            op="step",
            code="VALIDATION_ERROR",
        ),
    ],
)
def test_errors_pickle(error: EnvgenRuntimeError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.__dict__ == error.__dict__


def test_server_error_default_message() -> None:
    assert (
        str(ServerError(503, "busy", "step")) == "step failed: the server answered HTTP 503: busy"
    )
    err = ServerError(None, "m", "reset", code="EXECUTION_ERROR")
    assert "EXECUTION_ERROR" in str(err)


def test_truncate_and_quote() -> None:
    assert text.truncate("abc", 5) == "abc"
    long = text.truncate("x" * 600)
    assert long.startswith("x" * 500) and "100 more characters" in long
    assert text.quote(b"\xff\xfeok") == "\ufffd\ufffdok"


def test_redact_url_drops_credentials_and_query() -> None:
    assert text.redact_url("http://user:secret@h:1/p?token=abc") == "http://h:1/p?..."
    assert "secret" not in text.redact_url("wss://:secret@h/ws")


def test_parse_json_object() -> None:
    assert jsonbody.parse_json_object(b'{"a": 1}', op="state", source="s") == {"a": 1}
    with pytest.raises(ProtocolError) as info:
        jsonbody.parse_json_object(b"<html>", op="state", source="the reply")
    assert info.value.received == "<html>" and "not valid JSON" in str(info.value)
    with pytest.raises(ProtocolError, match="got list"):
        jsonbody.parse_json_object("[1]", op="state", source="the reply")


def test_dumps_body_rejects_unserialisable() -> None:
    with pytest.raises(EnvValidationError, match="cannot be sent as JSON"):
        jsonbody.dumps_body({"x": {1, 2}}, op="reset")
    with pytest.raises(EnvValidationError):
        jsonbody.dumps_body({"x": float("nan")}, op="step")


def test_map_exception_builtin_errors() -> None:
    timeout = errormap.map_exception(TimeoutError(), op="step", url="u", timeout_s=2.0)
    assert isinstance(timeout, EnvTimeoutError) and timeout.timeout_s == 2.0
    refused = errormap.map_exception(
        ConnectionRefusedError(111, "refused"), op="reset", url="http://h", timeout_s=1
    )
    assert isinstance(refused, EnvConnectionError) and "refused" in str(refused)
    decode = errormap.map_exception(
        json.JSONDecodeError("x", "doc", 0), op="s", url="u", timeout_s=None
    )
    assert isinstance(decode, ProtocolError)
    assert errormap.map_exception(KeyError("bug"), op="s", url="u", timeout_s=None) is None


def test_translate_lets_bugs_through() -> None:
    with pytest.raises(KeyError), errormap.translate("step", "u", 1.0):
        raise KeyError("bug")
    with pytest.raises(EnvConnectionError), errormap.translate("step", "u", 1.0):
        raise ConnectionResetError(104, "Connection reset by peer")


def test_validation_error_from_pydantic() -> None:
    class M(pydantic.BaseModel):
        a: int

    with pytest.raises(pydantic.ValidationError) as info:
        M.model_validate({"a": "x"})
    err = exceptions.validation_error("state", info.value, hint="h")
    assert err.role == "state" and err.errors[0].loc == ("a",)
    assert "state failed validation (1 error); h:" in str(err)
    assert "input: 'x'" in str(err)
