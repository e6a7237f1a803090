"""The drift check's address rule and its error paths (the feature: tests/e2e/test_schema_drift)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from envgen_runtime import EnvSpec
from envgen_runtime.client import schema_check


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    schema_check.forget()
    yield
    schema_check.forget()


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/schema"),
        ("https://env.example/prefix/", "https://env.example/prefix/schema"),
        ("ws://127.0.0.1:8000/ws", "http://127.0.0.1:8000/schema"),
        ("wss://env.example/ws", "https://env.example/schema"),
    ],
)
def test_the_schema_is_read_from_the_servers_http_side(base: str, url: str) -> None:
    assert schema_check.schema_url(base) == url


def test_a_spec_without_a_schemas_package_asks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_request(*args: Any) -> Any:
        raise AssertionError("no request expected")

    monkeypatch.setattr(schema_check, "_fetch", no_request)
    schema_check.check_schema(EnvSpec("x", "0.1.0", "http"), "http://127.0.0.1:9", {}, 1.0)
    spec = EnvSpec("x", "0.1.0", "http", schemas_package="no_such_package_here")
    schema_check.check_schema(spec, "http://127.0.0.1:9", {}, 1.0)


def test_an_unanswered_request_is_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    # The reset reports an unreachable server itself; the next client asks again.
    calls: list[str] = []

    def unanswered(url: str, headers: Any, timeout_s: float) -> Any:
        calls.append(url)
        return schema_check._UNANSWERED

    monkeypatch.setattr(schema_check, "_fetch", unanswered)
    spec = EnvSpec("echo_env", "0.1.0", "http", schemas_package="generated.echo_env")
    for _ in range(2):
        schema_check.check_schema(spec, "http://127.0.0.1:9", {}, 1.0)
    assert calls == ["http://127.0.0.1:9/schema"] * 2


def test_a_refused_connection_is_unanswered() -> None:
    assert schema_check._fetch("http://127.0.0.1:9/schema", {}, 2.0) is schema_check._UNANSWERED
