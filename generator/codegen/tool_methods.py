"""The generated `tools.py`: one typed method per tool, read from the tools' argument models.

Each tool's arguments model (made by datamodel-code-generator from its `inputSchema`) is read
back with `reset_params.reset_signature`, so a method's keyword arguments are exactly the
model's fields, required first, with the schema's literal defaults; the model still checks
every constraint before anything is sent. Names are mapped as fields are: a tool name that is
not an identifier, is a keyword, starts with `_` or clashes with the namespace's own names
gets a Python name (`format-number` -> `format_number`, `_x` -> `tool_x`, `call` ->
`call_`) and keeps its wire name; an argument keeps the name
its model field has (`fix_field_names` already mapped it) unless it is `self`. Each mapping
is listed in `renames`, which the module docstring and README report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from generator.codegen.datamodel import defined_names
from generator.codegen.reset_params import ResetParam, reset_signature
from generator.errors import GenerationError, SchemaError
from generator.schema.loader import EnvInput
from generator.schema.tools import ToolInput, python_name

TOOLBOX_NAMES = frozenset(
    {"call", "close", "last_step", "over_mcp", "over_openenv_mcp", "over_steps", "parse_call"}
)
"""Names the generated tools namespace already has: a tool cannot take them as they are."""
GENERIC_RESULT = "ToolResult"
WRAP_KEY = "result"  # as envgen_runtime.client.tools.WRAP_KEY


@dataclass(frozen=True)
class ToolMethod:
    """One tool as `tools.py.jinja` renders it."""

    wire: str
    method: str
    const: str  # the module constant holding its ToolSpec
    arguments: str  # the arguments model
    result: str  # the output schema's model (its wrapped value's type), or ToolResult
    result_model: str | None  # the output schema's model itself (the server checks with it)
    call: str  # the tool-call action model
    structured: bool
    wrapped: bool  # the output schema is FastMCP's {"result": value} wrapper (see wrapped_value)
    params: list[ResetParam]
    doc: str


def tool_context(env: EnvInput, models_source: str) -> dict[str, Any]:
    """Template context for tools.py (`tools` is [] for an env without tools)."""
    if not env.tools:
        return {"tools": []}
    if env.manifest.model_type != "pydantic":
        raise GenerationError(
            f"{env.name}: tool environments need model_type = 'pydantic' in env.toml"
        )
    taken: set[str] = set()
    methods: list[ToolMethod] = []
    renames: list[str] = []
    model_imports: set[str] = set()
    typing_imports: set[str] = set()
    for tool in env.tools:
        method = _method_name(tool, taken)
        taken.add(method)
        if method != tool.name:
            renames.append(f"tool {tool.name!r} is the method {method}()")
        arguments = env.tool_model(tool, "Arguments")
        schema = env.bundle.defs.get(arguments, {})
        signature = reset_signature(models_source, arguments, schema)
        params = _params(signature.params, tool, renames)
        model_imports |= {arguments, *signature.model_imports}
        typing_imports |= set(signature.typing_imports)
        structured = tool.output_pointer is not None
        result = env.tool_model(tool, "Result") if structured else GENERIC_RESULT
        value = wrapped_value(models_source, result, env.bundle.defs.get(result, {}))
        if value is not None:
            result = value.annotation
            model_imports |= set(value.model_imports)
            typing_imports |= set(value.typing_imports)
        elif structured:
            model_imports.add(result)
        methods.append(
            ToolMethod(
                wire=tool.name,
                method=method,
                const="_TOOL_" + method,
                arguments=arguments,
                result=result,
                result_model=env.tool_model(tool, "Result") if structured else None,
                call=arguments.removesuffix("Arguments") + "Call",
                structured=structured,
                wrapped=value is not None,
                params=params,
                doc=_doc(tool, arguments, params),
            )
        )
    prefix = env.manifest.class_prefix
    ours = [f"{prefix}Tools", f"Async{prefix}Tools", f"{prefix}ToolCall"]
    ours += [f"{prefix}PoolTools", f"Async{prefix}PoolTools"]
    _check_clashes(env, models_source, [*ours, *(m.call for m in methods)])
    return {
        "tools": methods,
        "tools_class": f"{prefix}Tools",
        "async_tools_class": f"Async{prefix}Tools",
        "tool_call_union": f"{prefix}ToolCall",
        "pool_tools_class": f"{prefix}PoolTools",
        "async_pool_tools_class": f"Async{prefix}PoolTools",
        "tool_renames": renames,
        "tool_model_imports": sorted(model_imports),
        "tool_typing_imports": sorted(typing_imports),
    }


@dataclass(frozen=True)
class ServerToolEntry:
    """One tool as `server_tools.py.jinja` renders it into server.py's `TOOLS`: the tool
    file's own texts (JSON, key order kept), so the server publishes the committed tool."""

    wire: str
    function: str
    source: str
    arguments: str
    result: str | None
    input_schema: str
    output_schema: str | None
    description: str | None
    title: str | None
    annotations: str | None


