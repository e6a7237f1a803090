"""Errors cross process boundaries (envs render in worker processes) and stay whole."""

from __future__ import annotations

import pickle

import pytest

from generator.errors import (
    EnvExistsError,
    EnvgenError,
    GenerationError,
    InputError,
    ManifestError,
    RefError,
    SchemaError,
)

CASES: list[EnvgenError] = [
    EnvgenError("plain", hint="do this"),
    GenerationError("generated models lack EchoAction"),
    EnvExistsError("schemas/foo exists"),
    InputError("bad", file="schemas/foo/env.toml", line=3, column=7, hint="fix it"),
    ManifestError("no env", file="schemas/foo/env.toml"),
    SchemaError("not a schema", file="schemas/foo/action.schema.json", pointer="/properties/x"),
    RefError("loops", file="schemas/foo/state.schema.json", pointer=""),
]


@pytest.mark.parametrize("error", CASES, ids=lambda e: type(e).__name__)
def test_an_error_survives_pickling(error: EnvgenError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.args == error.args
    assert vars(copy) == vars(error)
