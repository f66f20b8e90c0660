"""Declared JSON-schema policies: documented ways an engine reads a schema differently.

xgrammar documents three defaults (measured on 0.2.8 too): an object whose schema leaves
`additionalProperties` unspecified takes no other properties (JSON Schema allows any);
`oneOf` is read as `anyOf`; `minLength`/`maxLength` are ignored beside a `pattern`. An
engine declares the ones it follows in `Engine.policies.json_schema`. Each is a rule
that must explain the *whole* failure of an instance check, or the failure stays a bug:

- `additional-properties-false` explains a false rejection iff the instance with every
  undeclared property removed (from objects whose schema leaves `additionalProperties`
  unspecified) is still valid and the engine accepts it;
- `oneof-as-anyof` explains a false acceptance or an invalid output iff the text is
  valid against the schema with every `oneOf` read as `anyOf`;
- `length-ignored-with-pattern` likewise, against the schema without `minLength` and
  `maxLength` wherever a `pattern` stands beside them.
A failure both rewrites are needed for is explained by the two together.
Policy failures are counted apart from bugs (`InstanceCounts.policy`), beside what
MaskBench would count (it counts them as errors).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

ADDITIONAL = "additional-properties-false"
ONEOF = "oneof-as-anyof"
LENGTH = "length-ignored-with-pattern"
KNOWN = (ADDITIONAL, ONEOF, LENGTH)


def _rewrite(schema: Any, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """`schema` with `edit` applied to every subschema (dicts, lists walked through)."""
    if isinstance(schema, dict):
        return edit({k: _rewrite(v, edit) for k, v in schema.items()})
    if isinstance(schema, list):
        return [_rewrite(v, edit) for v in schema]
    return schema


def oneof_as_anyof(schema: Any) -> Any:
    def edit(node: dict[str, Any]) -> dict[str, Any]:
        if "oneOf" in node and "anyOf" not in node:
            node = dict(node)
            node["anyOf"] = node.pop("oneOf")
        return node

    return _rewrite(schema, edit)


def lengths_beside_pattern_dropped(schema: Any) -> Any:
    def edit(node: dict[str, Any]) -> dict[str, Any]:
        if "pattern" in node:
            return {k: v for k, v in node.items() if k not in ("minLength", "maxLength")}
        return node

    return _rewrite(schema, edit)


def _resolve(schema: Any, root: Any) -> Any:
    """A local `$ref` followed (one level at a time, at most 20)."""
    for _ in range(20):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        node = root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        schema = node
    return schema


def undeclared_removed(schema: Any, value: Any, root: Any) -> Any:
    """`value` without the properties its schema does not declare, in every object whose
    schema leaves `additionalProperties` unspecified (through `properties`, `items`,
    `prefixItems` and local `$ref`s; composed schemas are left as they are)."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        patterns = [re.compile(p) for p in (schema.get("patternProperties") or {})]
        keep = {}
        for key, item in value.items():
            declared = key in props or any(p.search(key) for p in patterns)
            if declared:
                keep[key] = undeclared_removed(props.get(key, True), item, root)
            elif "additionalProperties" in schema or "properties" not in schema:
                keep[key] = item
        return keep
    if isinstance(value, list):
        prefix = schema.get("prefixItems") or []
        items = schema.get("items", True)
        return [
            undeclared_removed(prefix[i] if i < len(prefix) else items, v, root)
            for i, v in enumerate(value)
        ]
    return value


def explain_rejection(
    declared: tuple[str, ...],
    schema: Any,
    value: Any,
    accepts: Callable[[Any], bool],
    is_valid: Callable[[Any, Any], bool],
) -> str | None:
    """The policy that explains the engine refusing valid `value`, or None."""
    if ADDITIONAL not in declared:
        return None
    try:
        stripped = undeclared_removed(schema, value, schema)
    except re.error:
        return None
    if stripped != value and is_valid(schema, stripped) and accepts(stripped):
        return ADDITIONAL
    return None


def explain_acceptance(
    declared: tuple[str, ...], schema: Any, value: Any, is_valid: Callable[[Any, Any], bool]
) -> str | None:
    """The policy (or two, joined by `+`) under which invalid `value`, which the engine
    accepted or produced, is valid; None when none explains it."""
    readings = {ONEOF: oneof_as_anyof, LENGTH: lengths_beside_pattern_dropped}
    mine = [name for name in readings if name in declared]
    for name in mine:
        if is_valid(readings[name](schema), value):
            return name
    if len(mine) == 2:
        both = lengths_beside_pattern_dropped(oneof_as_anyof(schema))
        if is_valid(both, value):
            return "+".join(mine)
    return None


def parse(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is JSON, else (False, None)."""
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None
