"""A tool environment's committed tools on the server side, and the checks around a call.

The generated ``server.py`` of a tool env holds ``TOOLS``: one ``ServerTool`` per
``schemas/<env>/tools/<tool>.json``, with the tool's server-side argument and result models
(made from the same schemas as the client's) and its schemas as the file holds them, so a
server publishes exactly the committed tools (and ``envgen pull`` writes the files back byte
for byte). ``tool_env.tool_server`` registers an author's plain functions as those tools on
FastMCP; the checks it runs live here, free of FastMCP:

- ``resolve_functions``, at start-up: one function per committed tool, no other, each taking
  exactly its arguments model's fields (a ``ToolMismatchError`` naming the tool otherwise);
- ``call_arguments``, per call: the arguments validated as the model, the client's
  ``EnvValidationError`` wording naming each failing argument;
- ``checked_result``, per call: the function's return checked against the output schema's
  model, wrapped as ``{"result": value}`` when the committed schema says so (FastMCP's
  ``x-fastmcp-wrap-result``: a number or text result), else the object itself.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pydantic
import pydantic_core

from ..core.errors import EnvValidationError, ValidationIssue, validation_error

WRAP_MARK = "x-fastmcp-wrap-result"
"""The output schema's mark that the result is a value wrapped as ``{"result": value}``."""

ToolFunctions = Mapping[str, Any] | Iterable[Any]
"""Tool implementations: wire name -> function, or functions named as the tools' Python names.
Typed loosely (a dict of differently typed functions is a `dict[str, function]` to mypy):
`resolve_functions` checks each at start-up."""


class ToolMismatchError(ValueError):
    """The implementations do not match the committed tools: one missing, one extra, or a
    function whose parameters are not the tool's arguments."""


@dataclass(frozen=True)
class ServerTool:
    """One committed tool, as the generated ``server.py`` holds it."""

    name: str
    """The wire name (MCP's), as the tool file has it."""
    function: str
    """Its Python name: the generated client method's, which an implementation may carry."""
    source: str
    """The tool file, repo-relative (``schemas/<env>/tools/<tool>.json``), for messages."""
    arguments: type[pydantic.BaseModel]
    result: type[pydantic.BaseModel] | None
    """The output schema's model; None when the tool has no output schema."""
    input_schema: str
    """The file's ``inputSchema`` as JSON text, key order kept: what ``tools/list`` publishes."""
    output_schema: str | None = None
    description: str | None = None
    title: str | None = None
    annotations: str | None = None
    """The file's ``annotations`` as JSON text, when it has some."""
    wrapped: bool = field(init=False)
    """Whether the output schema is FastMCP's wrapped value (``WRAP_MARK``)."""

    def __post_init__(self) -> None:
        schema = self.output_document()
        object.__setattr__(self, "wrapped", bool(schema and schema.get(WRAP_MARK) is True))

    def input_document(self) -> dict[str, Any]:
        """A fresh copy of the committed ``inputSchema``."""
        value: dict[str, Any] = json.loads(self.input_schema)
        return value

    def output_document(self) -> dict[str, Any] | None:
        """A fresh copy of the committed ``outputSchema``, or None."""
        if self.output_schema is None:
            return None
        value: dict[str, Any] = json.loads(self.output_schema)
        return value

    def annotations_document(self) -> dict[str, Any] | None:
        if self.annotations is None:
            return None
        value: dict[str, Any] = json.loads(self.annotations)
        return value


def resolve_functions(
    tools: Sequence[ServerTool], functions: ToolFunctions, *, env: str = ""
) -> dict[str, Callable[..., Any]]:
    """Each committed tool's function (wire name -> function), checked against the tools.

    ``functions`` is a mapping by wire name, or functions whose ``__name__`` is the tool's
    Python name (``format_number`` for ``format-number``) or its wire name. A tool with no
    function, a function for no tool, or a function whose parameters are not exactly the
    arguments model's fields is a ``ToolMismatchError`` naming the tool and its file.
    """
    where = f"{env}: " if env else ""
    by_name = {tool.name: tool for tool in tools}
    if isinstance(functions, Mapping):
        given = dict(functions)
    else:
        python = {tool.function: tool.name for tool in tools}
        given = {}
        for fn in functions:
            label = getattr(fn, "__name__", repr(fn))
            wire = python.get(label, label)
            if wire in given:
                raise ToolMismatchError(f"{where}two functions implement the tool {wire!r}")
            given[wire] = fn
    extra = sorted(set(given) - set(by_name))
    if extra:
        raise ToolMismatchError(
            f"{where}{extra[0]!r} is not one of the committed tools "
            f"({', '.join(sorted(by_name))}): add schemas' tools/{extra[0]}.json "
            "(or rename the function to its tool's Python name)"
        )
    missing = [tool for tool in tools if tool.name not in given]
    if missing:
        tool = missing[0]
        raise ToolMismatchError(
            f"{where}tool {tool.name!r} ({tool.source}) has no implementation: "
            f"define {tool.function}({', '.join(tool.arguments.model_fields)})"
        )
    for tool in tools:
        _check_parameters(tool, given[tool.name], where)
    return {tool.name: given[tool.name] for tool in tools}


