"""The example images: built without a registry, cached, and the Dockerfiles' layout works."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from generated.echo_env import EchoAction, EchoEnv
from tests.helpers import REPO

from .conftest import ENVGEN_IMAGE, record

pytestmark = pytest.mark.docker


def test_second_build_reuses_every_layer(example_images: dict[str, str]) -> None:
    started = time.monotonic()
    proc = subprocess.run(ENVGEN_IMAGE, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    record("image build, warm (every layer cached)", elapsed)
    assert proc.returncode == 0, proc.stderr
    up_to_date = [line for line in proc.stderr.splitlines() if line.endswith(": up to date")]
    assert len(up_to_date) == 2 + len(example_images), proc.stderr
    assert elapsed < 20, f"a warm build took {elapsed:.1f} s"


def test_images_carry_their_build_key_and_need_no_shell(
    example_images: dict[str, str], docker_engine: Any
) -> None:
    for image_name in example_images.values():
        image = docker_engine.images.get(image_name)
        assert image.labels.get("envgen.build-key"), image_name
        cmd = image.attrs["Config"]["Cmd"]
        assert cmd[:2] == ["python", "/app/.envgen/serve.py"] and cmd[2] == "{python}"
    output = docker_engine.containers.run(
        "envgen/echo-env:0.1.0",
        [
            "python",
            "-c",
            "import os, ssl, sqlite3, uvicorn, openenv; print(os.path.exists('/bin/sh'))",
        ],
        remove=True,
    )
    assert output.strip() == b"False"


def test_registry_dockerfile_layout_serves_an_episode(
    example_images: dict[str, str], docker_engine: Any, tmp_path: Path, session_containers: Any
) -> None:
    """examples/echo_env/Dockerfile with its base swapped for the local deps image.

    Only the pip line needs a registry; everything else (the copied files, the environment
    variables, the entry point) is built and served for real.
    """
    dockerfile = (REPO / "examples" / "echo_env" / "Dockerfile").read_text()
    deps = docker_engine.images.get(example_images["echo_env"]).labels["envgen.deps-image"]
    local = dockerfile.replace("FROM python:3.11-slim", f"FROM {deps}")
    local = "\n".join(line for line in local.splitlines() if not line.startswith("RUN pip"))
    assert local.count("FROM ") == 1 and "RUN " not in local
    for folder in ("examples", "generated/echo_env", "runtime/envgen_runtime"):
        shutil.copytree(
            REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy2(REPO / "generated/__init__.py", tmp_path / "generated/__init__.py")
    (tmp_path / "generator" / "image").mkdir(parents=True)
    shutil.copy2(REPO / "generator/image/serve.py", tmp_path / "generator/image/serve.py")
    (tmp_path / "Dockerfile").write_text(local + "\n")
    tag = "envgen/echo-env:dockerfile-test"
    docker_engine.images.build(path=str(tmp_path), tag=tag, rm=True, forcerm=True)
    try:
        with EchoEnv.from_docker_image(tag, transport="http") as env:
            env.reset()
            assert env.step(EchoAction(message="built")).observation.echoed_message == "built"
        assert session_containers() == []
    finally:
        docker_engine.images.remove(tag, force=True)
