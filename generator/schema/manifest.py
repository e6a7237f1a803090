"""The per-environment manifest, `schemas/<env>/env.toml`, read and checked."""

from __future__ import annotations

import keyword
import re
import tomllib
from dataclasses import dataclass
from math import inf
from pathlib import Path
from typing import Any, Literal

from generator.errors import ManifestError

ENV_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
CLASS_PREFIX_RE = re.compile(r"^[A-Z][A-Za-z0-9]*$")

Transport = Literal["http", "websocket"]
ModelType = Literal["pydantic", "dataclasses"]
Backend = Literal["lean", "openenv"]
BACKENDS: tuple[Backend, ...] = ("lean", "openenv")
"""`[server] backend`: envgen's starlette app, or openenv 0.10's (envgen_runtime.server's)."""
DEFAULT_BACKEND: Backend = "openenv"
"""Without the key: openenv, what every env.toml written before the key was served on."""

_TOP_KEYS = {"name", "version", "description", "class_prefix", "transport", "model_type"}
_TABLES: dict[str, set[str]] = {
    "server": {"backend", "command", "health_path", "startup_timeout_s"},
    "docker": {"image", "port", "requirements", "include"},
    "auth": {"token_env"},
    # Reader behaviour `envgen diff` assumes (envgen_runtime/schemadiff/policy.py); all booleans.
    "compat": {
        "readers_ignore_unknown_fields",
        "server_ignores_unknown_fields",
        "default_satisfies_required",
        "extensible_enums",
    },
}
ENV_VAR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DOCKER_REQUIREMENTS: dict[Backend, tuple[str, ...]] = {
    "openenv": ("openenv", "uvicorn"),
    # envgen-runtime's own dependencies a server imports, and its `server` extra: no openenv.
    "lean": ("pydantic", "starlette", "typing-extensions", "uvicorn", "uvloop", "websockets"),
}
"""What an image installs for a server on each backend when `[docker] requirements` is absent
(the runtime itself is copied in, not installed)."""
DEFAULT_DOCKER_REQUIREMENTS = DOCKER_REQUIREMENTS[DEFAULT_BACKEND]


@dataclass(frozen=True)
class Manifest:
    """What env.toml says about one environment."""

    name: str
    version: str
    description: str
    class_prefix: str
    transport: Transport
    model_type: ModelType
    server_command: tuple[str, ...]
    health_path: str
    startup_timeout_s: float
    docker_image: str | None
    docker_port: int
    auth_token_env: str | None = None
    compat: tuple[tuple[str, bool], ...] = ()
    docker_requirements: tuple[str, ...] = DEFAULT_DOCKER_REQUIREMENTS
    """What `envgen image` pip-installs for the server (constrained to the versions here);
    without `[docker] requirements`, the backend's (`DOCKER_REQUIREMENTS`)."""
    docker_include: tuple[str, ...] | None = None
    """Project paths `envgen image` copies; None: the server module's package and generated/."""
    backend: Backend = DEFAULT_BACKEND
    """What the generated server module's `main`/`serve` serve on unless `--backend` says."""

    @property
    def major_version(self) -> int:
        return int(self.version.split(".", 1)[0])


def default_class_prefix(env_name: str) -> str:
    """`echo_env` -> `Echo`: OpenEnv's convention, the `_env` suffix dropped."""
    base = env_name.removesuffix("_env") or env_name
    return "".join(part[:1].upper() + part[1:] for part in base.split("_") if part)


def check_env_name(name: str) -> str | None:
    """Why `name` cannot name an environment, or None when it can."""
    if not ENV_NAME_RE.match(name):
        return "must be lower case letters, digits and '_', starting with a letter"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return "must not be a Python keyword"
    if name in {"generator", "generated", "examples", "tests", "schemas", "templates"}:
        return "is reserved by envgen's own layout"
    return None


