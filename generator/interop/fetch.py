"""HTTP requests to a live server for `envgen pull` (and verify's drift check): JSON in and
out, every failure a `PullError` naming the URL."""

from __future__ import annotations

from typing import Any

from generator.errors import EnvgenError

TIMEOUT_S = 10.0


class PullError(EnvgenError):
    """The server could not be read: unreachable, no /schema, or not JSON."""


def fetch_json(base_url: str, path: str, *, optional: bool = False) -> Any:
    """GET base_url+path as JSON; every failure is a PullError naming the URL."""
    return request_json("GET", base_url, path, optional=optional)


def request_json(
    method: str, base_url: str, path: str, *, body: Any = None, optional: bool = False
) -> Any:
    """`method` base_url+path (with a JSON `body`) as JSON; every failure is a PullError
    naming the URL. With `optional`, a route the server lacks (HTTP 404 or 405) is None."""
    import requests  # only pull needs an HTTP client

    url = base_url.rstrip("/") + path
    try:
        reply = requests.request(
            method,
            url,
            json=body,
            timeout=TIMEOUT_S,
            headers={"Accept": "application/json"},
        )
    except requests.exceptions.ConnectionError:
        raise PullError(
            f"cannot reach {url}", hint="is the server running, and is the URL right?"
        ) from None
    except requests.exceptions.Timeout:
        raise PullError(f"{url} did not answer within {TIMEOUT_S:.0f} s") from None
    except requests.exceptions.RequestException as exc:
        raise PullError(f"{method} {url} failed: {exc}") from None
    if reply.status_code in (404, 405) and optional:
        return None
    if reply.status_code == 404:
        raise PullError(
            f"{url} does not exist (HTTP 404)",
            hint="servers of OpenEnv 0.4 or later serve /schema; for older ones use "
            "`envgen import` with the server's pydantic models",
        )
    if reply.status_code >= 400:
        raise PullError(f"{method} {url} answered HTTP {reply.status_code}: {reply.text[:300]}")
    try:
        return reply.json()
    except ValueError:
        raise PullError(f"{method} {url} did not return JSON: {reply.text[:300]!r}") from None
