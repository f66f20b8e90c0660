"""Instances with their keys in schema order.

hypothesis-jsonschema emits keys sorted; outlines-core's regex (and any engine that
follows the schema) expects `properties` order, so generated instances are put in that
order before they are serialized.
"""

from __future__ import annotations

from typing import Any

import regress

from harness.corpora import judge


def _resolve(schema: Any, root: Any) -> Any:
    """Follow local `$ref`s (`#/...` JSON pointers) to the schema they name."""
    for _ in range(32):  # a ref cycle without structure in between ends here
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        node = root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return schema
        schema = node
    return schema


def _branches(schema: Any, root: Any, value: Any = None) -> list[dict[str, Any]]:
    """The schema and its allOf parts and anyOf/oneOf branches, refs resolved, depth
    first. Of an anyOf/oneOf, only the branches `value` is valid against when there are
    any (an instance is ordered by the branch it matches, not by its siblings'); of an
    `if`, the `if` and `then` when `value` is valid against the `if`, else the `else`
    (as our converter merges them); of a dependency whose trigger key `value` has, the
    trigger as a required key, then the dependency's keys or schema."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return []
    out = [schema]
    if isinstance(value, dict):
        out += _dependencies(schema, root, value)
    for key in ("allOf", "anyOf", "oneOf"):
        subs = schema.get(key, []) if isinstance(schema.get(key), list) else []
        if key != "allOf" and value is not None:
            matching = [sub for sub in subs if _valid(value, sub, root)]
            subs = matching or subs
        for sub in subs:
            out += _branches(sub, root, value)
    if "if" in schema and value is not None:
        chosen = ("if", "then") if _valid(value, schema["if"], root) else ("else",)
        for key in chosen:
            out += _branches(schema.get(key), root, value)
    return out


def _valid(value: Any, branch: Any, root: Any) -> bool:
    """Whether `value` is valid against `branch`, a subschema of `root` (whose local
    definitions its refs may name); False when jsonschema cannot judge it."""
    if not isinstance(branch, dict):
        return branch is not False
    schema = dict(branch)
    if isinstance(root, dict):
        for key in ("$defs", "definitions", "$schema"):
            if key in root and key not in schema:
                schema[key] = root[key]
    return judge.is_valid(schema, value, formats=False)


DEPENDENCY_KEYWORDS = ("dependencies", "dependentRequired", "dependentSchemas")


def _dependencies(schema: dict[str, Any], root: Any, value: dict[str, Any]) -> list[Any]:
    """The nodes the dependencies of `schema` whose trigger `value` has add, in the
    compiler's order (`engines/schema/src/reading/dependencies.rs`): keyword by keyword,
    trigger by trigger (draft-07 rules: `dependencies` only), `{"required": [trigger,
    *keys]}` for a key list, else
    `{"required": [trigger]}` and the dependency schema's own branches."""
    out: list[Any] = []
    named = root.get("$schema") if isinstance(root, dict) else None
    legacy = isinstance(named, str) and any(f"draft-0{n}" in named for n in (3, 4, 6, 7))
    for keyword in DEPENDENCY_KEYWORDS[:1] if legacy else DEPENDENCY_KEYWORDS:
        deps = schema.get(keyword)
        for trigger, dep in deps.items() if isinstance(deps, dict) else ():
            if trigger not in value or dep is True or dep == {}:
                continue
            if isinstance(dep, str):
                dep = [dep]
            if isinstance(dep, list):
                if dep:
                    out.append({"required": [trigger, *dep]})
                continue
            out.append({"required": [trigger]})
            out += _branches(dep, root, value)
    return out


def schema_order(value: Any, schema: Any, root: Any | None = None, depth: int = 0) -> Any:
    """`value` with each object's keys in the order its schema declares them.

    hypothesis-jsonschema emits keys sorted; outlines-core's regex (and any engine that
    follows the schema) expects `properties` order, so generated instances are put in
    that order before they are serialized: the keys the `properties` of an object's
    schema and its allOf/anyOf/oneOf branches list, then the `required` keys none lists
    (the order our converter's dialect fixes); a key's value is
    ordered by its property schema, else the first `patternProperties` schema whose
    pattern it matches, else `additionalProperties`. Keys the schema does not name keep
    their relative order at the end.
    """
    root = schema if root is None else root
    if depth > 64:
        return value
    nodes = _branches(schema, root, value)
    if isinstance(value, dict):
        order: dict[str, int] = {}
        for node in nodes:  # the keys every branch's `properties` lists
            props = node.get("properties")
            if isinstance(props, dict):
                for k in props:
                    order.setdefault(k, len(order))
        for node in nodes:  # then the `required` keys none lists
            required = node.get("required")
            for k in required if isinstance(required, list) else ():
                if isinstance(k, str):
                    order.setdefault(k, len(order))
        keys = sorted(value, key=lambda k: order.get(k, len(order)))
        return {
            k: schema_order(value[k], _property_schema(nodes, k), root, depth + 1) for k in keys
        }
    if isinstance(value, list):
        return [
            schema_order(v, _item_schema(nodes, i), root, depth + 1) for i, v in enumerate(value)
        ]
    return value


def _property_schema(nodes: list[dict[str, Any]], key: str) -> Any:
    """The schema `key`'s value meets in an object that every one of `nodes` describes
    (they are the object's schema and the allOf parts and chosen branches it is merged
    with): of each node, its `properties` schema for `key`, the `patternProperties`
    schemas whose patterns match `key`, or, when neither names it, its schema object
    `additionalProperties`. All of them apply, so the value is ordered by their `allOf`
    (the keys of the first node that declares them first, as the compiler merges them),
    not by the first one alone, whose declared keys may be a few of the merged ones."""
    found: list[Any] = []
    for node in nodes:
        props = node.get("properties")
        named = isinstance(props, dict) and key in props
        if isinstance(props, dict) and named:
            found.append(props[key])
        patterns = node.get("patternProperties")
        for pattern, sub in patterns.items() if isinstance(patterns, dict) else ():
            try:
                if judge.ecma_search(pattern, key):
                    found.append(sub)
                    named = True
            except regress.RegressError:  # a pattern no ECMA-262 mode reads
                continue
        if not named and isinstance(node.get("additionalProperties"), dict):
            found.append(node["additionalProperties"])
    return found[0] if len(found) == 1 else {"allOf": found}


def _item_schema(nodes: list[dict[str, Any]], index: int) -> Any:
    for node in nodes:
        prefix = node.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            return prefix[index]
        items = node.get("items")
        if isinstance(items, list) and index < len(items):  # draft 4-7 tuple form
            return items[index]
        if isinstance(items, dict):
            return items
    return {}
