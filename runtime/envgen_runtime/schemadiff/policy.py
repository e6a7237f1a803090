"""The settings that decide verdicts which depend on how readers behave.

Defaults match the clients envgen generates: they keep unknown observation and state fields
(in `model_extra`), reject enum values they do not know (enums become `Literal` types), and
treat a field that is both `required` and has a `default` as required (the generated field
has no default). The server reading actions is taken at its schema's word: it rejects unknown
fields where the schema says `additionalProperties: false`.

Each setting comes from, in order: a command-line flag, the head env.toml's `[compat]` table,
the default here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from .roles import CLIENT_WRITTEN, Role


@dataclass(frozen=True)
class Policy:
    """How readers behave; see the module docstring for where each default comes from."""

    readers_ignore_unknown_fields: bool = True
    server_ignores_unknown_fields: bool = False
    default_satisfies_required: bool = False
    extensible_enums: bool = False

    def reader_ignores_unknown(self, role: Role) -> bool:
        """Whether the side that reads `role` accepts fields its schema closes off."""
        if role in CLIENT_WRITTEN:
            return self.server_ignores_unknown_fields
        return self.readers_ignore_unknown_fields

    def as_dict(self) -> dict[str, bool]:
        return asdict(self)

    @classmethod
    def setting_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def resolve(cls, settings: Mapping[str, bool], overrides: Mapping[str, bool | None]) -> Policy:
        """Flags beat env.toml, which beats the defaults; unknown keys are ignored here."""
        values: dict[str, bool] = {}
        for key in cls.setting_names():
            flag = overrides.get(key)
            if flag is not None:
                values[key] = flag
            elif key in settings:
                values[key] = bool(settings[key])
        return cls(**values)
