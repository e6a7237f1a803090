"""Every envgen command pays the CLI's start-up: the heavy libraries load only when used."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import REPO

# Each is needed by one command only: verify (hypothesis), image and containers (docker),
# generate (datamodel-code-generator, loaded when models are made).
LAZY = ("hypothesis", "docker", "datamodel_code_generator", "ray", "openenv")


def test_importing_the_cli_loads_no_command_specific_library() -> None:
    code = "import json, sys; import generator.cli; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert not [m for m in LAZY if m in loaded]
