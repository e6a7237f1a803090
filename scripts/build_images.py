#!/usr/bin/env python3
"""Build a Docker image for each example env server, on a machine that reaches no registry.

Nothing is pulled. Three kinds of image, each rebuilt only when its inputs changed (their
hash is the image label ``envgen.build-key``), so a second run takes about a second:

1. ``envgen/python-base:3.11``: this host's CPython as a tar, ``docker import``-ed: the
   interpreter, its standard library and every shared library ``ldd`` reports for it and
   its extension modules, at the same paths as on the host. No pip, no shell.
2. ``envgen/example-deps:3.11``: the base's files plus the servers' dependencies (openenv
   0.10.0, openenv-core 0.1.1, uvicorn), installed on the host with ``pip install --target``
   at the versions of the running environment, and the shared libraries their extension
   modules need; ``PYTHONPATH`` points at them. Also ``docker import``-ed (one import is
   several times faster than a build with a 470 MB context); the installed folder is cached
   between runs.
3. One image per env, tagged with ``schemas/<env>/env.toml``'s ``[docker] image``: FROM the
   deps image, the ``examples`` package and ``serve_env.py`` as the entry point. The
   protocol defaults to env.toml's ``transport``; override it at run time with
   ``-e ENVGEN_PROTOCOL=http`` (or ``websocket``).

Usage (``make images`` runs the first form after making sure an engine answers)::

    python scripts/build_images.py            # every example env
    python scripts/build_images.py echo_env    # only some
    python scripts/build_images.py --force     # rebuild every layer
    python scripts/build_images.py --list      # env -> image tag, build nothing

Needs an engine (``scripts/ensure-docker.sh`` installs and starts one), ``ldd``, and the
packages above reachable by pip (an index, ``--find-links`` or pip's cache). Users who can
reach a registry can use ``examples/<env>/Dockerfile`` instead.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BASE_TAG = "envgen/python-base:3.11"
DEPS_TAG = "envgen/example-deps:3.11"
KEY_LABEL = "envgen.build-key"
FORMAT = "3"  # bump to invalidate every cached layer when this script's output changes
REQUIREMENTS = ("openenv==0.10.0", "openenv-core==0.1.1", "uvicorn>=0.30")
DEPS_DIR_IN_IMAGE = "/opt/envgen/site-packages"
# Parts of the standard library a server never needs: tests, GUI, build files, bundled pip.
STDLIB_SKIP = frozenset(
    {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "site-packages", "dist-packages"}
)
STDLIB_SKIP_PREFIXES = ("config-",)
DYNLOAD_SKIP = re.compile(r"^_tkinter\.")
PASSWD = (
    "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
)
GROUP = "root:x:0:\nnogroup:x:65534:\n"

_INFO_CODE = """
import json, os, sys, sysconfig
print(json.dumps({
    "executable": os.path.realpath(sys.executable),
    "version": sys.version,
    "version_info": list(sys.version_info[:2]),
    "stdlib": sysconfig.get_paths()["stdlib"],
    "dynload": sysconfig.get_config_var("DESTSHARED") or "",
    "libdir": sysconfig.get_config_var("LIBDIR") or "",
    "ldlibrary": sysconfig.get_config_var("INSTSONAME") or "",
}))
"""


class BuildError(Exception):
    """A build step failed; the message says which and why."""


def log(message: str) -> None:
    """Progress on stderr, so stdout stays parseable (``--list``)."""
    print(f"build_images: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class ExampleEnv:
    """One example env: its name, image tag, container port and default protocol (env.toml)."""

    name: str
    image: str
    port: int
    transport: str = "websocket"


def discover_envs(repo: Path = REPO) -> list[ExampleEnv]:
    """Every env with both ``schemas/<env>/env.toml`` ``[docker] image`` and a server module."""
    found = []
    for manifest in sorted((repo / "schemas").glob("*/env.toml")):
        name = manifest.parent.name
        data = tomllib.loads(manifest.read_text())
        docker = data.get("docker", {})
        image = docker.get("image")
        if image and (repo / "examples" / name / "server.py").is_file():
            port = int(docker.get("port", 8000))
            found.append(
                ExampleEnv(name, str(image), port, str(data.get("transport", "websocket")))
            )
    return found


def digest(*parts: str | bytes) -> str:
    """Hash of the inputs of a layer, used as its cache key."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()[:32]


