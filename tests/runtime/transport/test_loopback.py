"""Loopback-only WebSocket options: no proxy, no permessage-deflate (see bench_step.py)."""

from __future__ import annotations

import pytest
from envgen_runtime import AsyncWebSocketTransport, WebSocketTransport


@pytest.mark.parametrize("kind", [WebSocketTransport, AsyncWebSocketTransport])
def test_loopback_sessions_skip_proxy_and_compression(
    kind: type[WebSocketTransport] | type[AsyncWebSocketTransport],
) -> None:
    local = kind("http://127.0.0.1:8000")._connect_options({})
    assert local["compression"] is None and local["proxy"] is None
    remote = kind("https://env.example.com")._connect_options({})
    assert "compression" not in remote and "proxy" not in remote  # the library's defaults