def load_manifest(path: Path, display: str, expected_name: str) -> Manifest:
    """Read and validate env.toml; every problem names the file and the key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(
            "file not found", file=display, hint="every environment needs an env.toml"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"invalid TOML: {exc}", file=display) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read file: {exc}", file=display) from None
    return _parse(data, display, expected_name)


def _parse(data: dict[str, Any], display: str, expected_name: str) -> Manifest:
    def fail(pointer: str, message: str, hint: str | None = None) -> ManifestError:
        return ManifestError(message, file=display, pointer=pointer, hint=hint)

    for key in data:
        if key not in _TOP_KEYS and key not in _TABLES:
            raise fail(f"/{key}", f"unknown key {key!r}", hint=_known_keys_hint(_TOP_KEYS))
    for table, keys in _TABLES.items():
        section = data.get(table, {})
        if not isinstance(section, dict):
            raise fail(f"/{table}", f"[{table}] must be a table")
        for key in section:
            if key not in keys:
                raise fail(f"/{table}/{key}", f"unknown key {key!r}", hint=_known_keys_hint(keys))

    name = _required_string(data, "name", fail)
    problem = check_env_name(name)
    if problem:
        raise fail("/name", f"env name {name!r} {problem}")
    if name != expected_name:
        raise fail(
            "/name",
            f"name {name!r} does not match its folder {expected_name!r}",
            hint="rename the folder or fix the name",
        )
    version = _required_string(data, "version", fail)
    if not SEMVER_RE.match(version):
        raise fail("/version", f"version {version!r} is not a semantic version like 1.2.0")
    description = _string(data, "description", fail) or ""
    prefix = _string(data, "class_prefix", fail) or default_class_prefix(name)
    if not CLASS_PREFIX_RE.match(prefix) or keyword.iskeyword(prefix):
        raise fail(
            "/class_prefix",
            f"class prefix {prefix!r} must be a capitalised Python identifier of letters and "
            "digits",
        )
    transport = _string(data, "transport", fail) or "websocket"
    if transport not in ("http", "websocket"):
        raise fail("/transport", f"transport must be 'http' or 'websocket', not {transport!r}")
    model_type = _string(data, "model_type", fail) or "pydantic"
    if model_type not in ("pydantic", "dataclasses"):
        raise fail(
            "/model_type", f"model_type must be 'pydantic' or 'dataclasses', not {model_type!r}"
        )

    server = data.get("server", {})
    backend = server.get("backend", DEFAULT_BACKEND)
    if backend not in BACKENDS:
        raise fail(
            "/server/backend",
            f"backend must be 'lean' or 'openenv', not {backend!r}",
            hint="lean: envgen's starlette app (fast start, no openenv); openenv: openenv "
            "0.10's app (its web interface, the Hugging Face Spaces layout)",
        )
    command = server.get("command", [])
    if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
        raise fail("/server/command", "command must be a list of strings (an argv)")
    for index, arg in enumerate(command):
        try:
            arg.format(python="", host="", port="", transport="")
        except (KeyError, IndexError, ValueError) as exc:
            raise fail(
                f"/server/command/{index}",
                f"bad placeholder in {arg!r}: {exc}",
                hint="placeholders are {python}, {host}, {port} and {transport}; "
                "write {{ and }} for literal braces",
            ) from None
    health_path = server.get("health_path", "/health")
    if not isinstance(health_path, str) or not health_path.startswith("/"):
        raise fail("/server/health_path", "health_path must be a string starting with '/'")
    timeout = server.get("startup_timeout_s", 60)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < inf:
        raise fail(
            "/server/startup_timeout_s", "startup_timeout_s must be a finite positive number"
        )

    docker = data.get("docker", {})
    image = docker.get("image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise fail("/docker/image", "image must be a non-empty string")
    if image is not None:
        image = image_reference(image, version, fail)
    port = docker.get("port", 8000)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise fail("/docker/port", "port must be an integer from 1 to 65535")
    requirements = _string_list(docker, "requirements", "/docker/requirements", fail)
    include = _string_list(docker, "include", "/docker/include", fail)
    for index, entry in enumerate(include or ()):
        parts = Path(entry).parts
        if Path(entry).is_absolute() or ".." in parts or not parts:
            raise fail(
                f"/docker/include/{index}",
                f"{entry!r} must be a path inside the project (relative, no '..')",
            )

    auth = data.get("auth", {})
    token_env = auth.get("token_env")
    if token_env is not None and (
        not isinstance(token_env, str) or not ENV_VAR_RE.match(token_env)
    ):
        raise fail(
            "/auth/token_env",
            "token_env must be the name of an environment variable, such as 'ECHO_TOKEN'",
            hint="put the variable's name here, never the token itself",
        )

    compat = data.get("compat", {})
    for key, value in compat.items():
        if not isinstance(value, bool):
            raise fail(f"/compat/{key}", f"{key} must be true or false")

    return Manifest(
        name=name,
        version=version,
        description=description,
        class_prefix=prefix,
        transport=transport,  # type: ignore[arg-type]
        model_type=model_type,  # type: ignore[arg-type]
        server_command=tuple(command),
        health_path=health_path,
        startup_timeout_s=float(timeout),
        docker_image=image,
        docker_port=port,
        auth_token_env=token_env,
        compat=tuple(sorted(compat.items())),
        docker_requirements=DOCKER_REQUIREMENTS[backend] if requirements is None else requirements,
        docker_include=include,
        backend=backend,
    )


def docker_tag(version: str) -> str:
    """The image tag of an env version: the version itself (a ``+`` becomes ``_``, since Docker
    tags cannot hold it)."""
    return version.replace("+", "_")


def image_reference(image: str, version: str, fail: Any) -> str:
    """``[docker] image`` with its tag: derived from ``version`` when absent (the one source).

    A tag that names the same version is accepted (env.toml files written before the tag was
    derived); one that names another version is an error, since the image would then report a
    version its schemas do not have. A digest (``@sha256:...``) pins content and is kept.
    """
    if "@" in image:
        return image
    repository, colon, tag = image.rpartition(":")
    if not colon or "/" in tag:  # no tag (a colon before the last '/' is a registry's port)
        return f"{image}:{docker_tag(version)}"
    if tag != docker_tag(version):
        raise fail(
            "/docker/image",
            f"image tag {tag!r} contradicts version {version!r}",
            hint=f'write image = "{repository}": the tag is derived from version',
        )
    return image


def _string_list(
    table: dict[str, Any], key: str, pointer: str, fail: Any
) -> tuple[str, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(pointer, f"{key} must be a list of non-empty strings")
    return tuple(value)


def _required_string(data: dict[str, Any], key: str, fail: Any) -> str:
    value = _string(data, key, fail)
    if value is None:
        raise fail(f"/{key}", f"missing required key {key!r}")
    return value


def _string(data: dict[str, Any], key: str, fail: Any) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(f"/{key}", f"{key} must be a string, not {type(value).__name__}")
    return value


def _known_keys_hint(keys: set[str]) -> str:
    return "known keys: " + ", ".join(sorted(keys))
