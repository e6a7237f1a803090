"""envgen: typed clients for RL environment servers, generated from JSON Schemas.

Kept deliberately light: generated clients import `envgen_runtime`, which must not pull in
jinja2, datamodel-code-generator or click through this package's `__init__`.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
