"""An env's model calls run anywhere, with only the model generator loaded, to the same bytes."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest

from generator.codegen.model_call import ModelCall
from generator.codegen.models import client_call, generate_models
from generator.codegen.server_models import generate_server_models, server_call
from generator.errors import GenerationError
from generator.schema.loader import Layout, load_env
from tests.helpers import REPO

# A fresh interpreter that unpickles the calls on stdin and runs them, as the warm worker
# does; it prints each source, then the envgen modules and template or schema libraries
# it had to load.
_RUNNER = """
import json, pickle, sys
calls = pickle.load(sys.stdin.buffer)
sources = [call.run() for call in calls]
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("generator", "jinja2", "jsonschema"))
sys.stdout.write(json.dumps([sources, loaded]))
"""


def test_calls_run_in_a_fresh_process_to_the_same_sources_loading_no_schema_code() -> None:
    env = load_env(Layout.at(REPO), "grid_env")
    server, union_alias = server_call(env, "# server")
    calls = [client_call(env, "# client"), server]
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=pickle.dumps(calls),
        capture_output=True,
        cwd=REPO,
        check=True,
    )
    sources, loaded = json.loads(done.stdout)
    assert sources == [
        generate_models(env, "# client"),
        generate_server_models(env, "# server").source,
    ]
    assert union_alias == generate_server_models(env, "# server").union_alias
    assert loaded == [  # what the worker has to import besides the model generator
        "generator",
        "generator.codegen",
        "generator.codegen.datamodel",
        "generator.codegen.field_names",
        "generator.codegen.model_call",
        "generator.codegen.source_text",
        "generator.codegen.tuple_defaults",
        "generator.errors",
    ]


def test_a_call_reports_a_missing_name_as_its_module_would() -> None:
    def call(*expected: str) -> ModelCall:
        document = {"title": "EnvgenBundleRoot", "$defs": {"A": {"type": "object"}}}
        return ModelCall(document, "pydantic", "# h", expected)

    assert "class A(" in call("A").run()
    with pytest.raises(GenerationError, match="lack B"):
        call("A", "B").run()
