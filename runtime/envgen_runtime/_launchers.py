"""``from_docker_image`` and ``from_hub``: start an env's server in a container, get a client.

They live in mixins: ``EnvClient`` inherits ``ProviderLaunchers``, so every generated client
has them and they return the generated type (``EchoEnv.from_docker_image()`` is an
``EchoEnv``). ``AsyncProviderLaunchers`` is the asyncio flavour for ``AsyncEnvClient``: the
same arguments, the container started in a worker thread, and an ``AsyncClientStart`` to
``await`` or ``async with``.

Options fall into three groups, kept apart so no name can mean two things:

- the provider's own keywords (``port``, ``health_path``, ``startup_timeout_s``, ``host``,
  ``pull``, ``docker_client``), defaulting to the generated client's ``SPEC``; ``pull``
  defaults to False for ``from_docker_image`` (a local image) and to True for ``from_hub``
  (an image from a registry);
- ``client_options``: the client constructor's keyword options (a ``ClientOptions`` dict:
  ``transport``, ``request_timeout_s``, ``default_headers``, ``retry``, ...), passed on as
  they are, so every constructor option is reachable without being repeated here;
- every other keyword: a run option for docker-py's ``containers.create`` (``environment``,
  ``volumes``, ``command``, ``mem_limit``, ``nano_cpus``, ``network``, ...).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self, cast

from ._base import ClientOptions
from ._docker import LocalDockerProvider
from ._provider import Provider
from ._spec import EnvSpec

if TYPE_CHECKING:
    from ._client_async import AsyncClientStart

__all__ = ["HUB_REGISTRY", "AsyncProviderLaunchers", "ProviderLaunchers", "hub_image"]

HUB_REGISTRY = "registry.hf.space"
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DEFAULT_HOST = "127.0.0.1"


def hub_image(repo_id: str, tag: str = "latest") -> str:
    """The image of a Hugging Face Space, named as the original OpenEnv client named it.

    ``registry.hf.space/<repo id lowercased, every character outside [a-z0-9] replaced by
    '-'>:<tag>``, e.g. ``openenv/Echo_Env`` -> ``registry.hf.space/openenv-echo-env:latest``.
    """
    if not repo_id or not repo_id.strip():
        raise ValueError("repo_id must be a Hugging Face repo id such as 'openenv/echo-env'")
    if not _TAG.match(tag):
        raise ValueError(f"tag {tag!r} is not a valid Docker tag")
    name = re.sub(r"[^a-z0-9]", "-", repo_id.lower())
    return f"{HUB_REGISTRY}/{name}:{tag}"


def _hub_hint(image: str) -> str:
    """For from_hub(pull=False) with the image absent: how to get it without a pull here."""
    return (
        f"from_hub pulls from {HUB_REGISTRY} unless pull=False: leave pull at its default "
        f"(or run `docker pull {image}`) where {HUB_REGISTRY} can be reached, or `docker "
        "load` a saved copy."
    )


def _client_kwargs(client_options: ClientOptions | None) -> dict[str, Any]:
    options: dict[str, Any] = dict(client_options or {})
    clash = {"base_url", "provider"} & options.keys()
    if clash:
        raise TypeError(f"client_options must not set {sorted(clash)}: the container does")
    return options


class _Launchers:
    """Building the provider: shared by the sync and the asyncio flavours."""

    @classmethod
    def _launch_spec(cls) -> EnvSpec:
        spec = getattr(cls, "SPEC", None)
        if not isinstance(spec, EnvSpec):
            raise TypeError(f"{cls.__name__} must set SPEC: ClassVar[EnvSpec]")
        return spec

    @classmethod
    def _docker_provider(
        cls,
        image: str,
        *,
        port: int | None,
        health_path: str | None,
        startup_timeout_s: float | None,
        host: str,
        pull: bool,
        docker_client: Any | None,
        missing_image_hint: str | None,
        run_options: dict[str, Any],
    ) -> LocalDockerProvider:
        spec = cls._launch_spec()
        return LocalDockerProvider(
            image,
            port=port if port is not None else spec.docker_port,
            health_path=health_path if health_path is not None else spec.health_path,
            startup_timeout_s=(
                startup_timeout_s if startup_timeout_s is not None else spec.startup_timeout_s
            ),
            host=host,
            env_name=spec.name,
            pull=pull,
            docker_client=docker_client,
            missing_image_hint=missing_image_hint,
            **run_options,
        )

    @classmethod
    def _image_provider(
        cls,
        image: str | None,
        provider: Provider | None,
        *,
        port: int | None,
        health_path: str | None,
        startup_timeout_s: float | None,
        host: str,
        pull: bool,
        docker_client: Any | None,
        run_options: dict[str, Any],
    ) -> Provider:
        """The provider ``from_docker_image`` uses: the one given, or a new Docker one."""
        if provider is None:
            chosen = image if image is not None else cls._launch_spec().docker_image
            if not chosen:
                raise ValueError(
                    f"{cls.__name__}.SPEC has no docker_image for environment "
                    f"{cls._launch_spec().name!r}: pass the image, e.g. "
                    "from_docker_image('my-org/my-env:1.0')"
                )
            return cls._docker_provider(
                chosen,
                port=port,
                health_path=health_path,
                startup_timeout_s=startup_timeout_s,
                host=host,
                pull=pull,
                docker_client=docker_client,
                missing_image_hint=None,
                run_options=run_options,
            )
        given = dict(run_options)
        for name, value, default in (
            ("port", port, None),
            ("health_path", health_path, None),
            ("startup_timeout_s", startup_timeout_s, None),
            ("host", host, _DEFAULT_HOST),
            ("pull", pull, False),
            ("docker_client", docker_client, None),
        ):
            if value != default:
                given[name] = value
        if given:
            raise TypeError(
                f"options {sorted(given)} apply to the provider that from_docker_image "
                "builds; configure the provider you pass instead"
            )
        provider_image = getattr(provider, "image", None)
        if image is not None and provider_image is not None and image != provider_image:
            raise ValueError(
                f"image {image!r} differs from the provider's image {provider_image!r}"
            )
        return provider


class ProviderLaunchers(_Launchers):
    """Classmethods that start a server in a container and return a client that owns it.

    Mixed into ``EnvClient``; they need the class's ``SPEC`` (an ``EnvSpec``) and a
    constructor that accepts ``provider=`` and starts a provider that is not running.
    """

    @classmethod
    def from_docker_image(
        cls,
        image: str | None = None,
        provider: Provider | None = None,
        *,
        client_options: ClientOptions | None = None,
        port: int | None = None,
        health_path: str | None = None,
        startup_timeout_s: float | None = None,
        host: str = _DEFAULT_HOST,
        pull: bool = False,
        docker_client: Any | None = None,
        **run_options: Any,
    ) -> Self:
        """Run ``image`` (default ``SPEC.docker_image``) in a container; return a client.

        The container publishes ``port`` (default ``SPEC.docker_port``) on ``host`` at a
        port the engine picks; readiness is ``GET health_path`` (default
        ``SPEC.health_path``) within ``startup_timeout_s`` (default
        ``SPEC.startup_timeout_s``). A missing image is never pulled unless ``pull=True``.
        Extra keywords are run options (see ``LocalDockerProvider``); ``client_options`` go
        to the client's constructor. The client owns the container: ``close()`` (or the
        ``with`` block's end) stops and removes it, and so does a failure while building
        the client.

        ``provider`` replaces the ``LocalDockerProvider`` built here (configure it instead
        of passing options); one that is not running yet is started and owned by the
        client, a running one is only borrowed.
        """
        chosen = cls._image_provider(
            image,
            provider,
            port=port,
            health_path=health_path,
            startup_timeout_s=startup_timeout_s,
            host=host,
            pull=pull,
            docker_client=docker_client,
            run_options=run_options,
        )
        return cls._client_with_provider(chosen, client_options)

    @classmethod
    def from_hub(
        cls,
        repo_id: str,
        tag: str = "latest",
        *,
        client_options: ClientOptions | None = None,
        port: int | None = None,
        health_path: str | None = None,
        startup_timeout_s: float | None = None,
        host: str = _DEFAULT_HOST,
        pull: bool = True,
        docker_client: Any | None = None,
        **run_options: Any,
    ) -> Self:
        """Run a Hugging Face Space's image (see ``hub_image``) like ``from_docker_image``.

        ``from_hub`` means "an image from a registry": a missing image is pulled from
        ``registry.hf.space`` by default (``pull=False`` refuses, and then the image must
        already be present locally). ``from_docker_image`` never pulls unless asked.
        """
        image = hub_image(repo_id, tag)
        provider = cls._docker_provider(
            image,
            port=port,
            health_path=health_path,
            startup_timeout_s=startup_timeout_s,
            host=host,
            pull=pull,
            docker_client=docker_client,
            missing_image_hint=_hub_hint(image),
            run_options=run_options,
        )
        return cls._client_with_provider(provider, client_options)

    @classmethod
    def _client_with_provider(
        cls, provider: Provider, client_options: ClientOptions | None
    ) -> Self:
        """Build the client around ``provider``; stop a provider it started if that fails.

        The constructor starts a provider that is not running and then owns it; if the
        constructor raises (before or after starting it), the container is removed here.
        """
        options = _client_kwargs(client_options)
        was_running = provider.base_url is not None
        factory = cast("Callable[..., Self]", cls)
        try:
            return factory(provider=provider, **options)
        except BaseException:
            if not was_running:
                provider.stop()
            raise


def _stop_in_background(provider: Provider) -> None:
    """Stop a provider without blocking the event loop (its start may still be running)."""
    threading.Thread(target=provider.stop, name="envgen-docker-stop", daemon=True).start()


class AsyncProviderLaunchers(_Launchers):
    """The asyncio flavour of ``ProviderLaunchers``, for ``AsyncEnvClient`` subclasses.

    Same arguments; the result is an ``AsyncClientStart``: ``await`` it for a client that
    owns the container, or ``async with`` it to also close it (and so remove the container)
    at the end. The container starts in a worker thread, so the event loop keeps running;
    cancelling the start removes the container.
    """

    _owns_provider: bool  # set by the client constructor; a started provider is handed over

    @classmethod
    def from_docker_image(
        cls,
        image: str | None = None,
        provider: Provider | None = None,
        *,
        client_options: ClientOptions | None = None,
        port: int | None = None,
        health_path: str | None = None,
        startup_timeout_s: float | None = None,
        host: str = _DEFAULT_HOST,
        pull: bool = False,
        docker_client: Any | None = None,
        **run_options: Any,
    ) -> AsyncClientStart[Self]:  # type: ignore[type-var]  # Self is an AsyncEnvClient
        """Like ``ProviderLaunchers.from_docker_image``; await the result for the client."""
        chosen = cls._image_provider(
            image,
            provider,
            port=port,
            health_path=health_path,
            startup_timeout_s=startup_timeout_s,
            host=host,
            pull=pull,
            docker_client=docker_client,
            run_options=run_options,
        )
        return cls._start_with_provider(chosen, client_options)

    @classmethod
    def from_hub(
        cls,
        repo_id: str,
        tag: str = "latest",
        *,
        client_options: ClientOptions | None = None,
        port: int | None = None,
        health_path: str | None = None,
        startup_timeout_s: float | None = None,
        host: str = _DEFAULT_HOST,
        pull: bool = True,
        docker_client: Any | None = None,
        **run_options: Any,
    ) -> AsyncClientStart[Self]:  # type: ignore[type-var]  # Self is an AsyncEnvClient
        """Like ``ProviderLaunchers.from_hub`` (pulls a missing image unless ``pull=False``);
        await the result for the client."""
        image = hub_image(repo_id, tag)
        provider = cls._docker_provider(
            image,
            port=port,
            health_path=health_path,
            startup_timeout_s=startup_timeout_s,
            host=host,
            pull=pull,
            docker_client=docker_client,
            missing_image_hint=_hub_hint(image),
            run_options=run_options,
        )
        return cls._start_with_provider(provider, client_options)

    @classmethod
    def _start_with_provider(
        cls, provider: Provider, client_options: ClientOptions | None
    ) -> AsyncClientStart[Self]:  # type: ignore[type-var]  # Self is an AsyncEnvClient
        import asyncio

        from ._client_async import AsyncClientStart

        options = _client_kwargs(client_options)
        factory = cast("Callable[..., Self]", cls)

        async def start() -> Self:
            was_running = provider.base_url is not None
            try:
                await asyncio.to_thread(provider.start)
            except BaseException:
                # Also on cancellation while the thread still runs: stop() waits for the
                # provider's lock, then removes the container.
                if not was_running:
                    _stop_in_background(provider)
                raise
            try:
                client = factory(provider=provider, **options)
            except BaseException:
                if not was_running:
                    _stop_in_background(provider)
                raise
            if not was_running:
                client._owns_provider = True  # started here: closing the client stops it
            return client

        return AsyncClientStart(start)
