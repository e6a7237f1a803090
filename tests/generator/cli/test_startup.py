"""Every envgen command pays the CLI's start-up: the heavy libraries load only when used."""

from __future__ import annotations

import atexit
import gc
import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator import entry
from generator.cli import main
from tests.helpers import REPO, write_env

# Each is needed by one command only: verify (hypothesis), image and containers (docker),
# generate (datamodel-code-generator, loaded when models are made).
LAZY = ("hypothesis", "docker", "datamodel_code_generator", "ray", "openenv")
# The modules of the other commands, and what only they need: `generate` and `check` never
# load them (adopt pulls in the diff engine; pull/import the interop checks).
OTHER_COMMANDS = (
    "generator.interop",
    "generator.diff",
    "generator.verify",
    "generator.image",
    "generator.scaffold",
    "generator.schema.listing",
    "generator.cli.adopt",
    "generator.cli.containers",
    "generator.cli.diff",
    "generator.cli.image",
    "generator.cli.listing",
    "generator.cli.new",
    "generator.cli.verify",
)
# What rendering needs: a `check` or `generate` the cache answers needs none of it.
RENDERING = (
    "jinja2",
    "datamodel_code_generator",
    "ruff",
    "jsonschema",
    "envgen_runtime",
    "generator.codegen.render",
    "generator.codegen.models",
    "generator.codegen.server_models",
    "generator.codegen.datamodel",
    "generator.codegen.formatting",
    "generator.schema.bundle",
)

# Runs the CLI with CliRunner in a fresh interpreter, then prints what it imported.
_RUN = """
import json, sys
from click.testing import CliRunner
from generator.cli import main
result = CliRunner().invoke(main, sys.argv[1:])
report = {"code": result.exit_code, "output": result.output, "modules": sorted(sys.modules)}
print(json.dumps(report))
"""


def _loaded(*args: str) -> set[str]:
    """Top-level names and dotted module names loaded by `envgen ARGS` in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", _RUN, *args], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    report = json.loads(out)
    assert report["code"] == 0, report["output"]
    return set(report["modules"])


def _any_of(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in loaded or any(m.startswith(n + ".") for m in loaded))


def test_importing_the_cli_loads_no_command_specific_library() -> None:
    code = "import json, sys; import generator.cli; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert _any_of(loaded, LAZY + OTHER_COMMANDS + RENDERING) == []
    assert _any_of(loaded, ("generator.cli.generate",)) == []  # every command is lazy


def test_a_check_the_cache_answers_loads_no_renderer(tmp_path: Path) -> None:
    write_env(tmp_path, "foo")
    assert CliRunner().invoke(main, ["--root", str(tmp_path), "generate"]).exit_code == 0
    for command in ("check", "generate"):
        loaded = _loaded("--root", str(tmp_path), command)
        assert _any_of(loaded, LAZY + OTHER_COMMANDS + RENDERING) == [], command


def test_generate_loads_no_other_command(tmp_path: Path) -> None:
    write_env(tmp_path, "foo")
    loaded = _loaded("--root", str(tmp_path), "generate")
    assert "generator.codegen.render" in loaded  # it did render
    assert _any_of(loaded, (*OTHER_COMMANDS, "hypothesis", "docker", "ray", "openenv")) == []


def test_every_lazy_command_is_listed_and_loads() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0, result.output
    for name in ("containers", "diff", "image", "verify"):
        assert f"  {name} " in result.output
        assert CliRunner().invoke(main, [name, "--help"]).exit_code == 0, name


def test_the_envgen_program_is_main_with_its_objects_frozen_out_of_the_exit_collection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "envgen"]
    assert script.value == "generator.entry:run"
    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(sys, "argv", ["envgen", "--version"])
    with pytest.raises(SystemExit) as stopped:
        entry.run()
    assert stopped.value.code == 0
    assert registered == [gc.freeze]


def test_the_program_forks_its_warm_worker_before_loading_any_library() -> None:
    # generate/check fork the warm worker first thing (generator.codegen.warm_worker): whatever the
    # entry module loads delays that fork, so it loads only small standard modules.
    code = (
        "import json, sys; before = set(sys.modules); import generator.entry;"
        " print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert {"generator.entry", "generator.codegen.warm_worker"} <= loaded
    heavy = (
        "click",
        "multiprocessing",
        "pathlib",
        "json",
        "generator.cli",
        "generator.schema.loader",
    )
    assert _any_of(loaded, heavy) == []
