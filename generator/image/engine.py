"""The Docker engine as `envgen image` uses it: build keys, builds, imports, old images.

Every image envgen builds carries the hash of its inputs in the label `envgen.build-key`;
an image whose label matches is not built again, so a second build takes about a second.
The docker SDK comes from the runtime's `docker` extra, imported on first use.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envgen_runtime import EnvgenRuntimeError
from envgen_runtime.containers import docker_client

from generator.errors import EnvgenError

KEY_LABEL = "envgen.build-key"
FORMAT = "4"  # bump to invalidate every cached layer when the images' layout changes


class ImageBuildError(EnvgenError):
    """A build step failed; the message says which and why."""


def digest(*parts: str | bytes) -> str:
    """Hash of the inputs of a layer, used as its cache key."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()[:32]


def engine() -> Any:
    """A docker-py client for a running engine, or ImageBuildError saying how to get one."""
    try:
        client = docker_client(timeout_s=600)
        client.ping()
    except EnvgenRuntimeError as exc:
        raise ImageBuildError(str(exc)) from None
    except Exception as exc:  # the SDK raises requests' and its own errors here
        raise ImageBuildError(
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
        raise ImageBuildError(f"building {tag} failed: {exc.msg}\n{tail}") from exc
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"building {tag} failed: {exc.explanation or exc}") from exc
    drop_if_dangling(client, old, tag)


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
        raise ImageBuildError(f"docker import of {tag} failed: {exc.explanation or exc}") from exc
    finally:
        tar_path.unlink(missing_ok=True)
    if current_key(client, tag) != key:
        raise ImageBuildError(f"docker import did not produce {tag}")
    drop_if_dangling(client, old, tag)
