"""The generator's exception tree.

Every error the generator raises on bad input names where the problem is (a file, a JSON
pointer inside it, or a command-line argument) and what to do about it, so the CLI can print
it as is and exit 2 without a traceback::

    EnvgenError                  anything envgen reports to a user
    +-- InputError               the user's input is wrong; carries file and JSON pointer
    |   +-- ManifestError        env.toml is missing, unreadable or invalid
    |   +-- SchemaError          a schema file is not JSON, not a valid schema, or not usable
    |       +-- RefError         a $ref cannot be resolved or loops on itself
    +-- GenerationError          generation produced unusable code (an envgen bug or an
    |                            unsupported schema construct)
    +-- EnvExistsError           `envgen new` would overwrite an existing environment
"""

from __future__ import annotations

from typing import Any


def _rebuild(cls: type[EnvgenError], args: tuple[Any, ...], state: dict[str, Any]) -> EnvgenError:
    """Unpickle an error without calling its `__init__` (which takes keyword-only fields)."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class EnvgenError(Exception):
    """Base of every error envgen reports to a user."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __reduce__(self) -> tuple[Any, ...]:
        # Errors come back from the worker processes that render envs in parallel; the
        # default reduction calls `cls(*args)`, which InputError's keyword fields refuse.
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class InputError(EnvgenError):
    """The user's input is wrong; `location` says where (file, and pointer when known)."""

    def __init__(
        self,
        message: str,
        *,
        file: str,
        pointer: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.file = file
        self.pointer = pointer
        self.line = line
        self.column = column
        super().__init__(f"{self.location}: {message}", hint=hint)
        self.detail = message

    @property
    def location(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.pointer is not None:
            where += f" at {self.pointer or '/'} (JSON pointer)"
        return where


class ManifestError(InputError):
    """env.toml is missing, unreadable or has invalid values."""


class SchemaError(InputError):
    """A schema file is not JSON, not a valid JSON Schema, or not usable by envgen."""


class RefError(SchemaError):
    """A `$ref` cannot be resolved, leaves the schemas folder, or loops on itself."""


class GenerationError(EnvgenError):
    """Generation produced code that does not parse or lacks a class it must define."""


class EnvExistsError(EnvgenError):
    """`envgen new` refuses to overwrite an environment that already exists."""
