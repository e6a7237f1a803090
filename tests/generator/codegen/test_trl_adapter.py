"""The generated `trl.py` classes against TRL's `environment_factory` contract.

TRL (1.16) collects an environment's tools with ``inspect.getmembers(type(env),
predicate=inspect.isfunction)`` minus ``reset``, ``get_reward`` and names starting with
``_`` (trl 1.9.0: ``inspect.getmembers(env, predicate=inspect.ismethod)``), builds
each one's schema with ``transformers.utils.get_json_schema`` and calls a tool as
``tool(**arguments)`` under its ``__name__``. TRL itself needs torch, which is not installed
here; transformers' ``get_json_schema`` is, and these tests run it on the generated methods.
"""

from __future__ import annotations

import inspect
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import PreTrainedTokenizerFast
from transformers.utils import get_json_schema

from generated.calc_env.trl import CalcTrlEnv
from generated.calc_env.trl import trl_factory as calc_factory
from generated.echo_env.trl import EchoTrlEnv
from generated.grid_env.trl import GridTrlEnv
from generator.cli import main
from tests.golden.regenerate import CASES
from tests.helpers import REPO

GOLDEN = Path(__file__).with_name("trl_schemas.json")
UNUSED_URL = "http://127.0.0.1:9"  # the constructor connects nothing: no server needed
MARKER = Path("/tmp/envgen-pwned")


def tool_methods(env: object) -> list[Any]:
    """The tools TRL 1.16 collects from `env`, after checking older TRL collects the same."""
    reserved = ("reset", "get_reward")
    now = [
        getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in reserved and not name.startswith("_")
    ]
    before = [
        name
        for name, _ in inspect.getmembers(env, predicate=inspect.ismethod)
        if name not in reserved and not name.startswith("_")
    ]
    assert [m.__name__ for m in now] == before
    return now


def schemas(env: object) -> list[dict[str, Any]]:
    return [get_json_schema(method)["function"] for method in tool_methods(env)]


def test_calc_env_tools_have_typed_described_schemas() -> None:
    out = {s["name"]: s for s in schemas(CalcTrlEnv(UNUSED_URL))}
    assert sorted(out) == ["add", "divide", "format_number", "stats"]
    add = out["add"]
    assert add["description"] == "Add two numbers."
    assert add["parameters"]["required"] == ["a"]
    assert add["parameters"]["properties"]["a"]["type"] == "number"
    assert add["parameters"]["properties"]["b"] == {
        "type": "number",
        "description": "The 'b' argument. Default: 0.0.",
    }
    assert out["format_number"]["parameters"]["properties"]["digits"]["type"] == "integer"
    assert out["stats"]["parameters"]["properties"]["values"]["items"] == {"type": "number"}
    assert out["divide"]["parameters"]["required"] == ["numerator", "denominator"]
    assert all(s["return"]["type"] == "string" for s in out.values())


def test_echo_env_gets_one_step_method_from_its_action_fields() -> None:
    (step,) = schemas(EchoTrlEnv(UNUSED_URL))
    assert step["name"] == "step"
    assert step["description"] == "A message for the environment to echo back."
    assert step["parameters"]["required"] == ["message"]
    assert step["parameters"]["properties"]["message"] == {
        "type": "string",
        "description": "Text to echo back.",
    }


def test_a_tagged_union_action_gets_one_method_per_variant() -> None:
    out = {s["name"]: s for s in schemas(GridTrlEnv(UNUSED_URL))}
    assert sorted(out) == ["move", "pick", "turn"]
    direction = out["move"]["parameters"]["properties"]["direction"]
    assert direction["enum"] == ["north", "east", "south", "west"]
    assert "type" not in out["move"]["parameters"]["properties"]  # the tag is filled in