def server_tools(env: EnvInput, methods: list[ToolMethod]) -> list[ServerToolEntry]:
    """server.py's `TOOLS` entries, read from each committed tool file as it is (the
    bundle's copies have their `#` refs retargeted into the file)."""
    from generator.schema.jsonio import read_json

    out = []
    for tool, method in zip(env.tools, methods, strict=True):
        doc = read_json(tool.path, tool.display)

        def text(key: str, doc: dict[str, Any] = doc) -> str | None:
            value = doc.get(key)
            return None if value is None else json.dumps(value, ensure_ascii=False)

        out.append(
            ServerToolEntry(
                wire=tool.name,
                function=method.method,
                source=tool.display,
                arguments=method.arguments,
                result=method.result_model,
                input_schema=json.dumps(doc["inputSchema"], ensure_ascii=False),
                output_schema=text("outputSchema"),
                description=doc.get("description"),
                title=doc["title"] if isinstance(doc.get("title"), str) else None,
                annotations=text("annotations"),
            )
        )
    return out


@dataclass(frozen=True)
class WrappedValue:
    """The value inside FastMCP's wrapper: its type as Python source, and what that uses."""

    annotation: str
    model_imports: list[str]
    typing_imports: list[str]


def is_wrapped(schema: Any) -> bool:
    """Whether an output schema is FastMCP's wrapper of a non-object return.

    FastMCP 2/3 marks it ``x-fastmcp-wrap-result``; the ``mcp`` SDK's FastMCP does not, and
    writes the shape only: an object titled ``<function>Output`` whose one property, required,
    is ``result``.
    """
    if not isinstance(schema, dict):
        return False
    if schema.get("x-fastmcp-wrap-result") is True:
        return True
    props = schema.get("properties")
    title = schema.get("title")
    return (
        set(schema) <= {"type", "properties", "required", "title"}
        and schema.get("type") == "object"
        and isinstance(props, dict)
        and set(props) == {WRAP_KEY}
        and schema.get("required") == [WRAP_KEY]
        and isinstance(title, str)
        and title.endswith("Output")
    )


def wrapped_value(models_source: str, model: str, schema: Any) -> WrappedValue | None:
    """The wrapped value of a result model whose schema ``is_wrapped``, else None.

    Its type is the model's ``result`` field as `reset_signature` reads fields (constraints
    stripped: the method returns the value, typed; the model stays in models.py).
    """
    if model == GENERIC_RESULT or not is_wrapped(schema):
        return None
    signature = reset_signature(models_source, model, schema)
    for param in signature.params:
        if param.wire == WRAP_KEY:
            return WrappedValue(param.annotation, signature.model_imports, signature.typing_imports)
    return None


def tool_exports(context: dict[str, Any]) -> list[str]:
    """The names `tools.py` defines that the package exports."""
    if not context["tools"]:
        return []
    calls = [tool.call for tool in context["tools"]]
    union = context["tool_call_union"]
    pools = [context["pool_tools_class"], context["async_pool_tools_class"]]
    return [context["tools_class"], context["async_tools_class"], *pools, union, *calls]


def _check_clashes(env: EnvInput, models_source: str, names: list[str]) -> None:
    """tools.py's classes must not share a name with a model: the package exports both."""
    for name in names:
        if name in defined_names(models_source):
            message = (
                f"a schema type is named {name!r}, like a class tools.py defines; rename "
                "that $defs entry (or the tool), or set class_prefix in env.toml"
            )
            origin = env.bundle.origins.get(name)
            if origin is None:
                raise GenerationError(message)
            raise SchemaError(message, file=origin[0], pointer=origin[1])


def _method_name(tool: ToolInput, taken: set[str]) -> str:
    name = python_name(tool.name)
    if name.startswith("_"):  # the base class's own attributes are private: keep clear
        name = "tool" + name
    if name in TOOLBOX_NAMES:
        name += "_"
    if name in taken:
        raise SchemaError(
            f"tool {tool.name!r} maps to the Python name {name!r}, like another tool",
            file=tool.display,
            pointer="/name",
            hint="rename one of the tools",
        )
    return name


def _params(params: list[ResetParam], tool: ToolInput, renames: list[str]) -> list[ResetParam]:
    """The method's arguments; `self` (the method's own) becomes `self_`."""
    out: list[ResetParam] = []
    names = {p.name for p in params}
    for param in params:
        name = param.name
        if name == "self":
            name = "self_"
            while name in names:
                name += "_"
            param = ResetParam(
                name, param.wire, param.annotation, param.default, param.sent_unless, param.doc
            )
        if name != param.wire:
            renames.append(f"argument {param.wire!r} of tool {tool.name!r} is {name}")
        out.append(param)
    return out


def _doc(tool: ToolInput, arguments: str, params: list[ResetParam]) -> str:
    """The method's docstring text: the tool's description, then its arguments."""
    head = tool.description.strip() or f"Call the tool {tool.name!r}."
    listing = "\n".join(f"- {p.doc}" for p in params) or "(none)"
    return (
        f"{head}\n\nTool {tool.name!r}. Arguments ({arguments}), validated before anything\n"
        f"is sent; those left at their default are not sent:\n\n{listing}"
    )
