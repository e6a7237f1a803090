"""A generated models module read as its public API: classes, attributes, aliases, users.

The models are made by the same generator call `envgen generate` uses, so class names,
attribute names (`class` -> `class_`, `time-left` -> `time_left`, collisions numbered) and
types are exactly what users import, not a guess. A tool env's tool methods are read from
the context `tools.py` is rendered from (`codegen/tool_methods`), so a method's name and
return type are the generated ones. `diff/codeapi` compares two of these.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from generator.codegen.models import generate_models
from generator.codegen.tool_methods import tool_context
from generator.diff.model import ROLES, Role
from generator.diff.pytypes import PyType, parse
from generator.diff.sides import Side

_SKIP = {"model_config", "__pydantic_config__"}


@dataclass(frozen=True)
class Method:
    """One generated tool method (`env.tools.<name>`), keyed in `Api.methods` by wire name."""

    name: str
    arguments: str  # its arguments model
    result: str  # its return type: the result model, or ToolResult
    file: str  # the tool file it comes from


@dataclass(frozen=True)
class Attr:
    name: str
    wire: str
    annotation: str
    type: PyType
    required: bool


@dataclass
class Api:
    """Public classes and aliases of a generated models module, and which roles use them."""

    classes: dict[str, dict[str, Attr]] = field(default_factory=dict)
    aliases: dict[str, tuple[str, PyType]] = field(default_factory=dict)
    uses: dict[str, set[Role]] = field(default_factory=dict)
    role_classes: dict[Role, str] = field(default_factory=dict)
    mentions: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # Classes a tool's arguments (built: "action") or result (read: "observation") reach.
    tool_uses: dict[str, set[Role]] = field(default_factory=dict)
    methods: dict[str, Method] = field(default_factory=dict)

    def names(self) -> set[str]:
        return set(self.classes) | set(self.aliases)

    def shape(self, name: str) -> str:
        if name in self.aliases:
            return "alias:" + self.aliases[name][0]
        attrs = self.classes[name]
        return "class:" + ";".join(f"{w}={a.annotation}" for w, a in sorted(attrs.items()))


def api_of(side: Side) -> Api:
    """Generate `side`'s models in memory and read their API; GenerationError on failure."""
    source = generate_models(side.codegen, header="")
    tree = _without_import_aliases(ast.parse(source))
    api = Api()
    refs: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            attrs = _attributes(node)
            api.classes[node.name] = attrs
            refs[node.name] = names_in([a.annotation for a in attrs.values()])
        alias = _alias(node)
        if alias is not None:
            name, expr = alias
            text = ast.unparse(expr)
            api.aliases[name] = (text, parse(expr))
            refs[name] = names_in([text])
    for hidden in side.hidden:
        api.classes.pop(hidden, None)
        api.aliases.pop(hidden, None)
    for owner, attrs in api.classes.items():
        for attr in attrs.values():
            for name in names_in([attr.annotation]):
                api.mentions.setdefault(name, []).append((owner, attr.wire))
    for role in ROLES:
        root = side.codegen.bundle.role_names[role]
        if root in side.hidden:
            continue
        api.role_classes[role] = root
        _mark(api.uses, refs, root, role)
    _read_tools(side, source, api, refs)
    return api


def _mark(uses: dict[str, set[Role]], refs: dict[str, set[str]], root: str, role: Role) -> None:
    """`role` on `root` and every class its annotations reach."""
    stack, seen = [root], set()
    while stack:
        name = stack.pop()
        if name in seen or name not in refs:
            continue
        seen.add(name)
        uses.setdefault(name, set()).add(role)
        stack.extend(refs[name])


def _read_tools(side: Side, source: str, api: Api, refs: dict[str, set[str]]) -> None:
    """A tool env's methods, and which classes its arguments and results reach."""
    if not side.tools:
        return
    files = {tool.name: tool.display for tool in side.tools}
    for method in tool_context(side.codegen, source)["tools"]:
        api.methods[method.wire] = Method(
            method.method, method.arguments, method.result, files[method.wire]
        )
        _mark(api.tool_uses, refs, method.arguments, "action")
        if method.structured:
            _mark(api.tool_uses, refs, method.result, "observation")


def _without_import_aliases(tree: ast.Module) -> ast.Module:
    """The module with each name imported ``as`` another read as the name it binds.

    The generator imports ``Annotated``, ``Field`` or ``int`` under another name when a field
    would shadow them (``Annotated_aliased``); read through the binding, the same type reads
    the same in every version, whichever fields sit beside it.
    """
    bound = {
        alias.asname: alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname and alias.asname != alias.name
    }

    class Rebind(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            return ast.Name(bound[node.id], node.ctx) if node.id in bound else node

    return Rebind().visit(tree) if bound else tree


def _attributes(node: ast.ClassDef) -> dict[str, Attr]:
    attrs: dict[str, Attr] = {}
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        name = item.target.id
        if name in _SKIP or ast.unparse(item.annotation).startswith("ClassVar"):
            continue
        wire = _alias_of(item.annotation) or _alias_of(item.value) or name
        attrs[wire] = Attr(
            name=name,
            wire=wire,
            annotation=ast.unparse(_strip_annotated(item.annotation)),
            type=parse(item.annotation),
            required=_required(item.value),
        )
    return attrs


def _strip_annotated(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Annotated"):
        inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return _strip_annotated(inner)
    return node


def _alias_of(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and ast.unparse(sub.func).endswith("Field"):
            for keyword in sub.keywords:
                if keyword.arg in ("alias", "validation_alias") and isinstance(
                    keyword.value, ast.Constant
                ):
                    return str(keyword.value.value)
    return None


def _required(value: ast.expr | None) -> bool:
    if value is None:
        return True
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("Field"):
        has_default = bool(value.args) or any(
            k.arg in ("default", "default_factory") for k in value.keywords
        )
        return not has_default
    return False


def _alias(node: ast.stmt) -> tuple[str, ast.expr] | None:
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func).endswith("TypeAliasType")
        and len(node.value.args) >= 2
    ):
        return node.targets[0].id, node.value.args[1]
    if (
        isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and ast.unparse(node.annotation).endswith("TypeAlias")
        and node.value is not None
    ):
        return node.target.id, node.value
    return None


def names_in(texts: list[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            continue
        found |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return found
