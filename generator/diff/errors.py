"""Errors `envgen diff` raises on bad input; all are InputErrors, so the CLI exits 2."""

from __future__ import annotations

from generator.errors import InputError


class GitError(InputError):
    """A git revision cannot be read (unknown revision, not a repository, git missing)."""


class IgnoreFileError(InputError):
    """An ignore file is not valid TOML or an entry lacks a rule, pointer or reason."""


class RoleFileError(InputError):
    """A file given to `--role` cannot be compared (not a role schema, not found)."""
