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

lm-format-enforcer and Formatron document more (their adapters' module docs):
- `keys-in-schema-order` (Formatron, and the regexes of both schema converters): object
  keys come in the order of the schema's `properties` (then `required`); explains a
  false rejection iff the instance with every object's declared keys put in that order
  (others after) is accepted;
- `array-items-at-most-20` (lm-format-enforcer, `MAX_JSON_ARRAY_LENGTH`): an array whose
  schema sets no `maxItems` holds at most 20 items; explains a false rejection iff the
  instance with such arrays cut to 20 items is still valid and accepted;
- `whitespace-runs-at-most-12` (lm-format-enforcer, `MAX_CONSECUTIVE_WHITESPACES`): at
  most 12 whitespace characters in a row between tokens; explains a false rejection iff
  the same text with every such run outside strings cut to 12 is accepted.
A false rejection that needs several of an engine's rewrites is explained by them all
together (applied in the order above, the removal of undeclared keys first).

Our converter's dialect has one bound of its own, which every engine fed its language
declares while it is the converter in use (`harness.diff.run.service`):
- `unconstrained-values-at-most-any-depth`: a value the schema leaves unconstrained nests
  at most `converter.OURS_ANY_DEPTH` arrays and objects; explains a false rejection iff
  the instance (after the engine's value rewrites, if it needs them) is refused by that
  language too (the engine followed it) and accepted by the same language read with
  values nesting as deep as the instance does (`converter.deeper_language`).
Policy failures are counted apart from bugs (`InstanceCounts.policy`), beside what
MaskBench would count (it counts them as errors).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from harness.corpora.schema_order import schema_order
from harness.engines.base import SchemaPolicy
from harness.engines.lmformatenforcer import MAX_CONSECUTIVE_WHITESPACES, MAX_JSON_ARRAY_LENGTH

# Every name, for tests that check what engines declare.
KNOWN = tuple(SchemaPolicy)
MAX_ITEMS = MAX_JSON_ARRAY_LENGTH
MAX_WHITESPACE_RUN = MAX_CONSECUTIVE_WHITESPACES


def rewrite_subschemas(schema: Any, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """`schema` with `edit` applied to every subschema (dicts, lists walked through)."""
    if isinstance(schema, dict):
        return edit({k: rewrite_subschemas(v, edit) for k, v in schema.items()})
    if isinstance(schema, list):
        return [rewrite_subschemas(v, edit) for v in schema]
    return schema


def oneof_as_anyof(schema: Any) -> Any:
    def edit(node: dict[str, Any]) -> dict[str, Any]:
        if "oneOf" in node and "anyOf" not in node:
            node = dict(node)
            node["anyOf"] = node.pop("oneOf")
        return node

    return rewrite_subschemas(schema, edit)


def lengths_beside_pattern_dropped(schema: Any) -> Any:
    def edit(node: dict[str, Any]) -> dict[str, Any]:
        if "pattern" in node:
            return {k: v for k, v in node.items() if k not in ("minLength", "maxLength")}
        return node

    return rewrite_subschemas(schema, edit)


def undeclared_forbidden(schema: Any) -> Any:
    """`schema` with `additionalProperties: false` in every object schema that lists
    `properties` and leaves `additionalProperties` unspecified (how
    `additional-properties-false` reads it)."""

    def edit(node: dict[str, Any]) -> dict[str, Any]:
        if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
            return {**node, "additionalProperties": False}
        return node

    return rewrite_subschemas(schema, edit)


_SCHEMA_REWRITES: dict[SchemaPolicy, Callable[[Any], Any]] = {
    SchemaPolicy.ADDITIONAL_PROPERTIES_FALSE: undeclared_forbidden,
    SchemaPolicy.ONEOF_AS_ANYOF: oneof_as_anyof,
    SchemaPolicy.LENGTH_IGNORED_WITH_PATTERN: lengths_beside_pattern_dropped,
}


def as_read_by(declared: tuple[SchemaPolicy, ...], schema: Any) -> Any:
    """`schema` as an engine declaring the policies `declared` reads it: each policy that
    is a rewrite of the schema itself applied (the others, key order and caps, are
    readings of instances and leave it as it is)."""
    for name, rewrite in _SCHEMA_REWRITES.items():
        if name in declared:
            schema = rewrite(schema)
    return schema


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


def _walk_value(
    schema: Any, value: Any, root: Any, edit: Callable[[dict[str, Any], Any], Any]
) -> Any:
    """`value` rebuilt bottom-up, `edit(subschema, node)` applied to every object and
    array with the subschema it stands under (through `properties`, `items`,
    `prefixItems`, `additionalProperties` and local `$ref`s)."""
    schema = _resolve(schema, root)
    node = schema if isinstance(schema, dict) else {}
    if isinstance(value, dict):
        props = node.get("properties") or {}
        other = node.get("additionalProperties", True)
        value = {k: _walk_value(props.get(k, other), v, root, edit) for k, v in value.items()}
        return edit(node, value)
    if isinstance(value, list):
        prefix = node.get("prefixItems") or []
        items = node.get("items", True)
        value = [
            _walk_value(prefix[i] if i < len(prefix) else items, v, root, edit)
            for i, v in enumerate(value)
        ]
        return edit(node, value)
    return value


def keys_in_schema_order(schema: Any, value: Any, root: Any) -> Any:
    """`value` with every object's declared keys first, in schema order (the one
    ordering, `harness.corpora.schema_order`)."""
    return schema_order(value, schema, root)


def arrays_capped(schema: Any, value: Any, root: Any) -> Any:
    """`value` with every array whose schema sets no `maxItems` cut to MAX_ITEMS."""

    def edit(node: dict[str, Any], item: Any) -> Any:
        if isinstance(item, list) and "maxItems" not in node:
            return item[:MAX_ITEMS]
        return item

    return _walk_value(schema, value, root, edit)


_JSON_PIECE = re.compile(r'"(?:[^"\\]|\\.)*"|[ \t\n\r]+|[^" \t\n\r]+')


def whitespace_capped(text: str) -> str:
    """JSON `text` with every whitespace run outside strings cut to MAX_WHITESPACE_RUN."""
    return "".join(
        piece[:MAX_WHITESPACE_RUN] if piece[:1] in " \t\n\r" else piece
        for piece in _JSON_PIECE.findall(text)
    )


_VALUE_REWRITES: dict[SchemaPolicy, Callable[[Any, Any, Any], Any]] = {
    SchemaPolicy.ADDITIONAL_PROPERTIES_FALSE: undeclared_removed,
    SchemaPolicy.ARRAY_ITEMS_AT_MOST_20: arrays_capped,
    SchemaPolicy.KEYS_IN_SCHEMA_ORDER: keys_in_schema_order,
}


def nesting(value: Any) -> int:
    """How many arrays and objects deep `value` nests (a scalar 0, `[]` 1); without
    recursion, so an instance thousands of levels deep is measured too."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth + 1)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return deepest


def explain_rejection(
    declared: tuple[SchemaPolicy, ...],
    schema: Any,
    value: Any,
    accepts: Callable[[Any], bool],
    is_valid: Callable[[Any, Any], bool],
    text: str | None = None,
    accepts_text: Callable[[str], bool] | None = None,
    accepts_deeper: Callable[[Any], bool] | None = None,
) -> str | None:
    """The policy (or several, joined by `+`) that explains the engine refusing valid
    `value` (serialized as `text`, which `accepts_text` feeds it), or None.
    `accepts_deeper` says whether the depth bound of our converter's dialect alone keeps
    a value out of the engine's language (`unconstrained-values-at-most-any-depth`)."""
    if (
        SchemaPolicy.WHITESPACE_RUNS_AT_MOST_12 in declared
        and text is not None
        and accepts_text is not None
    ):
        capped = whitespace_capped(text)
        if capped != text and accepts_text(capped):
            return SchemaPolicy.WHITESPACE_RUNS_AT_MOST_12
    mine = [name for name in _VALUE_REWRITES if name in declared]
    tries = [[name] for name in mine] + ([mine] if len(mine) > 1 else [])
    # each rewrite once, kept where it is a valid instance (the value itself first)
    valid: list[tuple[list[SchemaPolicy], Any]] = [([], value)]
    for names in tries:
        rewritten = _rewritten(names, schema, value)
        if rewritten is None or json.dumps(rewritten) == json.dumps(value):
            continue  # (key order counts: `==` on dicts ignores it)
        if is_valid(schema, rewritten):
            if accepts(rewritten):
                return "+".join(names)
            valid.append((names, rewritten))
    if (
        SchemaPolicy.UNCONSTRAINED_VALUES_AT_MOST_ANY_DEPTH in declared
        and accepts_deeper is not None
    ):
        for names, rewritten in valid:
            if accepts_deeper(rewritten):
                return "+".join([*names, SchemaPolicy.UNCONSTRAINED_VALUES_AT_MOST_ANY_DEPTH])
    return None


def _rewritten(names: list[SchemaPolicy], schema: Any, value: Any) -> Any:
    """`value` with the named value rewrites applied in order; None where one needs a
    pattern Python's `re` cannot compile."""
    try:
        for name in names:
            value = _VALUE_REWRITES[name](schema, value, schema)
    except re.error:
        return None
    return value


def explain_acceptance(
    declared: tuple[SchemaPolicy, ...],
    schema: Any,
    value: Any,
    is_valid: Callable[[Any, Any], bool],
) -> str | None:
    """The policy (or two, joined by `+`) under which invalid `value`, which the engine
    accepted or produced, is valid; None when none explains it."""
    readings = {
        SchemaPolicy.ONEOF_AS_ANYOF: oneof_as_anyof,
        SchemaPolicy.LENGTH_IGNORED_WITH_PATTERN: lengths_beside_pattern_dropped,
    }
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