# --------------------------------------------------------------------------- the engine


def engine() -> Any:
    """A docker-py client, or BuildError saying how to get an engine."""
    try:
        import docker
    except ImportError as exc:
        raise BuildError(
            "the docker SDK is missing: pip install 'docker>=7' (or make setup)"
        ) from exc
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:
        raise BuildError(
            f"no Docker engine answers ({exc}). Start one with scripts/ensure-docker.sh "
            "(installs docker.io and starts dockerd as root), or set DOCKER_HOST."
        ) from exc
    return client


def current_key(client: Any, tag: str) -> str | None:
    """The build key of the image tagged ``tag``, or None when there is none."""
    import docker.errors

    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None
    labels = image.labels or {}
    key = labels.get(KEY_LABEL)
    return str(key) if key else None


def image_id(client: Any, tag: str) -> str | None:
    """The id of the image tagged ``tag``, or None."""
    import docker.errors

    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        return None


def drop_if_dangling(client: Any, old_id: str | None, tag: str) -> None:
    """Remove the image a rebuild replaced, so rebuilds do not pile up (skip if in use)."""
    if old_id is None or old_id == image_id(client, tag):
        return
    import docker.errors

    # Still used by a container or another tag: leave it.
    with contextlib.suppress(docker.errors.APIError):
        client.images.remove(old_id, noprune=False)


def build_context(client: Any, context: Path, tag: str, key: str) -> None:
    """``docker build`` of a folder holding a Dockerfile; the engine's log on failure."""
    import docker.errors

    old = image_id(client, tag)
    try:
        client.images.build(
            path=str(context), tag=tag, rm=True, forcerm=True, labels={KEY_LABEL: key}
        )
    except docker.errors.BuildError as exc:
        lines = [
            str(item.get("stream") or item.get("error") or "").rstrip() for item in exc.build_log
        ]
        tail = "\n".join(line for line in lines if line)[-3000:]
        raise BuildError(f"building {tag} failed: {exc.msg}\n{tail}") from exc
    except docker.errors.APIError as exc:
        raise BuildError(f"building {tag} failed: {exc.explanation or exc}") from exc
    drop_if_dangling(client, old, tag)


# --------------------------------------------------------------------------- base image


