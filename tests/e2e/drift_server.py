# mypy: disallow-subclassing-any=False
"""echo_env's real server with its `GET /schema` changed on purpose, for the drift check.

    python -m tests.e2e.drift_server MODE --host H --port P --protocol websocket|http

MODE is what `/schema` publishes: `own` (what the generated server models say),
`committed` (generated/echo_env/schemas.json itself), `compatible` (an added optional
observation field), `breaking` (a required observation field removed), `breaking-action`
(the action's message narrowed to an enum), `none` (no `/schema` route: HTTP 404).
Episodes are echo_env's own. `GET /test/schema-requests` says how many requests `/schema`
has had, so tests can count them.
"""

from __future__ import annotations

import argparse
import copy
import json
from typing import Any

from envgen_runtime.server.apps import http_app, websocket_app

from examples._serve import environment_class
from examples.echo_env.logic import EchoLogic
from examples.echo_env.server import INFO
from generated.echo_env.server import EchoAction, EchoObservation, EchoState
from tests.helpers import REPO

MODES = ("own", "committed", "compatible", "breaking", "breaking-action", "none")


def published(mode: str) -> dict[str, Any] | None:
    """The `/schema` body of `mode` (None: no route)."""
    own = {
        "action": EchoAction.model_json_schema(),
        "observation": EchoObservation.model_json_schema(),
        "state": EchoState.model_json_schema(),
    }
    if mode == "own":
        return own
    if mode == "none":
        return None
    if mode == "committed":
        path = REPO / "generated" / "echo_env" / "schemas.json"
        body = json.loads(path.read_text(encoding="utf-8"))
        body.pop("schema_hash")
        return dict(body)
    body = copy.deepcopy(own)
    if mode == "compatible":
        body["observation"]["properties"]["mood"] = {"type": "string"}
    elif mode == "breaking":
        del body["observation"]["properties"]["message_length"]
        body["observation"]["required"].remove("message_length")
    elif mode == "breaking-action":
        body["action"]["properties"]["message"]["enum"] = ["hello"]
    return body


def app(mode: str, protocol: str) -> Any:
    environment = environment_class(INFO, EchoLogic, EchoObservation, EchoState)
    models = (environment, EchoAction, EchoObservation, EchoState)
    info: dict[str, Any] = {"name": INFO.name, "version": INFO.version}
    make = websocket_app if protocol == "websocket" else http_app
    served = make(*models, **info)
    served.router.routes[:] = [
        r for r in served.router.routes if getattr(r, "path", None) != "/schema"
    ]
    body = published(mode)
    if body is not None:
        served.get("/schema")(lambda: body)
    hits = {"schema": 0}

    @served.middleware("http")
    async def count(request: Any, call_next: Any) -> Any:
        if request.url.path == "/schema":
            hits["schema"] += 1
        return await call_next(request)

    served.get("/test/schema-requests")(lambda: hits["schema"])
    return served


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--protocol", choices=("websocket", "http"), default="websocket")
    args = parser.parse_args()
    uvicorn.run(app(args.mode, args.protocol), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
