"""The compatibility rule between generated code and the runtime, and the import-time check."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from envgen_runtime import API_VERSION, __version__, check_generated
from envgen_runtime.compat import compatible_range, is_compatible

from tests.helpers import REPO


@pytest.mark.parametrize(
    ("api", "runtime", "ok"),
    [
        ("0.2", "0.2.0", True),
        ("0.2", "0.2.9", True),
        ("0.2", "0.3.0", False),  # 0.x: every minor may break
        ("0.2", "0.1.9", False),  # older runtime never serves newer code
        ("0.2", "1.0.0", False),
        ("1.2", "1.2.0", True),
        ("1.2", "1.9.3", True),  # newer minor serves older code
        ("1.2", "1.1.0", False),
        ("1.2", "2.0.0", False),
        ("0.10", "0.10.3", True),
    ],
)
def test_compatibility_rule(api: str, runtime: str, ok: bool) -> None:
    assert is_compatible(api, runtime) is ok


@pytest.mark.parametrize(
    ("api", "spec"), [("0.2", ">=0.2,<0.3"), ("0.10", ">=0.10,<0.11"), ("1.4", ">=1.4,<2")]
)
def test_compatible_range_is_a_pip_specifier_of_the_rule(api: str, spec: str) -> None:
    assert compatible_range(api) == spec


def test_api_version_is_major_minor_of_the_distribution() -> None:
    assert __version__.startswith(API_VERSION + ".")
    check_generated("anything", API_VERSION)  # the runtime serves its own API


def test_check_names_both_versions_and_the_fix() -> None:
    newer = f"{API_VERSION.split('.')[0]}.{int(API_VERSION.split('.')[1]) + 1}"
    with pytest.raises(ImportError) as caught:
        check_generated("echo_env", newer)
    message = str(caught.value)
    assert f"generated for envgen-runtime {newer}" in message
    assert f"envgen-runtime {__version__} is installed" in message
    assert f"pip install 'envgen-runtime{compatible_range(newer)}'" in message


def test_a_generated_package_refuses_an_unfit_runtime_at_import(tmp_path: Path) -> None:
    package = tmp_path / "future_env"
    shutil.copytree(REPO / "generated" / "echo_env", package)
    runtime_module = package / "_runtime.py"
    text = runtime_module.read_text()
    assert f'RUNTIME_API = "{API_VERSION}"' in text
    runtime_module.write_text(text.replace(f'RUNTIME_API = "{API_VERSION}"', 'RUNTIME_API = "9.0"'))
    proc = subprocess.run(
        [sys.executable, "-c", "import future_env"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: echo_env was generated for envgen-runtime 9.0")
    assert f"but envgen-runtime {__version__} is installed" in last
    assert "pip install 'envgen-runtime>=9.0,<10'" in last
