"""Rendering one environment's generated package from the Jinja templates in `templates/`.

Schema and manifest text reaches the output only through filters that make it inert: Python
literals (`pyrepr`), TOML strings (`toml`), Markdown that renders as itself (`cell` mid-line,
`paragraph` at a line's start, `code_cell` for code spans in tables) and comment-safe text
(`comment`). Nothing from a schema is ever used as template source.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from envgen_runtime import API_VERSION
from envgen_runtime.compat import compatible_range

from generator import __version__
from generator.codegen.datamodel import defined_names
from generator.codegen.field_tables import sections
from generator.codegen.formatting import format_python
from generator.codegen.models import EnvModels, generate_env_models
from generator.codegen.render_constants import PACKAGE_INIT, TEMPLATES_DIR
from generator.codegen.reset_params import reset_context
from generator.codegen.server_models import ServerModels
from generator.codegen.template_cache import TemplateCache, cache_key
from generator.codegen.tool_methods import server_tools, tool_context, tool_exports
from generator.codegen.trl_methods import trl_context
from generator.errors import GenerationError, SchemaError
from generator.schema.loader import EnvInput
from generator.schema.published import schemas_json

PACKAGE_FILES = (
    "__init__.py",
    "_runtime.py",
    "client.py",
    "models.py",
    "py.typed",
    "schemas.json",
    "trl.py",
)
"""The files an installed env package holds; README.md and pyproject.toml describe it.
`schemas.json` (the committed schemas and their hash) is read by the client at connect."""
OUTPUT_FILES = (*PACKAGE_FILES, "server.py", "README.md", "pyproject.toml")
SERVER_NAMES = frozenset({"BACKEND", "Sequence", "TOOLS", "main", "serve"})
"""What server.py defines or imports beside the models (`server_main.py.jinja`)."""
"""`server.py` (server-side models, needing openenv) sits beside the package, not in its wheel."""
INSTALLED_NAMESPACE = "envgen_clients"
"""Installed env packages import as `envgen_clients.<env>` (a PEP 420 namespace)."""

# What Markdown (CommonMark, GitHub's tables, strikethrough, math and autolinks) acts on
# mid-line: `\\`, emphasis `*`, code `` ` ``, cell borders `|`, `~~`, `$`; `_` only at a
# word's edge (intraword `_` is literal); `<` only where it could open a tag, comment or
# autolink; `]` only where it could close a link (`](`, `][`, `]:`); `&` only where it starts
# an entity; `:` only in `://`, `.` after `www`, `@` inside an address (autolink triggers).
_MARKDOWN_ACTIVE = re.compile(
    r"[\\`*|~$]"
    r"|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])"
    r"|<(?=[A-Za-z/!?])|\](?=[(\[:])"
    r"|&(?=#?[0-9A-Za-z]+;)"
    r"|:(?=//)|(?<=\bwww)\.|(?<=[0-9A-Za-z])@(?=[0-9A-Za-z])"
)
# What opens a block when it starts a line: heading, quote, list item, rule, setext line,
# link reference definition.
_LINE_START = re.compile(r"^(\d*)([-+=#>.)\[])")
_HEADING_END = re.compile(r"(?<=\s)(#+)$")  # would close an ATX heading
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def pyrepr(value: Any) -> str:
    """A Python literal for `value`; strings can never escape their quotes."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} has no Python literal")
    if isinstance(value, str | int | float | bool | type(None)):
        return repr(value)
    if isinstance(value, tuple | list):
        inner = ", ".join(pyrepr(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        return f"[{inner}]"
    raise TypeError(f"pyrepr cannot render {type(value).__name__}")


def docstring(value: Any) -> str:
    """A triple-quoted docstring holding `value` verbatim; quotes and backslashes escaped."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    text = "".join(c if c in "\n\t" or c.isprintable() else repr(c)[1:-1] for c in text)
    return '"""' + text + ("\n" if "\n" in text else "") + '"""'


def toml(value: Any) -> str:
    """A TOML basic string holding `value`: quotes, backslashes and control characters escaped."""
    out = []
    for char in str(value):
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\uFFFD")  # a lone surrogate cannot be written as UTF-8
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def distribution_name(env_name: str) -> str:
    """`echo_env` -> `echo-env-client`: the installable package's normalized name."""
    return env_name.replace("_", "-") + "-client"


def cell(value: Any) -> str:
    """`value` as one line of inert Markdown that renders as itself, mid-line or in a cell.

    Only what Markdown would act on is backslash-escaped (GitHub-flavoured Markdown reads
    each `\\x` as a literal `x`), so the raw file stays readable: `grid_env` and `agent's`
    are written as they are, `<script>` as `\\<script>`. Whitespace runs, line breaks
    included, become one space: a cell holds one line.
    """
    text = " ".join(_CONTROL.sub(" ", str(value)).split())
    text = _MARKDOWN_ACTIVE.sub(lambda m: "\\" + m.group(), text)
    return _HEADING_END.sub(lambda m: "\\" + m.group(1), text)


def paragraph(value: Any) -> str:
    """`cell`, for text that starts a line: what would open a block there is escaped too."""
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), cell(value), count=1)


