"""The generated `trl.py`: an environment class for TRL's `GRPOTrainer(environment_factory=...)`.

TRL exposes every public method of such a class (other than `reset` and `get_reward`) to the
model as a tool, its JSON schema read by `transformers.utils.get_json_schema` from the
method's type hints and Google-style docstring. So each method here takes JSON-typed keyword
arguments (a nested model becomes `dict[str, Any]`, validated by the env's models before
anything is sent) and has a docstring whose `Args:` section describes every argument.

A tool env gets one method per tool, named as `tools.py` names it; any other env gets one
method per action: `step` for a plain action model, one per variant (named after its tag)
for a tagged-union action. Schema text only reaches the docstring through `_inert`, which
keeps the words `get_json_schema` parses (`Args:`, `Returns:`, `Raises:`, `(choices: ...)`)
from being read as structure, and then through the templates' `docstring` filter.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from generator.codegen.reset_params import TYPING_NAMES, ResetParam, reset_signature
from generator.codegen.server_models import _union_members
from generator.codegen.tool_methods import ToolMethod
from generator.errors import GenerationError
from generator.schema.loader import EnvInput
from generator.schema.tools import python_name

RESERVED = frozenset({"reset", "get_reward", "reward", "rewards", "done"})
"""Names the adapter class has itself: TRL's reserved methods and the episode's state."""
BODY_NAMES = frozenset(
    {"self", "cast", "Any", "ToolError", "EnvValidationError", "ValidationError"}
)
"""Names a method's body uses: an argument named so gets a `_`."""

_STRUCTURE = re.compile(r"\b(Args|Arguments|Returns|Raises|Yields|choices)\s*:", re.IGNORECASE)
_JSON_NAMES = {"int", "float", "str", "bool", "None", "list", "dict", "tuple", "Any", "Literal"}
_TYPING_ALIASES = {f"{name}_aliased" for name in TYPING_NAMES}
"""The names `reset_signature` keeps for typing names a model of models.py also has."""


@dataclass(frozen=True)
class TrlArg:
    """One keyword argument of an adapter method."""

    name: str
    wire: str
    annotation: str  # a type `get_json_schema` can read
    default: str | None  # Python source of its default; None: required
    sent_unless: str | None  # left out of the call when equal to this (None: always sent)
    passed: str  # the expression handed to the typed tool method
    kw: str  # the typed tool method's keyword for it (a tool env)


@dataclass(frozen=True)
class TrlMethod:
    """One method of the adapter class as `trl.py.jinja` renders it."""

    name: str
    doc: str
    args: list[TrlArg]
    target: str  # a tool env: the tools method called; otherwise the action class built
    whole: bool = False  # the one argument `action` is the whole action as a JSON object


def trl_context(env: EnvInput, models_source: str, context: dict[str, Any]) -> dict[str, Any]:
    """Template context for trl.py; `context` already holds `tool_context`'s entries."""
    tree = ast.parse(models_source)
    kinds = _class_kinds(tree)
    imports: set[str] = set()
    renames: list[str] = []
    if context["tools"]:
        methods = [_tool_method(env, tool, kinds, imports, renames) for tool in context["tools"]]
    else:
        methods = _action_methods(env, models_source, kinds, imports)
    trl_class = f"{env.manifest.class_prefix}TrlEnv"
    args = [arg for method in methods for arg in method.args]
    typing = {"cast"} if any(arg.passed != arg.name for arg in args) else set()
    used = {name for arg in args for name in re.findall(r"\w+", arg.annotation)}
    if "Literal" in used and "Literal" not in kinds:
        typing.add("Literal")
    for alias in used & _TYPING_ALIASES:  # models.py has a model of that name
        typing.add(f"{alias.removesuffix('_aliased')} as {alias}")
    reset = context.get("reset")
    return {
        "trl_class": trl_class,
        "trl_methods": methods,
        "trl_targets": [] if context["tools"] else [method.target for method in methods],
        "trl_model_imports": sorted(imports),
        "trl_typing_imports": sorted(typing),
        "trl_reset_names": [p.name for p in reset.params] if reset else [],
        "trl_doc": _module_doc(env, trl_class, renames),
        "trl_class_doc": _class_doc(env, trl_class, methods, bool(context["tools"])),
    }


