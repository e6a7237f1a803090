"""The wheel carries what an installed envgen needs: templates, py.typed, every subpackage.

Built from this checkout and installed into a scratch folder, then used from outside the
checkout, as `pip install .` in a CI job would (docs/ci/envgen.yml).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.helpers import REPO

_MAIN = "import sys; from generator.cli import main; sys.argv[0] = 'envgen'; main()"


def test_installed_wheel_generates_and_checks_outside_the_checkout(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("envgen-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = sorted(p.name for p in (REPO / "templates").glob("*.jinja"))
    assert {f"generator/templates/{name}" for name in templates} <= names
    assert {"generator/py.typed", "generator/runtime/py.typed"} <= names
    assert "generator/diff/formats/text.py" in names

    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), wheel],
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
        [sys.executable, "-c", "import generator.render as r; print(r.TEMPLATES_DIR)"],
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