def code_cell(value: Any) -> str:
    """`value` as a Markdown code span inside a table cell: verbatim, one line.

    The backtick fence is longer than any backtick run inside, and GitHub's tables read
    `\\|` as a `|` even inside a code span, so the text can end neither the span nor the cell.
    """
    text = " ".join(_CONTROL.sub(" ", str(value)).split()) or " "
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text[0] in "` " or text[-1] in "` ":
        text = f" {text} "
    return fence + text.replace("|", "\\|") + fence


def comment(value: Any) -> str:
    """Text safe inside an HTML comment."""
    return str(value).replace("--", "- -").replace(">", "&gt;")


_SETTINGS: dict[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}
"""The Jinja environment's settings (they decide the templates' compiled code too)."""


@cache
def _environment(templates_dir: Path, generated: Path | None) -> jinja2.Environment:
    """The templates' environment; their compiled code is cached under `generated` if given."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        bytecode_cache=(
            None
            if generated is None
            else TemplateCache(generated, cache_key(templates_dir, _SETTINGS))
        ),
        **_SETTINGS,
    )
    env.filters.update(
        pyrepr=pyrepr,
        docstring=docstring,
        toml=toml,
        cell=cell,
        paragraph=paragraph,
        code_cell=code_cell,
        comment=comment,
    )
    return env


def _load_all(jinja: jinja2.Environment) -> None:
    """Load every template now, not on first use (see `render_env`)."""
    for name in jinja.list_templates(extensions=["jinja"]):
        jinja.get_template(name)


PendingModels = Callable[[], EnvModels]
"""Waits for an env's models and returns them."""
ModelMaker = Callable[[EnvInput, str, str], PendingModels]
"""Starts making an env's models given their two file headers (`generate_env_models`'s
arguments); what it returns waits for them."""


def _made_here(env: EnvInput, client_header: str, server_header: str) -> PendingModels:
    return lambda: generate_env_models(env, client_header, server_header)