def _module_doc(env: EnvInput, trl_class: str, renames: list[str]) -> str:
    text = (
        f"The {env.name} environment for TRL's ``GRPOTrainer(environment_factory=...)``: "
        f"{trl_class}.\n\nTRL offers the model each public method but ``reset`` and "
        "``get_reward`` as a tool; nothing here imports TRL."
    )
    text = _wrap(text)
    if renames:
        text += "\n\nNames mapped for the adapter (the wire keeps the schema's):\n\n"
        text += "\n".join(f"- {line}" for line in renames)
    return text


def _class_doc(env: EnvInput, trl_class: str, methods: list[TrlMethod], tools: bool) -> str:
    listing = ", ".join(f"``{method.name}``" for method in methods)
    kind = "one per tool" if tools else "one per action"
    return _wrap(
        f"One {env.name} session per instance, for ``GRPOTrainer(environment_factory=...)``.\n\n"
        f"The model's tools are {listing} ({kind}); each call is one step, and returns its "
        "result as text. A failed call returns its error, and the episode goes on. "
        "``reward`` (the episode's summed reward), ``rewards`` and ``done`` are kept for "
        "reward functions; ``get_reward`` returns ``reward``.\n\n"
        f"TRL makes instances with no arguments: set ``{trl_class}.base_url``, or pass "
        "``trl_factory(base_url)``. TRL reuses instances across episodes (``reset`` starts "
        "each), one server session each."
    )


def _tool_method(
    env: EnvInput, tool: ToolMethod, kinds: dict[str, str], imports: set[str], renames: list[str]
) -> TrlMethod:
    name = tool.method
    while name in RESERVED:
        name += "_"
    if name != tool.method:
        renames.append(f"tool {tool.wire!r} is the method {name}()")
    props = _properties(env.bundle.defs.get(tool.arguments, {}))
    args = _args(tool.params, props, kinds, imports)
    for arg in args:
        if arg.name != arg.kw:
            renames.append(f"argument {arg.wire!r} of tool {tool.wire!r} is {arg.name}")
    source = next(t for t in env.tools if t.name == tool.wire)
    head = source.description.strip() or f"Call the tool {tool.wire!r}."
    returns = (
        "The tool's result as JSON text, or the error the call met."
        if tool.structured
        else "The tool's text output, or the error the call met."
    )
    return TrlMethod(name, _doc(head, args, props, returns), args, tool.method)


def _action_methods(
    env: EnvInput, models_source: str, kinds: dict[str, str], imports: set[str]
) -> list[TrlMethod]:
    action = env.class_name("action")
    defs = env.bundle.defs
    members = _union_members(defs, action)
    returns = "The observation after the action, as JSON text, or the error the action met."
    if not members:
        schema = defs.get(action, {})
        head = _description(schema) or f"Take one step of the {env.name} environment."
        if kinds.get(action) != "model":  # no fields to read: the action as one JSON object
            whole = TrlArg("action", "action", "dict[str, Any]", None, None, "action", "action")
            props = {"action": {"description": f"The {action} action as a JSON object."}}
            return [TrlMethod("step", _doc(head, [whole], props, returns), [whole], action, True)]
        args = _model_args(models_source, action, schema, kinds, imports, skip=None)
        return [TrlMethod("step", _doc(head, args, _properties(schema), returns), args, action)]
    discriminator = defs[action].get("discriminator", {})
    tag = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
    methods: list[TrlMethod] = []
    taken: set[str] = set()
    for member in members:
        schema = defs.get(member, {})
        name = _variant_name(member, _properties(schema).get(tag) if tag else None)
        while name in RESERVED or name in taken:
            name += "_"
        taken.add(name)
        head = _description(schema) or f"Take the {member} action."
        args = _model_args(models_source, member, schema, kinds, imports, skip=tag)
        doc = _doc(head, args, _properties(schema), returns)
        methods.append(TrlMethod(name, doc, args, member))
    return methods


def _model_args(
    source: str,
    model: str,
    schema: Any,
    kinds: dict[str, str],
    imports: set[str],
    skip: str | None,
) -> list[TrlArg]:
    signature = reset_signature(source, model, schema if isinstance(schema, dict) else {})
    params = [p for p in signature.params if not (p.wire == skip and p.default is not None)]
    return _args(params, _properties(schema), kinds, imports)  # a union's tag: its default


