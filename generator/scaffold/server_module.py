"""The server module `envgen new` writes: a small working env on the generated server models.

Only the env name and the class prefix (both checked identifiers) and the env's description
(as a JSON string literal, also a Python one) reach the text: nothing typed on the command
line can become code. The version is not written in: the module passes the generated
client's `SPEC.version` (env.toml's), so a version bump reaches `/metadata` by `envgen generate`.
"""

from __future__ import annotations

import json
import string

MAX_TURNS = 5

_SERVER = string.Template(
    '''"""The $name server: edit the episode logic; the models are generated from the schemas.

`envgen generate $name` writes generated/$name/server.py ($prefix{Action,Observation,State})
from schemas/$name/; run it again after editing them. env.toml's [server] command runs this
module (`python -m $module --port 8000 --protocol websocket|http`), which is what
`${prefix}Env.from_local_process()` starts; add `--backend lean` to serve on envgen's own
app, without openenv.

Reset parameters: describe them in schemas/$name/reset.schema.json, run `envgen generate
$name`, and pass `reset_cls=${prefix}ResetParams` (from generated.$name.server) to `main`;
they are then validated and reach `reset()` as keyword arguments.
"""

from __future__ import annotations

import uuid
from typing import Any

from envgen_runtime.server import Environment, main

from generated.$name import ${prefix}Env
from generated.$name.server import ${prefix}Action, ${prefix}Observation, ${prefix}State

MAX_TURNS = $max_turns


class ${prefix}Environment(Environment):
    """Answers each message; the reward is the message's length; ends after MAX_TURNS steps."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # one instance per WebSocket session

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
    main(
        ${prefix}Environment,
        ${prefix}Action,
        ${prefix}Observation,
        ${prefix}State,
        name=$name_literal,
        description=$description_literal,
        version=${prefix}Env.SPEC.version,  # env.toml's version, through `envgen generate`
    )
'''
)


def server_module(name: str, prefix: str, module: str, description: str) -> str:
    """The text of the scaffolded server module for env `name`."""
    return _SERVER.substitute(
        name=name,
        prefix=prefix,
        module=module,
        max_turns=MAX_TURNS,
        name_literal=json.dumps(name),  # a valid Python string literal, double-quoted
        description_literal=json.dumps(description),
    )
