"""How many of a set's JSON schemas each converter and each native JSON engine takes, and
how exactly the converters' regexes judge the set's labelled instances.

    .venv/bin/python -m benchmarks.schema_coverage [--corpus maskbench] [--limit N]
        [--engines llguidance,xgrammar] [--timeout 60] [--samples N] [--outputs 2]
        [--seed 0]

Subjects:
- the two schema-to-regex converters of `harness.language.converter`: `ours` (the Rust
  core's compiler, in the harness's dialect) and `outlines-core`. outlines-core's is
  taken through the one guarded, cached conversion path; ours as the lazy index's tree
  (`LazyIndex.from_schema`, what tokensdfa-lazy serves), which has no text and so no
  text size limit, only the tree's own (`engines/schema/src/lib.rs`,
  `compile_ast`); how many of those it also writes as regex text within the size cap
  (what the naive reference and the eager index need) is printed beside;
- `ours-pushdown`: our compiler in TokensDFA's pushdown mode (`PushdownIndex.from_schema`,
  tokensdfa-pushdown), the same dialect with unconstrained values nesting without bound,
  judged as the converters are (its false rejections should be the exponents alone);
- the engines with their own JSON grammar (`--engines`), each compiling every schema
  through its harness adapter on a small synthetic vocabulary (what a schema costs an
  engine does not depend on the vocabulary's size; what it accepts does not either) in
  a worker process (`harness.process`) under `--timeout`: a crash, a hang or a refusal
  counts as not taken, with the reason tallied. Each schema an engine takes has its
  labelled instances (keys in schema order) walked through the engine's masks by the
  differ's own instance checks (`harness.diff.judge.instances.check_instances`), so that an
  engine that takes a schema by ignoring a keyword shows it: its row adds false
  rejections, false acceptances, failures its declared policies explain, and how many
  schemas it took with none of these (`benchmarks.engine_coverage`).

Every subject also writes `--outputs` completions of its own per schema it takes
(`InstanceChecker.sample`: tokens drawn at random from its masks until EOS): each must
parse and be valid per the judge, else it is an *invalid output*, a false acceptance
that no labelled instance had to exhibit (a subject that allows nothing at the start
writes none: an empty language, counted apart; one that repeats a name in an object
is counted apart too and not judged, since parsers differ on which member wins). A
schema counts as exact when it has none of these errors.

For each converter, every labelled instance of every schema it takes, its keys put in
schema order (both converters' dialect), is walked through its regex byte by byte (the
tokensdfa-lazy adapter over a one-byte-per-token vocabulary, walked as the differ walks
instances), compact and with outlines-core's spacing,
and judged by `harness.corpora.judge` (`jsonschema` with formats asserted and patterns
read as ECMA-262; the labels themselves are not trusted):
a valid instance refused is a false rejection, an invalid one accepted a false
acceptance. Our converter's false rejections are explained where they can be: an
instance only a regex converted without one of the dialect's stated restrictions accepts
(unconstrained values nested deeper than `any_depth`; formats asserted where jsonschema
does not check them), a number written with an exponent, or a refusal exactly where the
text opens a third or deeper level of arrays and objects where no relaxed regex within
the size cap reaches, lies outside the dialect; the rest are listed as unexplained. With
`--samples N`, each schema our converter takes also gets up to N instances drawn by
hypothesis-jsonschema (valid per the judge, keys in schema order, never filtered by
any converter's regex), judged by both converters' regexes the same way and counted
apart: they find false rejections the labelled instances miss. It prints one line per
subject; a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from typing import Any

from benchmarks import engine_coverage
from harness import corpora, engines
from harness.corpora import texts
from harness.corpora.judge import validate
from harness.corpora.schema_order import schema_order
from harness.diff.judge.instances import (
    EMPTY_LANGUAGE,
    REPEATED_KEYS,
    UNVERIFIABLE,
    check_instances,
    walk,
)
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.engines.base import Compiled, Matcher
from harness.errors import EngineError, TokensieveError
from harness.language import converter
from harness.spec import Spec

# Unexplained false rejections, false acceptances and invalid outputs printed per subject.
EXAMPLES = 8
# Our compiler in TokensDFA's pushdown mode, a subject beside the converters: the same
# dialect with unconstrained values nesting without bound.
PUSHDOWN = "ours-pushdown"
PUSHDOWN_ENGINE = "tokensdfa-pushdown"
OUR_SUBJECTS = (converter.OURS, PUSHDOWN)


class ByteLanguage:
    """Full matches of a converter's regex: the tokensdfa-lazy adapter over a vocabulary
    of one token per byte (`harness.diff.shrink.minimize.tiny_vocabulary`), each text walked as
    the differ walks instances (`harness.diff.judge.instances.walk`)."""

    def __init__(self) -> None:
        self.vocab = tiny_vocabulary([bytes([b]) for b in range(256)])
        self.engine = engines.get("tokensdfa-lazy")
        self.prepared = self.engine.prepare(self.vocab)
        self.pushdown_engine = engines.get(PUSHDOWN_ENGINE)
        self.pushdown_prepared = self.pushdown_engine.prepare(self.vocab)

    def matcher(self, regex: str) -> Matcher:
        """Raises TokensieveError for a regex the index cannot take."""
        return self._compiled(Spec.regex("coverage/regex", regex))

    def tree_matcher(self, schema: str) -> Matcher:
        """Our compiler's language of `schema` as the lazy index's tree
        (`LazyIndex.from_schema`, the converter's dialect), with no regex text, so
        without the text's size limit: what tokensdfa-lazy serves. Raises
        TokensieveError for a schema the compiler refuses."""
        return self.tree(schema).matcher()

    def tree(self, schema: str) -> Compiled:
        """`tree_matcher`'s compiled index."""
        return self.compiled(Spec.schema("coverage/schema", schema))

    def compiled(self, spec: Spec) -> Compiled:
        return self.engine.compile(self.prepared, spec)

    def pushdown(self, schema: str) -> Compiled:
        """Our compiler's language of `schema` in TokensDFA's pushdown mode
        (`PushdownIndex.from_schema`): unconstrained values nest without bound."""
        return self.pushdown_engine.compile(
            self.pushdown_prepared, Spec.schema("coverage/schema", schema)
        )

    def _compiled(self, spec: Spec) -> Matcher:
        return self.compiled(spec).matcher()

    def accepts(self, matcher: Matcher, text: str) -> bool:
        try:
            ids = self.vocab.encode(text)
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 text holds one
            return False
        return walk(matcher, self.vocab, ids)[0]


def _instances(entry: corpora.Entry) -> list[tuple[Any, bool]]:
    """(value, valid per the judge) for each labelled instance the judge can evaluate,
    its keys in schema order (the converters' dialect; `harness.corpora.schema_order`)."""
    schema = json.loads(entry.spec.text)
    out = []
    for raw in (*entry.valid, *entry.invalid):
        value = schema_order(raw, schema)
        try:
            out.append((value, validate(schema, value) is None))
        except Exception:  # a schema jsonschema cannot evaluate ($ref to a URL...)
            continue
    return out


def _converter_row(
    name: str,
    found: list[corpora.Entry],
    walker: ByteLanguage,
    samples: dict[str, list[Any]],
    outputs: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Our tally for converter `name`: schemas taken, and each labelled instance (and each
    generated sample in `samples`, by spec id: valid by construction) judged by its regex,
    compact and spaced. Generated samples are counted apart (`gen_checked`, `gen_fr`).
    `exact` counts the schemas taken with no false rejection or false acceptance on
    their labelled instances and no invalid output among `outputs` completions drawn
    from its masks per schema (the engines' rows count the same)."""
    row: dict[str, Any] = {"taken": 0, "reasons": Counter(), "checked": 0, "fr": 0, "fa": 0}
    row.update(gen_checked=0, gen_fr=0, as_text=0, exact=0)
    row.update(outputs=0, invalid_outputs=0, unfinished=0, empty=0, repeated_keys=0, broken=0)
    started = time.monotonic()
    for entry in found:
        ours = name in OUR_SUBJECTS
        conversion = converter.convert_schema(entry.spec.text, converter.OURS if ours else name)
        row["as_text"] += conversion.ok
        try:
            if name == converter.OURS:  # as a tree: no text, so no text size limit
                compiled = walker.tree(entry.spec.text)
            elif name == PUSHDOWN:
                compiled = walker.pushdown(entry.spec.text)
            elif conversion.regex is None:
                row["reasons"][str(conversion.status)] += 1
                continue
            else:
                compiled = walker.compiled(Spec.regex("coverage/regex", conversion.regex))
            index = compiled.matcher()
        except TokensieveError as exc:  # refused, or a regex the index cannot take
            row["reasons"][f"{type(exc).__name__}"] += 1
            continue
        row["taken"] += 1
        errors_before = row["fr"] + row["fa"] + row["invalid_outputs"]
        try:
            _judge_entry(row, name, compiled, index, entry, walker, samples, outputs, seed)
        except EngineError as exc:  # the index broke mid-walk (its walk limit): not exact
            row["broken"] += 1
            row.setdefault("broken_examples", []).append((entry.spec.id, str(exc)[:120]))
            continue
        row["exact"] += row["fr"] + row["fa"] + row["invalid_outputs"] == errors_before
    row["seconds"] = time.monotonic() - started
    return row


def _judge_entry(
    row: dict[str, Any],
    name: str,
    compiled: Compiled,
    index: Matcher,
    entry: corpora.Entry,
    walker: ByteLanguage,
    samples: dict[str, list[Any]],
    outputs: int,
    seed: int,
) -> None:
    """Adds to `row` the judgments of `entry`'s labelled instances and samples by
    `index` (compact and spaced), and `outputs` completions from `compiled`."""
    judged = [(v, ok, "") for v, ok in _instances(entry)]
    judged += [(v, True, "gen_") for v in samples.get(entry.spec.id, [])]
    for value, valid, kind in judged:
        for separators in ((",", ":"), (", ", ": ")):
            text = json.dumps(value, separators=separators, ensure_ascii=False)
            row[f"{kind}checked"] += 1
            accepted = walker.accepts(index, text)
            if valid and not accepted:
                row[f"{kind}fr"] += 1
                if name in OUR_SUBJECTS:
                    cause = _outside_dialect(entry.spec.text, index, text, walker)
                    row.setdefault(f"{kind}causes", Counter())[cause] += 1
                    if cause == UNEXPLAINED:
                        row.setdefault("examples", []).append((entry.spec.id, text[:120]))
            if accepted and not valid:
                row["fa"] += 1
                row.setdefault("fa_examples", []).append((entry.spec.id, text[:120]))
    if outputs:
        _own_outputs(row, name, compiled, entry, walker, outputs, seed)


# Bytes a converter's completion may take (one token per byte) before it counts as
# unfinished.
OUTPUT_BYTES = 2048


def _own_outputs(
    row: dict[str, Any],
    name: str,
    compiled: Compiled,
    entry: corpora.Entry,
    walker: ByteLanguage,
    outputs: int,
    seed: int,
) -> None:
    """Adds to `row` `outputs` completions drawn from a converter's language of `entry`
    (the differ's `InstanceChecker.sample`), each judged as JSON against the schema."""
    counts = check_instances(
        name,
        compiled,
        json.loads(entry.spec.text),
        entry.spec.id,
        walker.vocab,
        [],
        [],
        samples=outputs,
        seed=seed,
        max_tokens=OUTPUT_BYTES,
    )
    row["outputs"] += counts.samples
    row["invalid_outputs"] += counts.invalid_outputs
    row["unfinished"] += counts.unfinished
    row["empty"] += counts.empty
    row["repeated_keys"] += counts.repeated_keys
    for f in counts.failures:
        if f.kind not in (UNVERIFIABLE, EMPTY_LANGUAGE, REPEATED_KEYS):
            row.setdefault("output_examples", []).append((entry.spec.id, f.text[:120], f.detail))


def _samples(
    found: list[corpora.Entry], n: int, seed: int, walker: ByteLanguage
) -> tuple[dict[str, list[Any]], int]:
    """`n` hypothesis-jsonschema instances per schema our converter takes (fewer where the
    generator gives up or times out), and how many schemas yielded none."""
    out: dict[str, list[Any]] = {}
    empty = 0
    for entry in found:
        try:
            walker.tree_matcher(entry.spec.text)
        except TokensieveError:
            continue
        values, _notes = texts.generated_instances(entry.spec.text, seed, n)
        out[entry.spec.id] = values[:n]
        empty += not values
    return out, empty


UNEXPLAINED = "unexplained"
# Restrictions our converter's dialect states (engines/schema/src/dialect.rs), each
# checked by converting again without it: a valid instance that only the relaxed regex
# accepts lies outside the dialect (an instance-level choice, not an error).
RELAXED = [
    # deeper unconstrained values, one level at a time (each level multiplies the size)
    ("unconstrained value nested deeper than any_depth", {"any_depth": 3}),
    ("unconstrained value nested deeper than any_depth", {"any_depth": 4}),
    ("format asserted where jsonschema does not check it", {"formats": "annotate"}),
]
EXPONENT = re.compile(r"[0-9][eE][-+]?[0-9]")


def _outside_dialect(schema: str, matcher: Matcher, text: str, walker: ByteLanguage) -> str:
    """Which of the dialect's stated restrictions a refused valid instance breaks (our
    converter's language of `schema`, `matcher`, refused it), or UNEXPLAINED."""
    import tokensdfa

    for cause, relaxed in RELAXED:
        try:
            regex = tokensdfa.schema_to_regex(
                schema,
                whitespace=converter.OURS_WHITESPACE,
                escapes=converter.OURS_ESCAPES,
                max_regex_bytes=converter.OURS_MAX_REGEX_BYTES,
                **relaxed,
            )
            relaxed_matcher = walker.matcher(regex)
        except (ValueError, TokensieveError):
            continue
        if walker.accepts(relaxed_matcher, text):
            return cause
    if EXPONENT.search(text):
        return "number written with an exponent (the dialect writes plain decimals)"
    if _refused_at_container(matcher, text, walker):
        return DEEPER
    return UNEXPLAINED


DEEPER = (
    "refused exactly where it opens an array or object 3 or more levels deep, where "
    "no relaxed regex within the size cap reaches"
)


def _refused_at_container(matcher: Matcher, text: str, walker: ByteLanguage) -> bool:
    """Whether `matcher` refuses `text` exactly at a `[` or `{` outside strings that opens
    a third (or deeper) level: an unconstrained value's nesting is never more than the
    text's, so a refusal at the first two levels is never the `any_depth` bound."""
    matcher.reset()
    depth, in_string, escaped = 0, False, False
    data = text.encode()
    for byte, token in zip(data, walker.vocab.encode(text), strict=True):
        char = chr(byte)
        if not matcher.advance(token):
            return not in_string and char in "[{" and depth >= 2
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
    return False


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="maskbench")
    parser.add_argument("--limit", type=int, default=None, help="schemas, evenly spaced")
    parser.add_argument("--engines", default="llguidance,xgrammar")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per compile")
    parser.add_argument(
        "--samples",
        type=int,
        default=0,
        help="hypothesis-jsonschema instances per schema our converter takes (default 0)",
    )
    parser.add_argument(
        "--outputs",
        type=int,
        default=2,
        help="completions drawn from each subject's masks per schema it takes (default 2)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of samples and outputs")
    return parser.parse_args()


def _print_converter(name: str, r: dict[str, Any], total: int, with_samples: bool) -> None:
    """Converter `name`'s tally (`_converter_row`) over `total` schemas."""
    print(
        f"converter {name:<14} takes {r['taken']:>5} of {total} "
        f"({100 * r['taken'] / max(1, total):.1f}%); instances checked "
        f"{r['checked']}: false rejections {r['fr']}, false acceptances {r['fa']}; "
        f"not taken: {dict(r['reasons'])}; {r['seconds']:.0f} s",
        flush=True,
    )
    print(
        f"    own outputs {r['outputs']}: invalid {r['invalid_outputs']}, unfinished "
        f"{r['unfinished']}, none (an empty language) {r['empty']}, a name repeated "
        f"(not judged) {r['repeated_keys']}"
    )
    print(f"    schemas taken with no instance error or invalid output: {r['exact']}")
    if r["broken"]:  # an index that passed its walk limit while judged: not exact
        print(f"    broke mid-walk (walk limit): {r['broken']}: {r['broken_examples'][:3]}")
    if name in OUR_SUBJECTS:
        print(f"    of which as regex text (the naive reference's form): {r['as_text']}")
    if with_samples:
        print(f"    samples checked {r['gen_checked']}: false rejections {r['gen_fr']}")
    for cause, n in r.get("causes", Counter()).most_common():
        print(f"    false rejections, {cause}: {n}")
    for cause, n in r.get("gen_causes", Counter()).most_common():
        print(f"    sample false rejections, {cause}: {n}")
    for spec_id, text in r.get("examples", [])[:EXAMPLES]:
        print(f"    unexplained: {spec_id} {text!r}")
    for spec_id, text in r.get("fa_examples", [])[:EXAMPLES] if name in OUR_SUBJECTS else ():
        print(f"    false acceptance: {spec_id} {text!r}")
    for spec_id, text, why in r.get("output_examples", [])[:EXAMPLES]:
        print(f"    invalid output: {spec_id} {text!r}: {why[:160]}")


def _print_engine(name: str, found: list[corpora.Entry], timeout: float, outputs: int) -> None:
    """Engine `name`'s own JSON grammar over `found` (`engine_coverage.coverage`)."""
    started = time.monotonic()
    tally, counts, shown = engine_coverage.coverage(name, found, timeout, outputs)
    taken = tally.pop("ok", 0)
    print(
        f"engine    {name:<14} takes {taken:>5} of {len(found)} "
        f"({100 * taken / max(1, len(found)):.1f}%); not taken: {dict(tally)}; "
        f"{time.monotonic() - started:.0f} s",
        flush=True,
    )
    print(
        f"    instances: valid {counts['valid']}, invalid {counts['invalid']}: false "
        f"rejections {counts['false_rejections']}, false acceptances "
        f"{counts['false_acceptances']}, failures its declared policies explain "
        f"{counts['policy']}, labels the judge disputes {counts['disputed']}"
    )
    print(
        f"    own outputs {counts['samples']}: invalid {counts['invalid_outputs']}, "
        f"unfinished {counts['unfinished']}, none (an empty language) {counts['empty']}, "
        f"a name repeated (not judged) {counts['repeated_keys']}"
    )
    print(
        f"    schemas taken with no instance error or invalid output (none of the "
        f"first three, nor these): {counts['exact']}"
    )
    for line in shown[:EXAMPLES]:
        print(f"    invalid output: {line}")


def main() -> None:
    args = _arguments()
    found = [e for e in corpora.entries(args.corpus) if e.spec.kind == "json_schema"]
    found = corpora.catalog.spread(found, args.limit)
    print(f"{args.corpus}: {len(found)} schemas")
    walker = ByteLanguage()
    samples: dict[str, list[Any]] = {}
    if args.samples > 0:
        started = time.monotonic()
        samples, empty = _samples(found, args.samples, args.seed, walker)
        print(
            f"samples: {sum(map(len, samples.values()))} drawn for {len(samples)} schemas "
            f"({empty} yielded none); {time.monotonic() - started:.0f} s",
            flush=True,
        )
    for name in (*converter.NAMES, PUSHDOWN):
        row = _converter_row(name, found, walker, samples, args.outputs, args.seed)
        _print_converter(name, row, len(found), bool(samples))
    for name in filter(None, args.engines.split(",")):
        _print_engine(name, found, args.timeout, args.outputs)


if __name__ == "__main__":
    main()