def interpreter_info(python: str) -> dict[str, Any]:
    """Where ``python`` keeps its binary, standard library, extension modules and libpython."""
    proc = subprocess.run(
        [python, "-I", "-c", _INFO_CODE], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise BuildError(f"cannot query {python}: {proc.stderr.strip()}")
    info: dict[str, Any] = json.loads(proc.stdout)
    if not info["dynload"] or not os.path.isdir(info["dynload"]):
        info["dynload"] = os.path.join(info["stdlib"], "lib-dynload")
    return info


_LDD_LINE = re.compile(r"^\s*(?:\S+\s+=>\s+)?(/\S+)\s+\(0x[0-9a-f]+\)\s*$")


def shared_libraries(binaries: Iterable[str], inside: str | None = None) -> set[str]:
    """Absolute paths of the shared libraries ``ldd`` reports for ``binaries``.

    Libraries under ``inside`` (the folder being packed anyway) are left out. A library
    ``ldd`` cannot find is an error: the image would fail at import time instead.
    """
    found: set[str] = set()
    missing: list[str] = []
    batch: list[str] = []

    def run(paths: list[str]) -> None:
        proc = subprocess.run(["ldd", *paths], capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            if "not found" in line:
                missing.append(line.strip())
                continue
            match = _LDD_LINE.match(line)
            if match:
                path = match.group(1)
                if inside is None or not os.path.realpath(path).startswith(inside + os.sep):
                    found.add(path)

    for path in binaries:
        batch.append(path)
        if len(batch) == 200:
            run(batch)
            batch = []
    if batch:
        run(batch)
    if missing:
        raise BuildError("ldd cannot find libraries: " + "; ".join(sorted(set(missing))[:10]))
    return found


def _add_file(tar: tarfile.TarFile, source: str, arcname: str) -> None:
    """Add ``source``'s content (symlinks followed) as a regular file at ``arcname``."""
    real = os.path.realpath(source)
    info = tar.gettarinfo(real, arcname=arcname.lstrip("/"))
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    with open(real, "rb") as handle:
        tar.addfile(info, handle)


def _add_dir(tar: tarfile.TarFile, arcname: str, mode: int = 0o755) -> None:
    info = tarfile.TarInfo(arcname.strip("/"))
    info.type = tarfile.DIRTYPE
    info.mode = mode
    tar.addfile(info)


def _add_text(tar: tarfile.TarFile, arcname: str, text: str, mode: int = 0o644) -> None:
    data = text.encode()
    info = tarfile.TarInfo(arcname.strip("/"))
    info.size = len(data)
    info.mode = mode
    tar.addfile(info, io.BytesIO(data))


def _add_symlink(tar: tarfile.TarFile, arcname: str, target: str) -> None:
    info = tarfile.TarInfo(arcname.strip("/"))
    info.type = tarfile.SYMTYPE
    info.linkname = target
    tar.addfile(info)


def _stdlib_filter(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    parts = Path(info.name).parts
    # parts: the stdlib path components, then the entry inside it
    for part in parts:
        if part in STDLIB_SKIP or part.startswith(STDLIB_SKIP_PREFIXES):
            return None
        if part == "tests" and "lib2to3" in parts:
            return None
    if DYNLOAD_SKIP.match(parts[-1]):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _libpython(info: dict[str, Any]) -> str | None:
    path = os.path.join(info["libdir"], info["ldlibrary"]) if info["ldlibrary"] else ""
    return path if path and os.path.exists(path) else None


def base_libraries(info: dict[str, Any]) -> set[str]:
    """The shared libraries the interpreter and its extension modules load."""
    dynload = Path(info["dynload"])
    binaries = [info["executable"]]
    binaries += [str(p) for p in dynload.glob("*.so") if not DYNLOAD_SKIP.match(p.name)]
    libpython = _libpython(info)
    if libpython:
        binaries.append(libpython)
    return shared_libraries(binaries)


def base_rootfs(info: dict[str, Any], libs: set[str], out: Path) -> None:
    """Write the base image's root filesystem as a tar at ``out``."""
    stdlib = info["stdlib"]
    dynload = info["dynload"]
    exe = info["executable"]
    libpython = _libpython(info)
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for folder in ("usr", "usr/local", "usr/local/bin", "etc", "root", "app"):
            _add_dir(tar, folder)
        _add_dir(tar, "tmp", 0o1777)
        _add_text(tar, "etc/passwd", PASSWD)
        _add_text(tar, "etc/group", GROUP)
        _add_file(tar, exe, exe)
        for name in ("python", "python3", "python3.11"):
            link = f"/usr/local/bin/{name}"
            if link != exe:
                _add_symlink(tar, link, exe)
        for lib in sorted(libs):
            _add_file(tar, lib, lib)
        if libpython and libpython not in libs:
            _add_file(tar, libpython, libpython)
        tar.add(stdlib, arcname=stdlib.lstrip("/"), filter=_stdlib_filter)
        if not os.path.realpath(dynload).startswith(os.path.realpath(stdlib) + os.sep):
            tar.add(dynload, arcname=dynload.lstrip("/"), filter=_stdlib_filter)


BASE_CHANGES = (
    "ENV PATH=/usr/local/bin:/usr/bin:/bin",
    "ENV LANG=C.UTF-8",
    "ENV HOME=/root",
    "WORKDIR /app",
    'CMD ["python3"]',
)


def import_rootfs(client: Any, tar_path: Path, tag: str, key: str, changes: Sequence[str]) -> None:
    """``docker import`` a root filesystem tar as ``tag``, labelled with its build key.

    One import writes the layer once; a ``docker build`` with the same files as context
    copies them three or four times (about 5 s against 25-35 s for the deps image here).
    """
    old = image_id(client, tag)
    repository, name = tag.rsplit(":", 1)
    import docker.errors

    try:
        client.api.import_image_from_file(
            str(tar_path),
            repository=repository,
            tag=name,
            changes=[*changes, f"LABEL {KEY_LABEL}={key}"],
        )
    except docker.errors.APIError as exc:
        raise BuildError(f"docker import of {tag} failed: {exc.explanation or exc}") from exc
    finally:
        tar_path.unlink(missing_ok=True)
    if current_key(client, tag) != key:
        raise BuildError(f"docker import did not produce {tag}")
    drop_if_dangling(client, old, tag)


def build_base(client: Any, info: dict[str, Any], libs: set[str], cache: Path, force: bool) -> str:
    """Import the base image unless one built from the same interpreter exists."""
    stat = os.stat(info["executable"])
    key = digest(
        FORMAT,
        "base",
        info["executable"],
        info["version"],
        str(stat.st_size),
        str(stat.st_mtime_ns),
    )
    if not force and current_key(client, BASE_TAG) == key:
        log(f"{BASE_TAG}: up to date")
        return key
    started = time.monotonic()
    cache.mkdir(parents=True, exist_ok=True)
    tar_path = cache / "python-base.tar"
    base_rootfs(info, libs, tar_path)
    import_rootfs(client, tar_path, BASE_TAG, key, BASE_CHANGES)
    log(f"{BASE_TAG}: imported in {time.monotonic() - started:.1f} s")
    return key


# --------------------------------------------------------------------------- deps image


def pinned_versions() -> str:
    """``name==version`` for every distribution here, so images get the tested versions."""
    pins = set()
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if not name or name.lower() == "envgen":
            continue
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
        if direct.get("dir_info", {}).get("editable"):
            continue
        pins.add(f"{name}=={dist.version}")
    return "\n".join(sorted(pins, key=str.lower)) + "\n"


def install_deps(cache: Path, key: str) -> Path:
    """``pip install --target`` the servers' dependencies once per key; later runs reuse it.

    Returns the folder holding ``site-packages/``.
    """
    target = cache / f"deps-{key}"
    if (target / ".complete").is_file():
        log(f"dependencies: cached in {target}")
        return target
    cache.mkdir(parents=True, exist_ok=True)
    for stale in cache.glob("deps-*"):
        shutil.rmtree(stale, ignore_errors=True)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="deps-tmp-", dir=cache))
    constraints = work / "constraints.txt"
    constraints.write_text(pinned_versions())
    cmd = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-warn-script-location", "--target", str(work / "site-packages"),
        "-c", str(constraints), *REQUIREMENTS,
    ]  # fmt: skip
    log("dependencies: " + " ".join(REQUIREMENTS) + " (pip install --target)")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise BuildError(f"pip install --target failed:\n{proc.stderr[-3000:]}")
    (work / ".complete").write_text("ok\n")
    work.rename(target)
    log(f"dependencies: installed in {time.monotonic() - started:.1f} s")
    return target


