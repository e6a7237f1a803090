"""The wheel carries what an installed envgen needs: templates, py.typed, every subpackage.

Built from this checkout and installed into a scratch folder, then used from outside the
checkout, as `pip install .` in a CI job would (docs/ci/envgen.yml).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.helpers import REPO

_MAIN = "import sys; from generator.cli import main; sys.argv[0] = 'envgen'; main()"


def test_installed_wheel_generates_and_checks_outside_the_checkout(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    for source in (REPO, REPO / "runtime"):
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), source],
            check=True,
            capture_output=True,
            timeout=300,
        )
    (wheel,) = wheels.glob("envgen-*.whl")
    (runtime_wheel,) = wheels.glob("envgen_runtime-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(p.name for p in (REPO / "templates").glob("*.jinja"))
    assert {f"generator/templates/{name}" for name in templates} <= names
    assert "generator/py.typed" in names
    assert "generator/diff/formats/text.py" in names
    subpackages = {
        p.parent.relative_to(REPO).as_posix() for p in REPO.glob("generator/**/__init__.py")
    }
    assert {f"{package}/__init__.py" for package in subpackages} <= names  # none forgotten
    assert "generator/image/serve.py" in names
    assert not [n for n in names if n.startswith("envgen_runtime/")]  # its own distribution
    runtime_names = set(zipfile.ZipFile(runtime_wheel).namelist())
    assert {"envgen_runtime/py.typed", "envgen_runtime/__init__.py"} <= runtime_names
    assert not [n for n in runtime_names if n.startswith(("generator/", "templates/"))]

    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            *wheels.glob("*.whl"),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}

    def envgen(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _MAIN, "--root", str(project), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    where = subprocess.run(
        [sys.executable, "-c", "import generator.codegen.render as r; print(r.TEMPLATES_DIR)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where) == site / "generator" / "templates"
    for args in (("new", "foo_env"), ("generate",), ("check",)):
        result = envgen(*args)
        assert result.returncode == 0, f"envgen {' '.join(args)}:\n{result.stdout}{result.stderr}"
    assert (project / "generated/foo_env/client.py").is_file()


def test_generator_depends_on_the_runtime_at_its_own_version() -> None:
    import envgen_runtime

    import generator

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime_project = tomllib.loads((REPO / "runtime" / "pyproject.toml").read_text())["project"]
    assert generator.__version__ == envgen_runtime.__version__
    assert f"envgen-runtime[docker]=={envgen_runtime.__version__}" in project["dependencies"]
    assert ".".join(envgen_runtime.__version__.split(".")[:2]) == envgen_runtime.API_VERSION
    for meta in (project, runtime_project):
        assert meta["requires-python"] == ">=3.11"  # no upper cap
    # The runtime's required dependencies are what every client needs; the rest are extras.
    # jsonschema: the drift check at connect judges witnesses with it (imported lazily).
    required = {
        dep.split(">")[0].split("=")[0].split("<")[0] for dep in runtime_project["dependencies"]
    }
    assert required == {"pydantic", "websockets", "typing-extensions", "jsonschema"}
    extras = {"docker", "async", "gym", "ray", "server", "openenv", "mcp"}
    assert set(runtime_project["optional-dependencies"]) == extras


def _pulled(requirements: list[str], extras: frozenset[str] = frozenset()) -> set[str]:
    """Every distribution `requirements` (for `extras`) install, transitively, read from the
    metadata of the distributions installed here (the tests' environment holds them all)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pulled: set[str] = set()
    todo = [(line, extras) for line in requirements]
    while todo:
        line, wanted = todo.pop()
        req = Requirement(line)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in wanted or {""}):
            continue
        name = canonicalize_name(req.name)
        if name in pulled:
            continue
        pulled.add(name)
        try:
            lines = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [(dep, frozenset(req.extras)) for dep in lines]
    return pulled


def _runtime_install(extra: str | None) -> set[str]:
    """What `pip install envgen-runtime[extra]` installs besides the runtime itself."""
    project = tomllib.loads((REPO / "runtime" / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    if extra is not None:
        lines += project["optional-dependencies"][extra]
    return _pulled(lines)


def test_the_server_extra_installs_the_lean_backend_and_no_openenv() -> None:
    server = _runtime_install("server")
    assert {"starlette", "uvicorn", "uvloop", "websockets", "pydantic"} <= server
    assert not server & {"openenv", "openenv-core", "gradio", "fastapi"}, server
    openenv = _runtime_install("openenv")  # the same reading does see openenv where it is
    assert {"openenv", "gradio", "fastapi", "starlette", "uvicorn"} <= openenv


def test_the_lean_image_installs_the_runtime_and_its_server_extra_without_openenv() -> None:
    from generator.schema.manifest import DOCKER_REQUIREMENTS

    project = tomllib.loads((REPO / "runtime" / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["server"]]
    names = {line.split(">")[0].split("=")[0].split("<")[0] for line in declared}
    # jsonschema: clients' drift check only; a server never imports it
    assert set(DOCKER_REQUIREMENTS["lean"]) == names - {"jsonschema"}
    assert not _pulled(list(DOCKER_REQUIREMENTS["lean"])) & {"openenv", "gradio"}
    assert "openenv" in _pulled(list(DOCKER_REQUIREMENTS["openenv"]))


def test_the_test_extra_installs_both_server_backends() -> None:
    test = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pulled = _pulled(test["optional-dependencies"]["test"])
    assert {"envgen-runtime", "openenv", "starlette", "uvicorn", "fastapi"} <= pulled
