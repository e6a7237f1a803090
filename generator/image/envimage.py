"""The env image: the server's code on top of its dependency image, served by env.toml.

What goes in: env.toml's `[docker] include` (paths relative to the project root), or by
default the top-level package of the server module (`-m examples.echo_env.server` ->
`examples/`) and the env's generated package. The CMD runs `serve.py` with the `[server]
command`, so the image serves exactly what `from_local_process()` serves. The envgen_runtime
package (this host's copy) always goes in at the app's root: generated server modules import
`envgen_runtime.server`, and the runtime is not on any registry the build can reach.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from generator.errors import ManifestError
from generator.image.engine import FORMAT, build_context, current_key, digest
from generator.image.log import log
from generator.schema.loader import Layout
from generator.schema.manifest import Manifest

SERVE = Path(__file__).resolve().with_name("serve.py")
SERVE_IN_IMAGE = "/app/.envgen/serve.py"
_SKIP_DIRS = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".envgen-cache"}


def default_include(layout: Layout, manifest: Manifest) -> list[str]:
    """The server module's top-level package and the env's generated package."""
    paths: list[str] = []
    command = list(manifest.server_command)
    if "-m" in command[:-1]:
        top = command[command.index("-m") + 1].split(".", 1)[0]
        paths.append(top)
    generated = layout.generated.relative_to(layout.root)
    for candidate in (generated / "__init__.py", generated / manifest.name):
        if (layout.root / candidate).exists():
            paths.append(candidate.as_posix())
    return paths


def included_files(layout: Layout, manifest: Manifest, env_toml: str) -> list[Path]:
    """Every file to copy, sorted; a missing include path is an error naming its key."""
    entries = manifest.docker_include
    chosen = list(entries) if entries is not None else default_include(layout, manifest)
    if not chosen:
        raise ManifestError(
            "nothing to put in the image: the [server] command runs no `-m` module",
            file=env_toml,
            pointer="/docker/include",
            hint="list the project paths the server needs in [docker] include",
        )
    files: set[Path] = set()
    for index, entry in enumerate(chosen):
        path = layout.root / entry
        if not path.exists():
            raise ManifestError(
                f"{entry!r} does not exist under the project root",
                file=env_toml,
                pointer=f"/docker/include/{index}" if entries is not None else "/server/command",
            )
        files.update(_files_under(path))
    return sorted(files)


def runtime_files() -> list[tuple[Path, str]]:
    """The envgen_runtime package's files and their paths in the app folder, sorted."""
    import envgen_runtime

    package = Path(envgen_runtime.__file__).resolve().parent
    return sorted(
        (path, f"envgen_runtime/{path.relative_to(package).as_posix()}")
        for path in _files_under(package)
    )


def _files_under(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for child in path.rglob("*"):
        if child.is_file() and not _SKIP_DIRS.intersection(child.parts):
            yield child


def dockerfile(manifest: Manifest, deps_tag: str) -> str:
    """The env layer: files, defaults for serve.py, and an exec-form CMD (no shell)."""
    cmd = ["python", SERVE_IN_IMAGE, *manifest.server_command]
    lines = [
        f"FROM {deps_tag}",
        "WORKDIR /app",
        "COPY app/ /app/",
        f"ENV ENVGEN_PROTOCOL={manifest.transport} ENVGEN_HOST=0.0.0.0 "
        f"ENVGEN_PORT={manifest.docker_port} PYTHONUNBUFFERED=1",
        f"EXPOSE {manifest.docker_port}",
        f"LABEL envgen.env={json.dumps(manifest.name)} envgen.deps-image={json.dumps(deps_tag)}",
        f"CMD {json.dumps(cmd)}",
    ]
    return "\n".join(lines) + "\n"


def build_env_image(
    client: Any,
    layout: Layout,
    manifest: Manifest,
    env_toml: str,
    deps: tuple[str, str],
    force: bool,
) -> str:
    """Build (or find up to date) the image tagged env.toml's `[docker] image`."""
    tag = manifest.docker_image
    if tag is None:
        raise ManifestError("no [docker] image to tag", file=env_toml, pointer="/docker/image")
    deps_key, deps_tag = deps
    files = included_files(layout, manifest, env_toml)
    runtime = runtime_files()
    text = dockerfile(manifest, deps_tag)
    key = digest(
        FORMAT,
        "env",
        deps_key,
        text,
        SERVE.read_bytes(),
        *(f"{p.relative_to(layout.root)}\0".encode() + p.read_bytes() for p in files),
        *(f"{dest}\0".encode() + p.read_bytes() for p, dest in runtime),
    )
    if not force and current_key(client, tag) == key:
        log(f"{tag}: up to date")
        return tag
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="envgen-image-") as tmp:
        context = Path(tmp)
        for path in files:
            dest = context / "app" / path.relative_to(layout.root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
        for path, name in runtime:
            dest = context / "app" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
        (context / "app" / ".envgen").mkdir(parents=True, exist_ok=True)
        shutil.copy2(SERVE, context / "app" / ".envgen" / "serve.py")
        (context / "Dockerfile").write_text(text)
        build_context(client, context, tag, key)
    log(f"{tag}: built in {time.monotonic() - started:.1f} s ({len(files)} files)")
    return tag
