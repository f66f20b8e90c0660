"""Native JSON engines' masks on a schema, state by state, in their own JSON dialect.

An engine with its own JSON-schema compiler (llguidance) writes JSON texts its own way:
its whitespace, which characters a string escapes and how, where a number may carry an
exponent, whether an integer may be written `3.0`. Those choices are valid JSON, so the
converter's regex in the harness's dialect is the wrong reference for its masks. An
engine that declares its dialect (`Policies.json_dialect`, measured on its pinned
release) is compared instead with our converter's regex *in that dialect*: the same
walks, triage and findings as a regex lane (`harness.diff.walk.differ`), with one reference
per dialect. The schema the reference converts is the schema as the engine declares it
reads schemas (`read_by`: xgrammar's `additional-properties-false`, `oneof-as-anyof`,
`length-ignored-with-pattern` rewrite it first).

Where the dialect itself must bound the language and the engine's does not, the
difference is a policy, decided exactly: a value the schema leaves unconstrained nests
at most `ANY_DEPTH` arrays and objects in the reference, and a recursive `$ref` is
entered at most `MAX_RECURSION` times inside itself (neither is a regular language), so
at those depths the engine allows `[`, `{` or the next level that the reference
refuses. Triage compares such a state with the reference converted k levels deeper in
both, k the most arrays and objects one of the extra tokens opens, at most 4
(`values-nested-deeper`, `harness.diff.judge.triage`): the extra tokens are explained iff that
deeper reference allows each of them, with nothing refused and the same accepting
status. Everything else is a finding (also where the deeper regex passes the size cap).

One more reading of the schema is built for triage, on demand (`References.readings`):
`allof-widened`, the schema with every subschema that holds an `allOf` of two or more
subschemas read as any value, siblings included. xgrammar 0.2.8 reads such a subschema
so (its converter logs "Support for allOf with multiple options is still ongoing" and
writes `basic_any`), which widens a `type: object` schema to every JSON value: an engine
whose mask and accepting status are that reading's is named by the signature of the same
name, not left "unclassified".

A finding is minimized as a regex lane's is, over a tiny vocabulary, except that the
engine keeps compiling the schema and the reference keeps reading its whole regex in the
dialect (`harness.diff.shrink.minimize`); its repro script compiles the schema with the
engine's package (`SCHEMA` in the script).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from harness.diff.judge.schema_policies import as_read_by, rewrite_subschemas
from harness.diff.walk.differ import Differ
from harness.diff.walk.disagreement import SpecDiff
from harness.diff.walk.plan import WalkPlan
from harness.diff.walk.references import References
from harness.engines.base import Engine
from harness.errors import TokensieveError
from harness.language import converter
from harness.spec import Spec
from harness.vocab import Vocabulary

# How deeply the reference nests unconstrained values and recursive `$ref`s (the
# compiler's defaults); triage's deeper references (`values-nested-deeper`) go as many
# levels further as a disputed token opens.
ANY_DEPTH = 2
MAX_RECURSION = 3


ALLOF_WIDENED = "allof-widened"


def allof_widened(schema: Any) -> Any:
    """`schema` with every subschema holding an `allOf` of two or more subschemas
    replaced by `true` (see the module)."""

    def edit(node: dict[str, Any]) -> dict[str, Any]:
        subs = node.get("allOf")
        return {} if isinstance(subs, list) and len(subs) >= 2 else node

    return rewrite_subschemas(schema, edit)


def compared_in_dialect(engine: Engine) -> bool:
    """Whether `engine`'s masks on schemas are compared in its declared dialect."""
    return engine.capabilities.json_schema == "native" and bool(engine.policies.json_dialect)


def read_by(engine: Engine, text: str) -> str:
    """Schema `text` as `engine` declares it reads schemas (`Policies.json_schema`:
    `additional-properties-false`, `oneof-as-anyof`, `length-ignored-with-pattern`
    rewrite the schema), so that those documented readings are part of the reference
    and not findings. The text itself when nothing changes it."""
    declared = engine.policies.json_schema
    if not declared:
        return text
    try:
        schema = json.loads(text)
    except json.JSONDecodeError:
        return text  # not JSON: the converter says so, naming the spec
    read = as_read_by(declared, schema)
    return text if read == schema else json.dumps(read)


def dialect_lane(
    spec: Spec,
    voc: Vocabulary,
    engine: Engine,
    prepared: dict[str, Any],
    plan: WalkPlan,
) -> tuple[SpecDiff, References | None]:
    """`engine`'s masks on schema `spec` against our converter's regex in its dialect,
    and the references they were compared with (for minimizing). Where the schema has no
    regex in that dialect, or the engine cannot compile it, the result records why in
    `skipped`, compares nothing, and comes with no references."""
    out = SpecDiff(spec.id, voc.name, "")
    dialect = engine.policies.json_dialect
    text = read_by(engine, spec.text)
    try:
        regex = converter.in_dialect(text, dialect, ANY_DEPTH, MAX_RECURSION)
    except ValueError as exc:
        out.skipped[engine.name] = f"no regex in its JSON dialect: {' '.join(str(exc).split())}"
        return out, None

    @functools.cache
    def deeper(levels: int) -> str | None:
        try:
            return converter.in_dialect(text, dialect, ANY_DEPTH + levels, MAX_RECURSION + levels)
        except ValueError:
            return None  # values-nested-deeper then explains nothing at this depth

    @functools.cache
    def widened() -> str | None:
        try:
            schema = json.loads(text)
        except json.JSONDecodeError:
            return None
        read = allof_widened(schema)
        if read == schema:
            return None
        try:
            return converter.in_dialect(json.dumps(read), dialect, ANY_DEPTH, MAX_RECURSION)
        except ValueError:
            return None

    try:
        refs = References(regex, voc, spec.id, deeper=deeper, readings={ALLOF_WIDENED: widened})
        compiled = engine.compile(prepared[engine.name], spec)
    except TokensieveError as exc:
        out.skipped[engine.name] = f"{type(exc).__name__}: {exc}"
        return out, None
    result = Differ(
        spec.id, regex, voc, {engine.name: (engine, compiled)}, refs, check_exact=False
    ).run(plan)
    result.lane_regex[engine.name] = regex
    result.regex = ""
    return result, refs