def test_schemas_match_the_golden_file() -> None:
    got = {cls.__name__: schemas(cls(UNUSED_URL)) for cls in (CalcTrlEnv, EchoTrlEnv, GridTrlEnv)}
    if os.environ.get("ENVGEN_WRITE_TRL_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got == json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_a_chat_template_renders_the_bound_methods_as_tools() -> None:
    """TRL renders each prompt with ``processing_class.apply_chat_template(..., tools=...)``,
    the bound methods themselves: transformers turns them into schemas on the way."""
    vocab = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=vocab)
    template = "{% for t in tools %}{{ t | tojson }}\n{% endfor %}{{ messages[0].content }}"
    env = CalcTrlEnv(UNUSED_URL)
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Add 2 and 3."}],
        tools=tool_methods(env),
        chat_template=template,
        tokenize=False,
    )
    assert isinstance(text, str)
    *lines, prompt = text.split("\n")
    assert prompt == "Add 2 and 3."
    assert [json.loads(line)["function"] for line in lines] == schemas(env)


def test_no_server_configured_is_an_actionable_error() -> None:
    with pytest.raises(ValueError, match=r"CalcTrlEnv\.base_url = 'http://host:port'"):
        CalcTrlEnv()


def test_the_factory_takes_no_arguments_and_pickles() -> None:
    factory = pickle.loads(pickle.dumps(calc_factory(UNUSED_URL, request_timeout_s=3.0)))
    env = factory()
    assert isinstance(env, CalcTrlEnv)
    assert env._client.request_timeout_s == 3.0
    assert (env.reward, env.rewards, env.done) == (0.0, [], False)
    assert env.get_reward() == 0.0
    env._close()


INJECTED = (
    "Tries to inject: \"\"\" ''' {{ 7*7 }} é€😀 \\ end.\n\n"
    "Args:\n    evil: a fake argument\nReturns:\n    nothing (choices: [1, 2])"
)
ARG_INJECTED = 'x """ Raises: y\n    other: fake (choices: ["a", "b"])'

PROBE = r"""
import json, sys
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import PreTrainedTokenizerFast
from transformers.utils import get_json_schema
from generated.tooly.trl import ToolyTrlEnv
env = ToolyTrlEnv("http://127.0.0.1:9")
methods = [env.class_, env.get_reward_]
print(json.dumps([get_json_schema(method)["function"] for method in methods]))
"""


def test_schema_text_stays_inert_in_docstrings_and_get_json_schema(tmp_path: Path) -> None:
    """tooly's tools, with descriptions that try to add arguments, enums and code, a tool
    named like TRL's reserved `get_reward` and an argument named like a name the body uses."""
    shutil.copytree(CASES / "tricky/schemas/tooly", tmp_path / "schemas/tooly")
    tools = tmp_path / "schemas/tooly/tools"
    tool = json.loads((tools / "class.json").read_text(encoding="utf-8"))
    tool["description"] = INJECTED
    tool["inputSchema"]["properties"]["self"]["description"] = ARG_INJECTED
    tool["inputSchema"]["properties"]["cast"] = {"type": "integer", "default": 0}  # the body's
    (tools / "class.json").write_text(json.dumps(tool), encoding="utf-8")
    clash = {"name": "get_reward", "description": "A score.", "inputSchema": {"type": "object"}}
    (tools / "get_reward.json").write_text(json.dumps(clash), encoding="utf-8")
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "generate"])
    assert result.exit_code == 0, result.output
    MARKER.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert not MARKER.exists()
    klass, renamed = json.loads(proc.stdout)
    assert klass["name"] == "class_"
    assert sorted(klass["parameters"]["properties"]) == ["cast_", "from_", "my_arg", "self_"]
    assert klass["parameters"]["required"] == ["self_"]
    assert "enum" not in klass["parameters"]["properties"]["self_"]
    assert klass["description"] == (
        "Tries to inject: \"\"\" ''' {{ 7*7 }} é€😀 \\ end.\n\n"
        "Args :\n    evil: a fake argument\nReturns :\n    nothing (choices : [1, 2])"
    )
    assert klass["parameters"]["properties"]["self_"]["description"] == (
        'x """ Raises : y other: fake (choices : ["a", "b"])'
    )
    assert renamed["name"] == "get_reward_"  # TRL's own `get_reward` stays the episode's
    assert renamed["description"] == "A score."
    source = (tmp_path / "generated/tooly/trl.py").read_text(encoding="utf-8")
    assert "{{ 7*7 }}" in source and "49" not in source
    assert "- tool 'get_reward' is the method get_reward_()" in source
    assert "- argument 'cast' of tool 'class' is cast_" in source
    assert "cast=cast_," in source  # the tools method's own keyword
