"""Loopback-only WebSocket options: no proxy, no permessage-deflate (see bench_step.py)."""

from __future__ import annotations

import pytest
from envgen_runtime._websocket import WebSocketCommon


@pytest.mark.parametrize("asynchronous", [False, True])
def test_loopback_sessions_skip_proxy_and_compression(asynchronous: bool) -> None:
    local = WebSocketCommon("http://127.0.0.1:8000")._connect_options({}, asynchronous=asynchronous)
    assert local["compression"] is None and local["proxy"] is None
    remote = WebSocketCommon("https://env.example.com")._connect_options(
        {}, asynchronous=asynchronous
    )
    assert "compression" not in remote and "proxy" not in remote  # the library's defaults
