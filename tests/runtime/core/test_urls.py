"""core.urls: the one reading of a server address (clients and `envgen pull` share it)."""

from __future__ import annotations

import pytest
from envgen_runtime import normalize_base_url


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("127.0.0.1:9", "http://127.0.0.1:9"),
        ("  localhost:8000/ ", "http://localhost:8000"),
        ("https://example.org/env/", "https://example.org/env"),
        ("ws://127.0.0.1:9/ws", "ws://127.0.0.1:9/ws"),
        ("http://[::1]:8000", "http://[::1]:8000"),
    ],
)
def test_addresses_are_normalised(text: str, url: str) -> None:
    assert normalize_base_url(text) == url


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("ftp://h:1", "must start with http:// or https:// or ws:// or wss://"),
        ("http://", "no host"),
        ("h:notaport", "invalid port"),
        ("http://h:1/?token=secret", "query"),
        ("http://h:1/#top", "fragment"),
        ("http://h :1", "space"),
    ],
)
def test_bad_addresses_are_refused_naming_them(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words) as info:
        normalize_base_url(text)
    assert "secret" not in str(info.value)


def test_schemes_can_be_narrowed() -> None:
    with pytest.raises(ValueError, match=r"must start with http:// or https:// \(or be a bare"):
        normalize_base_url("ws://h:1", schemes=("http", "https"))
