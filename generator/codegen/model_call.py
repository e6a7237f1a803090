"""One model-generator call as data: what the warm worker (`warm_worker`) is sent and runs.

The calling process turns an env into its calls (the bundle rewritten, the names each module
must define, the generator's options), so the worker needs only this module and `datamodel`:
no schema loader and no env to unpickle, which keeps the worker's own imports small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.codegen.datamodel import generate_module


@dataclass(frozen=True)
class ModelCall:
    """`datamodel.generate_module`'s arguments for one model module."""

    document: dict[str, Any]
    model_type: str
    header: str
    expected: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)

    def run(self) -> str:
        """The module's source (errors as `generate_module` raises them)."""
        return generate_module(
            self.document, self.model_type, self.header, list(self.expected), **self.options
        )