def _check_parameters(tool: ServerTool, fn: Callable[..., Any], where: str) -> None:
    """The function takes the arguments model's fields by name, and nothing else."""
    if not callable(fn):
        raise ToolMismatchError(f"{where}the implementation of tool {tool.name!r} is not callable")
    fields = list(tool.arguments.model_fields)
    params = inspect.signature(fn).parameters.values()
    positional_only = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    variadic = [p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL]
    named = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    unknown = [name for name in named if name not in fields]
    absent = [name for name in fields if name not in named]
    problem = ""
    if positional_only or variadic:
        problem = f"takes {(positional_only + variadic)[0]!r} by position only"
    elif unknown:
        problem = f"takes {unknown[0]!r}, which is no argument of the tool"
    elif absent and not takes_any:
        problem = f"lacks the argument {absent[0]!r}"
    if problem:
        raise ToolMismatchError(
            f"{where}tool {tool.name!r} ({tool.source}): the function "
            f"{getattr(fn, '__name__', 'given')}() {problem}; its parameters must be "
            f"{tool.arguments.__name__}'s fields: {', '.join(fields) or '(none)'}"
        )


def call_arguments(
    tool: ServerTool, arguments: Mapping[str, Any] | None, *, extras: bool = False
) -> dict[str, Any]:
    """The keyword arguments of one call (by the model's field names): ``arguments``, keyed
    by the schema's names, validated as the tool's arguments model (defaults filled in), or
    an ``EnvValidationError`` naming each failing argument in the client's words (``<tool>
    arguments failed validation``). With ``extras``, arguments the schema allows but does
    not name (no ``additionalProperties: false``) are passed too, for a ``**kwargs``."""
    role = f"{tool.name} arguments"
    given = dict(arguments or {})
    # By the schema's names only, as published (`from`, not the model's `from_`), and as JSON
    # in pydantic's strict mode, which types values as JSON Schema does: "1.5" is no number
    # (the client's lax check turns a caller's "1.5" into 1.5 before sending). Values that
    # are not JSON (an in-process caller's) are validated as Python values.
    try:
        text = json.dumps(given, allow_nan=False)
    except (TypeError, ValueError):
        text = None
    try:
        if text is None:
            model = tool.arguments.model_validate(given, by_alias=True, by_name=False)
        else:
            model = tool.arguments.model_validate_json(
                text, strict=True, by_alias=True, by_name=False
            )
    except pydantic.ValidationError as exc:
        raise validation_error(role, exc) from None
    values = {name: getattr(model, name) for name in type(model).model_fields}
    if extras and model.model_extra:
        values.update(model.model_extra)
    return values


def takes_extras(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` has a ``**kwargs``, which receives the arguments no field names."""
    params = inspect.signature(fn).parameters.values()
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def checked_result(tool: ServerTool, value: Any) -> Any:
    """What the tool sends for the function's return ``value``, as JSON data: the value
    checked against the output schema's model (``{"result": value}`` when the schema is
    FastMCP's wrapped one, the object itself otherwise) and dumped by it; ``value`` as it is
    when the tool has no output schema. An ``EnvValidationError`` (``<tool> result``) when
    the output schema refuses it."""
    if tool.result is None:
        return value
    role = f"{tool.name} result"
    try:
        data = pydantic_core.to_jsonable_python(value, by_alias=True)
    except pydantic_core.PydanticSerializationError as exc:
        issue = ValidationIssue(loc=(), message=f"not JSON data: {exc}", type="serialization")
        raise EnvValidationError(role, [issue]) from None
    if tool.wrapped:
        data = {"result": data}
    elif not isinstance(data, dict):
        issue = ValidationIssue(
            loc=(),
            message=f"the output schema is an object, and the function returned "
            f"{type(value).__name__}",
            type="model_type",
        )
        raise EnvValidationError(role, [issue])
    try:
        checked = tool.result.model_validate(data)
    except pydantic.ValidationError as exc:
        raise validation_error(role, exc) from None
    dumped = checked.model_dump(mode="json", by_alias=True)
    return dumped["result"] if tool.wrapped else dumped
