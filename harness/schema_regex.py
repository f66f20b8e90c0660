"""JSON schema -> regex, one converter for every regex-only engine.

The regex engines (naive, outlines-core, TokensDFA) all receive schemas through
outlines-core's `build_regex_from_schema`, so they are compared on the same language and a
difference between them is never a difference between converters. Errors name the engine
that asked and the spec, not the converter, because that is the cell of the result table
the failure belongs to.
"""

from __future__ import annotations

import re

from harness.errors import SpecError, UnsupportedSpec
from harness.spec import Spec

# Converter messages that describe a schema it does not implement (the rest are mistakes
# in the schema itself).
_UNSUPPORTED = re.compile(r"not supported|unsupported|recursion limit", re.IGNORECASE)


def schema_to_regex(
    schema_text: str,
    whitespace_pattern: str | None = None,
    *,
    engine: str = "outlines-core",
    spec_id: str = "<schema>",
) -> str:
    """The regex outlines-core builds for `schema_text` (serialized JSON).

    `whitespace_pattern` replaces the converter's default (`[ ]?`) between JSON tokens.
    Raises SpecError for malformed JSON or an invalid schema and UnsupportedSpec for a
    schema construct the converter does not implement, both naming `engine` and `spec_id`.
    """
    try:
        from outlines_core.json_schema import build_regex_from_schema
    except ImportError as exc:
        raise UnsupportedSpec(
            engine, spec_id, f"JSON schema needs outlines-core's converter: {exc}"
        ) from exc
    try:
        return build_regex_from_schema(schema_text, whitespace_pattern)
    except (TypeError, ValueError) as exc:
        message = str(exc).strip() or type(exc).__name__
        if _UNSUPPORTED.search(message):
            raise UnsupportedSpec(engine, spec_id, message) from exc
        raise SpecError(engine, spec_id, message) from exc
    except Exception as exc:  # a converter panic must still name the engine and spec
        raise SpecError(engine, spec_id, f"{type(exc).__name__}: {exc}") from exc


def spec_regex(engine: str, spec: Spec, whitespace_pattern: str | None = None) -> str:
    """The regex a regex-only engine compiles for `spec`: the spec itself or its schema's."""
    if spec.kind == "regex":
        return spec.text
    return schema_to_regex(spec.text, whitespace_pattern, engine=engine, spec_id=spec.id)