def _args(
    params: list[ResetParam], props: dict[str, Any], kinds: dict[str, str], imports: set[str]
) -> list[TrlArg]:
    """The adapter's arguments for `params`; one named like a name the body uses gets a `_`."""
    taken = {p.name for p in params}
    args: list[TrlArg] = []
    for param in params:
        name = param.name
        while name in BODY_NAMES or (name != param.name and name in taken):
            name += "_"
        taken.add(name)
        annotation, loose = _json_annotation(param.annotation, kinds, imports)
        passed = f"cast(Any, {name})" if loose else name
        default, sent_unless = param.default, param.sent_unless
        args.append(TrlArg(name, param.wire, annotation, default, sent_unless, passed, param.name))
    return args


def _json_annotation(text: str, kinds: dict[str, str], imports: set[str]) -> tuple[str, bool]:
    """`text` with every model name get_json_schema cannot read replaced by a JSON type.

    Enums stay (get_json_schema lists their values); a model with fields becomes
    `dict[str, Any]`, anything else `Any`. The flag says whether a name was replaced, so
    that the value is handed on as `Any` (the env's model validates it).
    """
    tree = ast.parse(text, mode="eval")
    loose = False

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            nonlocal loose
            kind = kinds.get(node.id)  # first: a model may be named `Literal` or `Any`
            if kind is None and (node.id in _JSON_NAMES or node.id in _TYPING_ALIASES):
                return node
            if kind == "enum":
                imports.add(node.id)
                return node
            loose = True
            if kind == "model":
                return ast.parse("dict[str, Any]", mode="eval").body
            return ast.Name("Any")

    body = Replace().visit(tree.body)
    if not isinstance(body, ast.expr):
        raise GenerationError(f"argument type {text!r} did not parse back")
    return ast.unparse(body), loose


def _class_kinds(tree: ast.Module) -> dict[str, str]:
    """Each class of models.py as `enum`, `model` (a JSON object) or `other` (a root model)."""
    kinds: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {ast.unparse(b).split("[")[0] for b in node.bases}
        if bases & {"Enum", "StrEnum", "IntEnum"}:
            kinds[node.name] = "enum"
        else:
            kinds[node.name] = "other" if "RootModel" in bases else "model"
    return kinds


def _wrap(text: str) -> str:
    """Each paragraph of `text` (generator-made, never schema text) in lines of 88."""
    return "\n\n".join(textwrap.fill(p, 88) for p in text.split("\n\n"))


def _variant_name(member: str, tag_prop: Any) -> str:
    """A union variant's method name: its tag's value (`move`), else its class name."""
    if isinstance(tag_prop, dict):
        value = tag_prop.get("const")
        if value is None and isinstance(tag_prop.get("enum"), list) and tag_prop["enum"]:
            value = tag_prop["enum"][0]
        if isinstance(value, str) and value:
            name = python_name(value)
            return "action" + name if name.startswith("_") else name
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", member.removesuffix("Action")).lower()
    return python_name(snake or member.lower())


def _properties(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _description(schema: Any) -> str:
    text = schema.get("description") if isinstance(schema, dict) else None
    return text.strip() if isinstance(text, str) else ""


def _inert(text: str) -> str:
    """Schema text that get_json_schema cannot read as docstring structure."""
    return _STRUCTURE.sub(lambda m: m.group(1) + " :", text)


def _doc(head: str, args: list[TrlArg], props: dict[str, Any], returns: str) -> str:
    """A Google-style docstring: the description, `Args:` (every argument), `Returns:`."""
    lines = [_inert(head)]
    if args:
        lines += ["", "Args:"]
        for arg in args:
            prop = props.get(arg.wire)
            prop = prop if isinstance(prop, dict) else {}
            text = " ".join(str(prop.get("description", "")).split())
            text = text or f"The {arg.wire!r} argument."
            if arg.default is not None and "default" in prop:
                text += f" Default: {json.dumps(prop['default'], ensure_ascii=False)}."
            lines.append(f"    {arg.name}: {_inert(text)}")
    lines += ["", "Returns:", f"    {returns}"]
    return "\n".join(lines)
