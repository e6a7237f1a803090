"""The committed schemas of one env, as jsonschema validators and a source for hypothesis.

The bundle `envgen generate` builds (every `$ref`, cross-file ones included, gathered into one
`$defs` table) is what the committed client was generated from, so it is what replies are
held to.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema

from generator.diff.model import Role
from generator.schema.loader import EnvInput, Layout, load_env, role_file
from generator.verify.textvalues import ecma_search

ROLES: tuple[Role, ...] = ("action", "observation", "state")


@dataclass(frozen=True)
class Problem:
    """One way a document breaks a schema: where, what, and the value found there."""

    pointer: str
    message: str
    value: Any


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and not ecma_search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _matched(patterns: Any, key: str) -> bool:
    return any(ecma_search(pattern, key) for pattern in patterns)


def _ecma_pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if ecma_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _ecma_additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    named, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = sorted(k for k in instance if k not in named and not _matched(patterns, k))
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        yield jsonschema.ValidationError(f"additional properties are not allowed: {extras!r}")


EcmaValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    {
        "pattern": _ecma_pattern,
        "patternProperties": _ecma_pattern_properties,
        "additionalProperties": _ecma_additional_properties,
    },
)
"""Draft 2020-12 with every regex (`pattern`, `patternProperties` and the keys
`additionalProperties` leaves to them) read as ECMA-262 (textvalues), as JSON Schema means it."""


def validator_for(document: Any) -> jsonschema.Validator:
    """A validator that also checks `format`, as the servers verify talks to do."""
    validator: jsonschema.Validator = EcmaValidator(
        document, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    return validator


def _pointer(path: Any) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


class CommittedSchemas:
    """Validators for the action, observation and state of one env."""

    def __init__(self, layout: Layout, name: str) -> None:
        self.env: EnvInput = load_env(layout, name)
        self.files = {
            role: layout.display(role_file(layout.schemas / name, role)) for role in ROLES
        }
        defs = self.env.bundle.defs
        self.documents = {
            role: {"$defs": defs, "$ref": f"#/$defs/{self.env.bundle.role_names[role]}"}
            for role in ROLES
        }
        self.reset_document: dict[str, Any] | None = None
        """The reset parameters schema (reset.schema.json), when the env has one."""
        if self.env.reset_class:
            self.reset_document = {"$defs": defs, "$ref": f"#/$defs/{self.env.reset_class}"}
            self.files["reset"] = layout.display(role_file(layout.schemas / name, "reset"))
        self._validators = {role: validator_for(doc) for role, doc in self.documents.items()}

    @property
    def name(self) -> str:
        return self.env.name

    def problems(self, role: Role, document: Any) -> list[Problem]:
        """Every way `document` breaks the committed `role` schema, in a stable order."""
        errors = sorted(
            self._validators[role].iter_errors(document),
            key=lambda e: (list(map(str, e.absolute_path)), e.message),
        )
        return [Problem(_pointer(e.absolute_path), e.message, e.instance) for e in errors]

    def declared(self, role: Role, document: Any) -> list[str]:
        """The property names the `role` schema declares for `document` (its union branch)."""
        defs = self.env.bundle.defs
        for branch in branches(self.documents[role], defs):
            props = branch.get("properties")
            if isinstance(props, dict) and _validator(branch, defs).is_valid(document):
                return sorted(props)
        return []

    def envelope_problems(self, reply: dict[str, Any]) -> list[Problem]:
        """A reset/step reply: the observation, a finite reward or null, a boolean done."""
        found: list[Problem] = []
        if "observation" not in reply:
            found.append(Problem("", "the reply has no 'observation'", reply))
        else:
            found += [
                Problem("/observation" + p.pointer, p.message, p.value)
                for p in self.problems("observation", reply["observation"])
            ]
        if not isinstance(reply.get("done"), bool):
            found.append(Problem("/done", "'done' must be true or false", reply.get("done")))
        return found


def reward_problem(reply: dict[str, Any]) -> Problem | None:
    """A reward that is not a finite number or null."""
    reward = reply.get("reward")
    if reward is None:
        return None
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        return Problem("/reward", "reward must be a number or null", reward)
    if not math.isfinite(reward):
        return Problem("/reward", "reward must be finite", reward)
    return None


def resolve(schema: Any, defs: dict[str, Any]) -> Any:
    """`schema` with its `$ref` chain (into `defs`) followed and merged."""
    for _ in range(32):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        name = schema["$ref"].rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**defs.get(name, {}), **rest}
    return schema


def branches(schema: Any, defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas a document may match: one, or each branch of a union."""
    schema = resolve(schema, defs)
    if not isinstance(schema, dict):
        return []
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list):
            return [b for member in schema[key] for b in branches(member, defs)]
    return [schema]


def _validator(schema: dict[str, Any], defs: dict[str, Any]) -> jsonschema.Validator:
    return validator_for({**schema, "$defs": defs})
