"""The runtime's version and the rule that says which generated code it can serve.

Public for tools: the generator records ``compatible_range(API_VERSION)`` as a generated
package's runtime dependency; ``check_generated`` is also exported by ``envgen_runtime``.

Generated packages record the runtime API they were generated for (``API_VERSION`` of the
runtime that the generator shipped with, ``MAJOR.MINOR``) and call ``check_generated`` when
they are imported, as protobuf's generated code does. The rule is semver's caret range,
with 0.x read the way ``envgen diff`` reads versions (the leftmost non-zero part is the
compatibility part):

- generated for ``0.Y``: runtime ``>=0.Y,<0.(Y+1)``;
- generated for ``X.Y`` with ``X >= 1``: runtime ``>=X.Y,<(X+1)``.

A newer runtime within the range serves older generated code; an older runtime never serves
newer generated code, because the code may call what that runtime lacks.
"""

from __future__ import annotations

__all__ = [
    "API_VERSION",
    "__version__",
    "check_generated",
    "compatible_range",
    "is_compatible",
]

__version__ = "0.2.0"
"""The ``envgen-runtime`` distribution's version."""

API_VERSION = ".".join(__version__.split(".")[:2])
"""The API level generated code records: ``MAJOR.MINOR`` of ``__version__``."""


def _parse(version: str) -> tuple[int, int]:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        raise ValueError(f"not a MAJOR.MINOR version: {version!r}") from None


def compatible_range(api_version: str) -> str:
    """The pip specifier of the runtimes that serve code generated for ``api_version``."""
    major, minor = _parse(api_version)
    upper = f"0.{minor + 1}" if major == 0 else f"{major + 1}"
    return f">={major}.{minor},<{upper}"


def is_compatible(api_version: str, runtime_version: str = __version__) -> bool:
    """Whether ``runtime_version`` serves code generated for ``api_version``."""
    want, have = _parse(api_version), _parse(runtime_version)
    same_line = have[:2] == want if want[0] == 0 else have[0] == want[0]
    return same_line and have >= want


def check_generated(package: str, api_version: str) -> None:
    """Refuse to import ``package``, generated for ``api_version``, on an unfit runtime.

    Raises ``ImportError`` naming both versions and the command that fixes it.
    """
    if is_compatible(api_version):
        return
    wanted = compatible_range(api_version)
    raise ImportError(
        f"{package} was generated for envgen-runtime {api_version} and needs "
        f"envgen-runtime{wanted}, but envgen-runtime {__version__} is installed. "
        f"Fix: pip install 'envgen-runtime{wanted}', or regenerate the client with the "
        f"envgen that matches the installed runtime (envgen generate)."
    )