def render_env(
    env: EnvInput,
    templates_dir: Path = TEMPLATES_DIR,
    make_models: ModelMaker | None = None,
    generated: Path | None = None,
) -> dict[str, str]:
    """Every file of `generated/<env>/`, unformatted, keyed by file name.

    `make_models` (default: `generate_env_models`, here) lets the models be made in another
    process; meanwhile this one loads every template. `generated` is the output folder
    whose cache keeps the templates' compiled code between runs.
    """
    jinja = _environment(templates_dir, generated)
    names = {
        "client": env.client_name,
        "async_client": f"Async{env.client_name}",
        "action": env.class_name("action"),
        "observation": env.class_name("observation"),
        "state": env.class_name("state"),
    }
    description = env.manifest.description.strip()
    summary = f"Typed client for the {env.name} environment, version {env.manifest.version}."
    context: dict[str, Any] = {
        "env": env,
        "manifest": env.manifest,
        "generator_version": __version__,
        "runtime_api": API_VERSION,
        "runtime_range": compatible_range(API_VERSION),
        "distribution": distribution_name(env.name),
        "import_name": f"{INSTALLED_NAMESPACE}.{env.name}",
        "package_files": list(PACKAGE_FILES),
        "summary": summary,
        "docstring": summary + ("\n\n" + description if description else ""),
        "async_docstring": (
            f"Asyncio client for the {env.name} environment, version {env.manifest.version}."
            f"\n\nThe methods of {names['client']}, as coroutines."
        ),
        "sections": sections(env),
        **names,
    }
    if env.tools:
        context["package_files"] = sorted([*PACKAGE_FILES, "tools.py"])

    def render(template: str) -> str:
        return jinja.get_template(template).render(context)

    pending = (make_models or _made_here)(
        env,
        render("models_header.py.jinja").rstrip("\n"),
        render("server.py.jinja").rstrip("\n"),
    )
    if make_models is not None:
        _load_all(jinja)
    made = pending()
    models = made.client
    model_names = defined_names(models)
    for client in (names["client"], names["async_client"]):
        if client in model_names:
            message = (
                f"a schema type is named {client!r}, like a client class; rename that "
                "$defs entry or set class_prefix in env.toml"
            )
            origin = env.bundle.origins.get(client)
            if origin is None:
                raise GenerationError(message)
            raise SchemaError(message, file=origin[0], pointer=origin[1])
    context["model_names"] = model_names
    context.update(reset_context(env, models))
    context.update(tool_context(env, models))
    context["tool_exports"] = tool_exports(context)
    context["tools_doc"] = _tools_doc(env, context)
    context.update(trl_context(env, models, context))
    context["exports"] = sorted(
        ["RUNTIME_API", names["client"], names["async_client"], *model_names]
        + context["tool_exports"]
    )
    files = {
        "__init__.py": render("__init__.py.jinja"),
        "_runtime.py": render("_runtime.py.jinja"),
        "client.py": render("client.py.jinja"),
        "models.py": models,
        "server.py": _server_module(env, jinja, context, made.server),
        "py.typed": render("py.typed.jinja"),
        "schemas.json": schemas_json(env),
        "README.md": render("README.md.jinja"),
        "pyproject.toml": render("pyproject.toml.jinja"),
    }
    if env.tools:
        files["tools.py"] = render("tools.py.jinja")
    files["trl.py"] = render("trl.py.jinja")
    return files


def _tools_doc(env: EnvInput, context: dict[str, Any]) -> str:
    """tools.py's module docstring: what it holds, and every name mapped for Python."""
    text = (
        f"Typed tool calls for the {env.name} environment: one method per tool, "
        "and the tool calls as data."
    )
    renames = context.get("tool_renames") or []
    if renames:
        text += "\n\nNames mapped for Python (the wire keeps the schema's):\n\n"
        text += "\n".join(f"- {line}" for line in renames)
    return text


def _server_module(
    env: EnvInput, jinja: jinja2.Environment, context: dict[str, Any], models: ServerModels
) -> str:
    """`server.py`: the server-side models, the union action class when there is one, and
    `main`/`serve` on env.toml's backend (`server_main.py.jinja`)."""
    clash = sorted(set(defined_names(models.source)) & SERVER_NAMES)
    if clash:
        raise GenerationError(
            f"a schema type is named {clash[0]!r}, which server.py defines beside the "
            "models; rename that $defs entry"
        )
    imports = ["from collections.abc import Sequence", "import envgen_runtime.server as _server"]
    tail = ""
    if models.union_alias is not None:
        imports.append("from envgen_runtime.server import UnionAction")
        action_doc = env.bundle.defs[env.class_name("action")].get("description")
        tail = jinja.get_template("server_union.py.jinja").render(
            {
                **context,
                "union_alias": models.union_alias,
                "action_doc": action_doc if isinstance(action_doc, str) else "",
            }
        )
    if env.tools:
        tools = server_tools(env, context["tools"])
        tail += jinja.get_template("server_tools.py.jinja").render({**context, "entries": tools})
    future = "from __future__ import annotations\n"
    source = models.source.replace(future, future + "\n" + "\n".join(imports) + "\n", 1)
    serving = jinja.get_template("server_main.py.jinja").render(context)
    return source.rstrip("\n") + "\n" + tail.rstrip("\n") + "\n" + serving


def render_envs(envs: list[EnvInput], templates_dir: Path = TEMPLATES_DIR) -> dict[str, str]:
    """Every generated file of `envs`, keyed `<env>/<file>`, formatted in one ruff run."""
    return finish_files({env.name: render_env(env, templates_dir) for env in envs})


def finish_files(rendered: dict[str, dict[str, str]]) -> dict[str, str]:
    """`generated/`'s files from each env's unformatted files (by env name, in order)."""
    files: dict[str, str] = {"__init__.py": PACKAGE_INIT}
    for env_name, env_files in rendered.items():
        for name, text in env_files.items():
            files[f"{env_name}/{name}"] = text
    files = format_python(files)
    return {path: text.rstrip("\n") + "\n" for path, text in files.items()}
