"""The base image: this host's CPython as a root filesystem, `docker import`-ed.

No registry is needed: the interpreter, its standard library (tests, GUI and build files left
out) and every shared library `ldd` reports for it and its extension modules are packed at
the same paths as on the host. No pip, no shell. Tagged `envgen/python-base:MAJOR.MINOR`.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tarfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from generator.image.engine import FORMAT, ImageBuildError, current_key, digest, import_rootfs
from generator.image.log import log

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


def interpreter_info(python: str) -> dict[str, Any]:
    """Where ``python`` keeps its binary, standard library, extension modules and libpython."""
    proc = subprocess.run(
        [python, "-I", "-c", _INFO_CODE], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ImageBuildError(f"cannot query {python}: {proc.stderr.strip()}")
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
        raise ImageBuildError("ldd cannot find libraries: " + "; ".join(sorted(set(missing))[:10]))
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
        major, minor = info["version_info"]
        for name in ("python", "python3", f"python{major}.{minor}"):
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


def base_tag(info: dict[str, Any]) -> str:
    major, minor = info["version_info"]
    return f"envgen/python-base:{major}.{minor}"


def build_base(client: Any, info: dict[str, Any], libs: set[str], cache: Path, force: bool) -> str:
    """Import the base image unless one built from the same interpreter exists."""
    tag = base_tag(info)
    stat = os.stat(info["executable"])
    key = digest(
        FORMAT,
        "base",
        info["executable"],
        info["version"],
        str(stat.st_size),
        str(stat.st_mtime_ns),
    )
    if not force and current_key(client, tag) == key:
        log(f"{tag}: up to date")
        return key
    started = time.monotonic()
    cache.mkdir(parents=True, exist_ok=True)
    tar_path = cache / "python-base.tar"
    base_rootfs(info, libs, tar_path)
    import_rootfs(client, tar_path, tag, key, BASE_CHANGES)
    log(f"{tag}: imported in {time.monotonic() - started:.1f} s")
    return key