def build_deps(
    client: Any,
    info: dict[str, Any],
    base_key: str,
    base_libs: set[str],
    cache: Path,
    force: bool,
) -> str:
    """The deps image: the base's files plus the servers' packages and the libraries they load.

    Imported as one layer (the base's root filesystem with the packages added), not built
    FROM the base: an import is several times faster than a build with a 470 MB context.
    """
    key = digest(FORMAT, "deps", base_key, *REQUIREMENTS, pinned_versions())
    if not force and current_key(client, DEPS_TAG) == key:
        log(f"{DEPS_TAG}: up to date")
        return key
    deps = install_deps(cache, key)
    started = time.monotonic()
    site = deps / "site-packages"
    extensions = [str(p) for p in site.rglob("*.so*") if p.is_file() and ".so" in p.name]
    extra = sorted(set(shared_libraries(extensions, str(site))) - base_libs)
    tar_path = cache / "example-deps.tar"
    base_rootfs(info, base_libs, tar_path)
    with tarfile.open(tar_path, "a", format=tarfile.PAX_FORMAT) as tar:
        for lib in extra:
            _add_file(tar, lib, lib)
        tar.add(site, arcname=DEPS_DIR_IN_IMAGE.lstrip("/"), filter=_as_root)
    changes = [*BASE_CHANGES, f"ENV PYTHONPATH={DEPS_DIR_IN_IMAGE}"]
    import_rootfs(client, tar_path, DEPS_TAG, key, changes)
    log(
        f"{DEPS_TAG}: imported in {time.monotonic() - started:.1f} s "
        f"({len(extra)} shared libraries added for extension modules)"
    )
    return key


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


# --------------------------------------------------------------------------- env images


