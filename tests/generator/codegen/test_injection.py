"""Schema text cannot change what generated code does: the `evil` golden env tries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.golden.regenerate import CASES
from tests.helpers import REPO

CASE = CASES / "tricky"
MARKER = Path("/tmp/envgen-pwned")

PROBE = r"""
import json, sys
from generated.evil import EvilAction, EvilEnv, EvilObservation
from generated.evil.client import _ACTION, _OBSERVATION, _reset_params

action = EvilAction.model_validate({"class": "c", "my-field": 3, "import": "\\"})
wire = _ACTION.encode(action)
obs = _OBSERVATION.decode({"x\"y": "v", "from": "f", "time-left": 1.5, "surprise": [1]})
print(json.dumps({
    "action_doc": EvilAction.__doc__,
    "client_doc": EvilEnv.__doc__,
    "wire": wire,
    "attrs": [obs.x_y, obs.from_, obs.time_left],
    "extra": obs.model_extra,
    "default": EvilObservation().x_y,
    "command": list(EvilEnv.SPEC.server_command),
    "reset_doc": EvilEnv.reset.__doc__,
    "reset_wire": _reset_params({
        "level": 1,
        "mode": "c'd",
        "note": json.load(open("schemas/evil/reset.schema.json"))["properties"]["note"]["default"],
        "tags": None,
    }),
}))
"""


def test_generated_code_runs_nothing_and_keeps_text_verbatim() -> None:
    MARKER.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CASE), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=CASE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert not MARKER.exists(), "schema text was executed"
    out = json.loads(proc.stdout)
    schema = json.loads((CASE / "schemas/evil/action.schema.json").read_text())
    assert out["action_doc"].strip() == schema["description"]
    assert "__import__('os').system('touch /tmp/envgen-pwned')" in out["client_doc"]
    assert out["wire"] == {"class": "c", "my-field": 3, "import": "\\"}
    assert out["attrs"] == ["v", "f", 1.5]
    assert out["extra"] == {"surprise": [1]}
    assert out["default"] == '"""; import os; os.system(\'touch /tmp/envgen-pwned\')#'
    assert out["command"] == ["{python}", "-c", 'print(\'"""\')']
    reset = json.loads((CASE / "schemas/evil/reset.schema.json").read_text())
    assert reset["properties"]["level"]["description"] in out["reset_doc"]
    assert out["reset_wire"] == {"level": 1, "mode": "c'd"}  # the note was its default


def test_no_schema_text_outside_literals() -> None:
    """Every line of generated code that mentions the payload is inside a string literal."""
    import ast
    import io
    import tokenize

    for path in (CASE / "generated/evil").glob("*.py"):
        source = path.read_text()
        ast.parse(source)
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if "system" in token.string:
                assert token.type in (tokenize.STRING, tokenize.COMMENT) or (
                    token.type == tokenize.FSTRING_MIDDLE
                ), f"{path.name}: {token}"
