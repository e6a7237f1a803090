"""The dependency image: the base's files plus an env server's packages, `docker import`-ed.

The packages are installed on the host with `pip install --target`, constrained to the
versions installed here (what was tested), and the shared libraries their extension modules
load are added. One image per set of requirements (`envgen/server-deps:PY-KEY`), shared by
every env that asks for the same set; the installed folder is cached between runs. The
packages' own test suites (`tests/` and `test/` folders inside a package, 63 MB for
openenv 0.10's dependencies, pandas' alone 46 MB) are left out: a server never imports them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from generator.image.engine import FORMAT, ImageBuildError, current_key, digest, import_rootfs
from generator.image.log import log
from generator.image.rootfs import BASE_CHANGES, _add_file, base_rootfs, shared_libraries

DEPS_DIR_IN_IMAGE = "/opt/envgen/site-packages"
TEST_DIRS = frozenset({"tests", "test"})
"""Folders inside an installed package that hold its test suite, left out of the image."""


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


def install_deps(cache: Path, key: str, requirements: Sequence[str]) -> Path:
    """``pip install --target`` the servers' dependencies once per key; later runs reuse it.

    Returns the folder holding ``site-packages/``.
    """
    target = cache / f"deps-{key}"
    if (target / ".complete").is_file():
        log(f"dependencies: cached in {target}")
        return target
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="deps-tmp-", dir=cache))
    constraints = work / "constraints.txt"
    constraints.write_text(pinned_versions())
    cmd = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-warn-script-location", "--target", str(work / "site-packages"),
        "-c", str(constraints), *requirements,
    ]  # fmt: skip
    log("dependencies: " + " ".join(requirements) + " (pip install --target)")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise ImageBuildError(f"pip install --target failed:\n{proc.stderr[-3000:]}")
    (work / ".complete").write_text("ok\n")
    work.rename(target)
    log(f"dependencies: installed in {time.monotonic() - started:.1f} s")
    return target


def deps_tag(info: dict[str, Any], key: str) -> str:
    major, minor = info["version_info"]
    return f"envgen/server-deps:{major}.{minor}-{key[:12]}"


def build_deps(
    client: Any,
    info: dict[str, Any],
    base_key: str,
    base_libs: set[str],
    requirements: Sequence[str],
    cache: Path,
    force: bool,
) -> tuple[str, str]:
    """The deps image: the base's files plus the servers' packages and the libraries they load.

    Imported as one layer (the base's root filesystem with the packages added), not built
    FROM the base: an import is several times faster than a build with a 470 MB context.
    """
    installed = digest(FORMAT, "deps", base_key, *sorted(requirements), pinned_versions())
    key = digest(installed, "without", *sorted(TEST_DIRS))  # the image holds less than pip's
    tag = deps_tag(info, key)
    if not force and current_key(client, tag) == key:
        log(f"{tag}: up to date")
        return key, tag
    deps = install_deps(cache, installed, requirements)
    started = time.monotonic()
    site = deps / "site-packages"
    extensions = [str(p) for p in site.rglob("*.so*") if p.is_file() and ".so" in p.name]
    extra = sorted(set(shared_libraries(extensions, str(site))) - base_libs)
    tar_path = cache / f"server-deps-{key}.tar"
    base_rootfs(info, base_libs, tar_path)
    with tarfile.open(tar_path, "a", format=tarfile.PAX_FORMAT) as tar:
        for lib in extra:
            _add_file(tar, lib, lib)
        tar.add(site, arcname=DEPS_DIR_IN_IMAGE.lstrip("/"), filter=_without_tests)
    changes = [*BASE_CHANGES, f"ENV PYTHONPATH={DEPS_DIR_IN_IMAGE}"]
    import_rootfs(client, tar_path, tag, key, changes)
    log(
        f"{tag}: imported in {time.monotonic() - started:.1f} s "
        f"({len(extra)} shared libraries added for extension modules)"
    )
    return key, tag


def _without_tests(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """A package's test folder is skipped (with all it holds); everything else goes in as root.

    Only folders below a top-level package: `jinja2/tests.py` (a module) and a top-level
    `test` distribution stay.
    """
    parts = Path(info.name).parts  # opt/envgen/site-packages/<package>/.../tests
    inside_package = len(parts) > len(Path(DEPS_DIR_IN_IMAGE.lstrip("/")).parts) + 1
    if info.isdir() and inside_package and parts[-1] in TEST_DIRS:
        return None
    return _as_root(info)


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
