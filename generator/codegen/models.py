"""``models.py``: the typed models a client is built on, one module per environment.

Objects the server writes (observation and state) are opened up so that unknown fields are
kept rather than rejected; objects only the action reaches stay closed, so a bad action
fails before it is sent. ``generate_env_models`` makes both model modules of an env;
``client_call`` is the client half as a ``ModelCall`` another process can run.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.codegen import server_models
from generator.codegen.datamodel import ROOT_NAME
from generator.codegen.model_call import ModelCall
from generator.codegen.schema_rewrites import default_union_tags, integral_defaults, open_objects
from generator.schema.loader import EnvInput


def generate_models(env: EnvInput, header: str) -> str:
    """Return the source of `models.py` (not yet formatted) for `env`."""
    return client_call(env, header).run()


def client_call(env: EnvInput, header: str) -> ModelCall:
    """The model-generator call that makes `models.py` for `env`."""
    readers = [env.class_name("observation"), env.class_name("state")]
    defs = integral_defaults(default_union_tags(open_objects(env.bundle.defs, readers)))
    document = env.bundle.document(ROOT_NAME)
    document["$defs"] = defs
    expected = [env.class_name(role) for role in ("action", "observation", "state")]
    if env.reset_class:
        expected.append(env.reset_class)
    return ModelCall(document, env.manifest.model_type, header, tuple(expected))


@dataclass(frozen=True)
class EnvModels:
    """The model generator's part of one env: `models.py`'s source and `server.py`'s models."""

    client: str
    server: server_models.ServerModels


def generate_env_models(env: EnvInput, client_header: str, server_header: str) -> EnvModels:
    """Both model modules of `env`: all the model generator does for it, in one call."""
    return EnvModels(
        client=generate_models(env, client_header),
        server=server_models.generate_server_models(env, server_header),
    )
