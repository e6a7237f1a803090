"""Building the images of some envs: the shared base and dependency layers, then each env."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from generator.errors import InputError
from generator.image.deps import build_deps
from generator.image.engine import ImageBuildError, engine
from generator.image.envimage import build_env_image
from generator.image.rootfs import base_libraries, build_base, interpreter_info
from generator.schema.loader import MANIFEST, Layout, discover_envs, load_env
from generator.schema.manifest import Manifest


def default_cache() -> Path:
    """Where installed dependencies are kept between runs (outside any checkout)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(root) / "envgen" / "images"


def image_envs(layout: Layout, names: Sequence[str] = ()) -> list[Manifest]:
    """The manifests of `names` (default: every env with a `[docker] image`)."""
    chosen = list(names) or discover_envs(layout)
    manifests = [load_env(layout, name).manifest for name in chosen]
    if names:
        for manifest in manifests:
            if manifest.docker_image is None:
                raise InputError(
                    f"{manifest.name} has no [docker] image",
                    file=_env_toml(layout, manifest.name),
                    pointer="/docker/image",
                    hint='add e.g. image = "you/my-env" to env.toml (tagged with its version)',
                )
        return manifests
    return [m for m in manifests if m.docker_image is not None]


def build_images(
    layout: Layout,
    manifests: Sequence[Manifest],
    *,
    force: bool = False,
    python: str | None = None,
    cache: Path | None = None,
) -> list[str]:
    """Build every layer `manifests` need; returns their image tags."""
    base_python: str = getattr(sys, "_base_executable", None) or sys.executable
    info = interpreter_info(python or base_python)
    if tuple(info["version_info"]) != sys.version_info[:2]:
        raise ImageBuildError(
            f"{info['executable']} is Python {info['version_info']}, but pip runs on "
            f"{sys.version_info[:2]}: run envgen with the same minor version"
        )
    cache = cache or default_cache()
    client = engine()
    libs = base_libraries(info)
    base_key = build_base(client, info, libs, cache, force)
    deps: dict[tuple[str, ...], tuple[str, str]] = {}
    tags = []
    for manifest in manifests:
        wanted = tuple(sorted(manifest.docker_requirements))
        if wanted not in deps:
            deps[wanted] = build_deps(client, info, base_key, libs, wanted, cache, force)
        env_toml = _env_toml(layout, manifest.name)
        tags.append(build_env_image(client, layout, manifest, env_toml, deps[wanted], force))
    return tags


def _env_toml(layout: Layout, name: str) -> str:
    return layout.display(layout.schemas / name / MANIFEST)
