"""What a trainer in another repository does: install a generated client from wheels, play.

The runtime's wheel and one generated env's wheel go into a fresh venv that has neither the
generator nor its toolchain (the session's ``trainer_venv``); the client is imported outside
the checkout and plays an episode against a real server. The venv is measured against
pydantic + websockets alone.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.trainer_venv import TrainerVenv, clean_env, fresh_venv, pip

pytestmark = pytest.mark.e2e

GENERATOR_TOOLS = ("generator", "jinja2", "datamodel_code_generator", "ruff", "click")
SIZE_RATIO_LIMIT = 1.5

_EPISODE = """
import importlib, importlib.resources, importlib.util, json, pkgutil, sys
from envgen_clients.echo_env import EchoAction, EchoEnv, RUNTIME_API
import envgen_runtime
from envgen_runtime.client import schema_check

for module in pkgutil.iter_modules(envgen_runtime.__path__, "envgen_runtime."):
    try:
        importlib.import_module(module.name)  # every module, lazy paths included
    except envgen_runtime.MissingExtraError as exc:  # serving, gymnasium: their extras
        optional = {("envgen_runtime.server", "server"), ("envgen_runtime.vector", "gym")}
        assert (module.name, exc.extra) in optional, exc

with EchoEnv(sys.argv[1]) as env:
    first = env.reset(seed=7)
    step = env.step(EchoAction(message="installed"))
    state = env.state()
print(json.dumps({
    "client_file": sys.modules["envgen_clients.echo_env"].__file__,
    "runtime_api": RUNTIME_API,
    "done": first.done,
    "echoed": step.observation.echoed_message,
    "step_count": state.step_count,
    # The wheel ships schemas.json; the drift check at connect read it and asked the server once.
    "schemas_json": importlib.resources.files("envgen_clients.echo_env")
    .joinpath("schemas.json")
    .is_file(),
    "schemas_checked": [url for url, _ in schema_check._VERDICTS],
    "importable": {
        name: importlib.util.find_spec(name) is not None for name in sys.argv[2].split(",")
    },
}))
"""


def _site_size(python: Path) -> tuple[int, list[str]]:
    """Bytes under the venv's site-packages and the distributions installed there."""
    code = (
        "import importlib.metadata as m, json, site; "
        "print(json.dumps([site.getsitepackages()[0], "
        "sorted(d.metadata['Name'].lower() for d in m.distributions())]))"
    )
    out = subprocess.run(
        [python, "-c", code],
        cwd=python.parents[1],  # not the checkout: its egg-info would be listed
        env=clean_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    site, names = json.loads(out.stdout)
    size = sum(p.stat().st_size for p in Path(site).rglob("*") if p.is_file())
    return size, names


def test_trainer_installs_a_generated_client_from_wheels_and_plays(
    servers: dict[tuple[str, str], str], trainer_venv: TrainerVenv, tmp_path: Path
) -> None:
    python = trainer_venv.python
    played = subprocess.run(
        [python, "-c", _EPISODE, servers[("echo_env", "websocket")], ",".join(GENERATOR_TOOLS)],
        cwd=trainer_venv.outside,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    result = json.loads(played.stdout)
    assert Path(result["client_file"]).is_relative_to(trainer_venv.root)
    assert result["runtime_api"] == "0.2"
    assert result["done"] is False
    assert result["echoed"] == "installed"
    assert result["step_count"] == 1
    assert result["schemas_json"] is True
    assert result["schemas_checked"] == [servers[("echo_env", "websocket")] + "/schema"]
    assert result["importable"] == dict.fromkeys(GENERATOR_TOOLS, False)

    size, names = _site_size(python)
    assert "envgen" not in names
    assert {"envgen-runtime", "echo-env-client", "pydantic", "websockets"} <= set(names)

    baseline = fresh_venv(tmp_path / "baseline")
    pip(baseline, "install", "-q", "pydantic>=2.12,<3", "websockets>=13,<18")
    base_size, base_names = _site_size(baseline)
    ratio = size / base_size
    print(
        f"\ntrainer venv: {size / 1e6:.1f} MB, {len(names)} distributions {names}"
        f"\npydantic + websockets alone: {base_size / 1e6:.1f} MB, {len(base_names)} {base_names}"
        f"\nratio {ratio:.2f}"
    )
    assert ratio <= SIZE_RATIO_LIMIT, (size, base_size)