def _example_files(repo: Path, env: str) -> Iterator[Path]:
    """The files an env's server imports: the shared example modules and its own package."""
    examples = repo / "examples"
    for name in ("__init__.py", "_logic.py", "_serve.py"):
        yield examples / name
    yield from sorted(p for p in (examples / env).rglob("*.py") if "__pycache__" not in p.parts)


def env_dockerfile(env: ExampleEnv) -> str:
    """The Dockerfile of an env image built on the local deps image."""
    return (
        "\n".join(
            [
                f"FROM {DEPS_TAG}",
                "WORKDIR /app",
                "COPY examples/ /app/examples/",
                "COPY serve_env.py /app/serve_env.py",
                f"ENV ENVGEN_SERVER_MODULE=examples.{env.name}.server "
                f"ENVGEN_PROTOCOL={env.transport} "
                f"ENVGEN_HOST=0.0.0.0 ENVGEN_PORT={env.port} PYTHONUNBUFFERED=1",
                f"EXPOSE {env.port}",
                f'LABEL envgen.example-env="{env.name}"',
                'CMD ["python", "/app/serve_env.py"]',
            ]
        )
        + "\n"
    )


def build_env(client: Any, env: ExampleEnv, deps_key: str, force: bool, repo: Path = REPO) -> str:
    """One env image: the example package on top of the deps image."""
    files = list(_example_files(repo, env.name))
    entry = repo / "scripts" / "serve_env.py"
    dockerfile = env_dockerfile(env)
    key = digest(
        FORMAT,
        "env",
        deps_key,
        dockerfile,
        entry.read_bytes(),
        *(f"{p.relative_to(repo)}\0".encode() + p.read_bytes() for p in files),
    )
    if not force and current_key(client, env.image) == key:
        log(f"{env.image}: up to date")
        return key
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="envgen-ctx-") as tmp:
        context = Path(tmp)
        for path in files:
            dest = context / path.relative_to(repo)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
        shutil.copy2(entry, context / "serve_env.py")
        (context / "Dockerfile").write_text(dockerfile)
        build_context(client, context, env.image, key)
    log(f"{env.image}: built in {time.monotonic() - started:.1f} s")
    return key


# --------------------------------------------------------------------------- command line


def default_cache() -> Path:
    """Where the dependency folder is kept between runs (outside the repo: clones share it)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(root) / "envgen" / "images"


def build(
    names: Sequence[str] = (),
    *,
    force: bool = False,
    python: str | None = None,
    cache: Path | None = None,
    repo: Path = REPO,
) -> list[ExampleEnv]:
    """Build the base, the deps and the env images; returns the envs built (or up to date)."""
    envs = discover_envs(repo)
    known = {env.name: env for env in envs}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise BuildError(f"unknown env(s) {', '.join(unknown)}; known: {', '.join(known)}")
    chosen = [known[name] for name in names] if names else envs
    base: str = getattr(sys, "_base_executable", None) or sys.executable
    info = interpreter_info(python or base)
    if tuple(info["version_info"]) != sys.version_info[:2]:
        raise BuildError(
            f"{info['executable']} is Python {info['version_info']}, but pip runs on "
            f"{sys.version_info[:2]}: run this script with the same minor version"
        )
    cache = cache or default_cache()
    client = engine()
    libs = base_libraries(info)
    base_key = build_base(client, info, libs, cache, force)
    deps_key = build_deps(client, info, base_key, libs, cache, force)
    for env in chosen:
        build_env(client, env, deps_key, force, repo)
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, build, report the total time; exit 1 on a build failure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("envs", nargs="*", help="env names (default: every example env)")
    parser.add_argument("--force", action="store_true", help="rebuild every layer")
    parser.add_argument(
        "--list", action="store_true", help="print env and image tag, build nothing"
    )
    parser.add_argument(
        "--python", help="interpreter to copy into the base (default: this one's base)"
    )
    parser.add_argument("--cache-dir", type=Path, help=f"default: {default_cache()}")
    args = parser.parse_args(argv)
    if args.list:
        for env in discover_envs():
            print(f"{env.name}\t{env.image}")
        return 0
    started = time.monotonic()
    try:
        built = build(args.envs, force=args.force, python=args.python, cache=args.cache_dir)
    except BuildError as exc:
        log(f"error: {exc}")
        return 1
    log(f"{len(built)} env image(s) ready in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
