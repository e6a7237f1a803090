"""The server module `envgen new` writes: a small working env on the generated server models.

Only the env name and the class prefix (both checked identifiers) reach the text: nothing
typed on the command line can become code. The module serves through the generated
`generated/<env>/server.py`'s `main`, which carries env.toml's name, description, version and
`[server] backend`, so an edit to env.toml reaches the server (`/metadata`, the backend) by
`envgen generate` alone.
"""

from __future__ import annotations

import string

MAX_TURNS = 5

_SERVER = string.Template(
    '''"""The $name server: edit the episode logic; the models are generated from the schemas.

`envgen generate $name` writes generated/$name/server.py ($prefix{Action,Observation,State}
and `main`) from schemas/$name/; run it again after editing them. env.toml's [server] command
runs this module (`python -m $module --port 8000 --protocol websocket|http`), which is what
`${prefix}Env.from_local_process()` starts. It serves on env.toml's `[server] backend`:
"lean", envgen's own app (no openenv, ready in a fraction of a second), or "openenv",
openenv 0.10's app (its web interface; needs `pip install 'envgen-runtime[openenv]'`);
`--backend` on the command line overrides it.

Reset parameters: describe them in schemas/$name/reset.schema.json and run `envgen generate
$name`; `main` then validates them, and they reach `reset()` as keyword arguments.
"""

from __future__ import annotations

import uuid
from typing import Any

from envgen_runtime.server import Environment

from generated.$name.server import ${prefix}Action, ${prefix}Observation, ${prefix}State, main

MAX_TURNS = $max_turns


class ${prefix}Environment(Environment):
    """Answers each message; the reward is the message's length; ends after MAX_TURNS steps."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # one instance per WebSocket session
    RUNS_ON_EVENT_LOOP = False  # True if steps never block (no I/O, sleeps): no thread hop

    def __init__(self) -> None:
        super().__init__()
        self._state = ${prefix}State()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> ${prefix}Observation:
        self._state = ${prefix}State(episode_id=episode_id or uuid.uuid4().hex, step_count=0)
        return ${prefix}Observation(reply="ready", turn=0)

    def step(
        self, action: ${prefix}Action, timeout_s: float | None = None, **kwargs: Any
    ) -> ${prefix}Observation:
        self._state.step_count += 1
        turn = self._state.step_count
        return ${prefix}Observation(
            reply=f"you said: {action.message}",
            turn=turn,
            reward=float(len(action.message)),
            done=turn >= MAX_TURNS,
        )

    @property
    def state(self) -> ${prefix}State:
        return self._state


if __name__ == "__main__":
    main(${prefix}Environment)  # env.toml's name, version and backend, via `envgen generate`
'''
)


def server_module(name: str, prefix: str, module: str) -> str:
    """The text of the scaffolded server module for env `name`."""
    return _SERVER.substitute(name=name, prefix=prefix, module=module, max_turns=MAX_TURNS)
