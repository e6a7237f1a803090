"""`envgen image`: the click command.

    envgen image [ENV...] [--force] [--list]

Exit codes: 0 every image built or up to date; 1 a build failed; 2 usage or input error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from generator.cli.common import Context, fail
from generator.cli.options import verbosity_options
from generator.errors import EnvgenError
from generator.image.build import build_images, default_cache, image_envs
from generator.image.engine import ImageBuildError

EXIT_BUILD_FAILED = 1


@click.command(name="image")
@click.argument("envs", nargs=-1)
@click.option("--force", is_flag=True, help="Rebuild every layer, even those up to date.")
@click.option(
    "--list", "list_only", is_flag=True, help="Print each env and its tag; build nothing."
)
@click.option(
    "--python",
    help="Interpreter to copy into the base image (default: the one running envgen).",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help=f"Where installed dependencies are kept between runs (default: {default_cache()}).",
)
@verbosity_options
@click.pass_obj
def image_command(
    obj: Context,
    envs: tuple[str, ...],
    force: bool,
    list_only: bool,
    python: str | None,
    cache_dir: Path | None,
) -> None:
    """Build a Docker image for each ENV (default: every env with a [docker] image).

    No registry is needed: the base is this host's Python, the server's packages
    ([docker] requirements in env.toml, default openenv and uvicorn, at the versions
    installed here) are installed on the host, and the env's code ([docker] include,
    default the server module's package and its generated client) goes on top. The image
    is tagged as env.toml's [docker] image says and serves its [server] command, so
    from_docker_image() runs it.
    """
    layout = obj.layout
    try:
        manifests = image_envs(layout, envs)
    except EnvgenError as exc:
        fail(exc)
    if list_only:
        for manifest in manifests:
            click.echo(f"{manifest.name}\t{manifest.docker_image}")
        return
    if not manifests:
        click.echo("no env has a [docker] image in its env.toml")
        return
    started = time.monotonic()
    try:
        tags = build_images(layout, manifests, force=force, python=python, cache=cache_dir)
    except ImageBuildError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(EXIT_BUILD_FAILED)
    except EnvgenError as exc:
        fail(exc)
    for manifest, tag in zip(manifests, tags, strict=True):
        click.echo(f"{manifest.name}\t{tag}")
    click.echo(f"{len(tags)} image(s) ready in {time.monotonic() - started:.1f} s", err=True)
