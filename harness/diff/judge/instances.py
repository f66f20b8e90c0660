"""JSON-schema engines judged on instances: what MaskBench calls invalidation errors.

Engines with their own JSON grammar (llguidance, xgrammar) speak a different, valid,
language than the converted regex the reference walks (whitespace, escapes, number forms),
so their masks are not compared state by state. They are held to the schema instead:
- every valid instance, serialized compactly and tokenized with the real encoder, is
  accepted through to EOS (else a *false rejection*), and so is each layout the engine's
  JSON whitespace policy promises (spaced for outlines' `[ ]?`, indented for flexible
  whitespace): the whitespace policy as a tested rule;
- every invalid instance is refused at some step (else a *false acceptance*, unless
  the judge finds the instance valid: the label is then *disputed*, not counted; so is
  a refused valid instance the judge finds invalid);
- completions sampled at random from the engine's own masks parse and validate (else an
  *invalid output*). An engine that allows nothing at the start and refuses EOS there
  writes no completion at all: its language is empty, counted as `empty`, not as an
  invalid output (it is wrong only where the schema has a valid instance, which a
  labelled one then shows as a false rejection; MaskBench has schemas nothing
  satisfies). A completion that repeats a name within an object is counted as
  `repeated_keys`, not judged: RFC 8259 says names SHOULD be unique and parsers differ
  on which member wins, and no regular language keeps the names of an unbounded key
  language distinct (a grammar engine, or our compiler's undeclared keys, lets one
  repeat, as `minProperties` counted over members shows).
The judge is `harness.corpora.judge`: `jsonschema`, with `pattern` read as ECMA-262.
The reference (naive, over the run's converted regex, `--converter`) is checked the same
way: its failures are that converter's. With our converter, outlines-core's own is checked
too, as the subject `outlines-core-converter` (`harness.engines.converter_subject`).

Policy `json-escapes`: a valid instance refused in its compact UTF-8 form but accepted
with non-ASCII characters escaped (`ensure_ascii=True`) is the engine requiring an escape
JSON allows either way; listed, not counted as a false rejection. The JSON-schema
policies an engine declares (`harness.diff.judge.schema_policies`: xgrammar's
`additional-properties-false`, `oneof-as-anyof`, `length-ignored-with-pattern`;
Formatron's key order; lm-format-enforcer's caps on array items and whitespace) likewise
explain a failure only when their rule explains all of it. Policy failures count in
`policy`, apart from the bugs; `maskbench_errors` counts both, as MaskBench does.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.corpora.judge import is_valid, loads, validate
from harness.corpora.paths import Layout, serialize
from harness.diff.judge import schema_policies
from harness.engines.base import Compiled, Matcher, SchemaPolicy, allowed_ids, is_allowed
from harness.errors import EngineError
from harness.language import converter
from harness.vocab import Vocabulary

FALSE_REJECTION = "false-rejection"
FALSE_ACCEPTANCE = "false-acceptance"
INVALID_OUTPUT = "invalid-output"
LABEL_DISPUTED = "label-disputed"
MASK_ADVANCE = "mask-advance-mismatch"
UNVERIFIABLE = "unverifiable"
EMPTY_LANGUAGE = "empty-language"
REPEATED_KEYS = "repeated-keys"
# Bytes that close or separate JSON values: the sampler leans on them so that a walk over
# a 128k-token vocabulary ends strings and objects instead of rambling.
_STRUCTURAL = frozenset(b'"}],:')
MAX_TEXT = 300


@dataclass(frozen=True)
class InstanceFailure:
    kind: str
    engine: str
    spec_id: str
    vocab: str
    text: str
    step: int | None
    detail: str
    policy: str | None = None

    def row(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["text"] = self.text[:MAX_TEXT]
        return out

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @staticmethod
    def from_json(data: dict[str, Any]) -> InstanceFailure:
        return InstanceFailure(**data)


@dataclass
class InstanceCounts:
    engine: str
    spec_id: str
    vocab: str
    valid: int = 0
    invalid: int = 0
    samples: int = 0
    unfinished: int = 0
    empty: int = 0
    repeated_keys: int = 0
    false_rejections: int = 0
    false_acceptances: int = 0
    invalid_outputs: int = 0
    policy: int = 0
    disputed: int = 0
    failures: list[InstanceFailure] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "failures"}
        out["maskbench_errors"] = (
            self.false_rejections + self.false_acceptances + self.invalid_outputs + self.policy
        )
        return out

    def to_json(self) -> dict[str, Any]:
        return {**self.row(), "failures": [f.to_json() for f in self.failures]}

    @staticmethod
    def from_json(data: dict[str, Any]) -> InstanceCounts:
        fields = dict(data)
        fields.pop("maskbench_errors", None)
        failures = [InstanceFailure.from_json(f) for f in fields.pop("failures")]
        return InstanceCounts(**fields, failures=failures)


def walk(matcher: Matcher, vocab: Vocabulary, ids: Sequence[int]) -> tuple[bool, int | None, str]:
    """Feed `ids` then EOS: (accepted, step of the refusal, what was refused)."""
    matcher.reset()
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    for step, token in enumerate(ids):
        matcher.fill_mask(mask)
        in_mask = is_allowed(mask, token)
        if not in_mask or not matcher.advance(token):
            where = "mask" if not in_mask else "advance"
            return False, step, f"token {token} {vocab.tokens[token]!r} refused ({where})"
    if not matcher.is_accepting():
        return False, len(ids), "not accepting at the end (EOS refused)"
    return True, None, ""


class InstanceChecker:
    def __init__(
        self,
        engine: str,
        compiled: Compiled,
        schema: Any,
        spec_id: str,
        vocab: Vocabulary,
        declared: tuple[SchemaPolicy, ...] = (),
    ) -> None:
        self.engine = engine
        self.schema = schema
        self.vocab = vocab
        self.matcher = compiled.matcher()
        self.counts = InstanceCounts(engine, spec_id, vocab.name)
        self.declared = declared  # the engine's JSON-schema policies
        # our converter's language of the schema by depth of unconstrained values
        self._deeper: dict[int, Callable[[str], bool] | None] = {}

    def _fail(
        self, kind: str, text: str, step: int | None, detail: str, policy: str | None = None
    ) -> None:
        c = self.counts
        c.failures.append(
            InstanceFailure(kind, self.engine, c.spec_id, c.vocab, text, step, detail, policy)
        )

    def _accepts(self, text: str) -> tuple[bool, int | None, str]:
        return walk(self.matcher, self.vocab, self.vocab.encode(text))

    def check_valid(self, value: Any, layouts: Sequence[Layout] = ("compact",)) -> None:
        """Accepted in every layout the engine's whitespace policy promises (compact
        first); one count per instance, at its first refused layout."""
        self.counts.valid += 1
        for layout in layouts:
            text = serialize(value, layout)
            ok, step, detail = self._accepts(text)
            if ok:
                continue
            if self._label_disputed(value, text):
                return
            escaped = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
            if layout == "compact" and escaped != text and self._accepts(escaped)[0]:
                self.counts.policy += 1
                self._fail(FALSE_REJECTION, text, step, detail, policy="json-escapes")
                return
            policy = schema_policies.explain_rejection(
                self.declared,
                self.schema,
                value,
                functools.partial(self._accepts_value, layout=layout),
                is_valid,
                text,
                lambda t: self._accepts(t)[0],
                functools.partial(self._accepts_deeper, layout=layout),
            )
            if policy is not None:
                self.counts.policy += 1
                self._fail(FALSE_REJECTION, text, step, f"[{layout} layout] {detail}", policy)
                return
            self.counts.false_rejections += 1
            self._fail(FALSE_REJECTION, text, step, f"[{layout} layout] {detail}")
            return

    def _accepts_value(self, value: Any, layout: Layout) -> bool:
        return self._accepts(serialize(value, layout))[0]

    def _accepts_deeper(self, value: Any, layout: Layout) -> bool:
        """Whether the depth bound of our converter's dialect alone keeps `value` out:
        its language refuses the text as the engine did (so the engine followed the
        language it was given, which the mask diff checks state by state), and the same
        language read with unconstrained values nesting as deep as `value` does holds
        it. Only a value deeper than the bound can be refused for its depth. One compile
        per depth and instance checker."""
        depth = schema_policies.nesting(value)
        if depth <= converter.OURS_ANY_DEPTH:
            return False
        text = serialize(value, layout)
        base, deeper = (self._language(d) for d in (converter.OURS_ANY_DEPTH, depth))
        return base is not None and deeper is not None and not base(text) and deeper(text)

    def _language(self, depth: int) -> Callable[[str], bool] | None:
        if depth not in self._deeper:
            self._deeper[depth] = converter.deeper_language(json.dumps(self.schema), depth)
        return self._deeper[depth]

    def _label_disputed(self, value: Any, text: str) -> bool:
        """Count and record a refused instance labelled valid that the judge finds
        invalid (MaskBench's labels were made with Python's reading of `pattern`)."""
        try:
            why = validate(self.schema, value)
        except Exception:  # a schema the judge cannot evaluate: the label stands
            return False
        if why is None:
            return False
        self.counts.disputed += 1
        self._fail(LABEL_DISPUTED, text, None, f"labelled valid, but invalid: {why}")
        return True

    def check_invalid(self, value: Any) -> None:
        self.counts.invalid += 1
        text = serialize(value, "compact")
        ok, _, _ = self._accepts(text)
        if not ok:
            return
        try:
            why = validate(self.schema, value)
        except Exception as exc:  # a schema jsonschema cannot evaluate ($ref to a URL...)
            self._fail(UNVERIFIABLE, text, None, f"{type(exc).__name__}: {exc}"[:200])
            return
        if why is None:
            self.counts.disputed += 1
            self._fail(LABEL_DISPUTED, text, None, "labelled invalid, but jsonschema accepts it")
            return
        if self._policy_accepts(FALSE_ACCEPTANCE, text, value, why):
            return
        self.counts.false_acceptances += 1
        self._fail(FALSE_ACCEPTANCE, text, None, why)

    def _policy_accepts(self, kind: str, text: str, value: Any, why: str) -> bool:
        """Count and record an invalid `value` the engine took as a policy failure when
        one of its declared JSON-schema policies explains it."""
        policy = schema_policies.explain_acceptance(self.declared, self.schema, value, is_valid)
        if policy is None:
            return False
        self.counts.policy += 1
        self._fail(kind, text, None, why, policy)
        return True

    def sample(self, rng: random.Random, max_tokens: int) -> None:
        self.counts.samples += 1
        m = self.matcher
        m.reset()
        mask = np.zeros(self.vocab.mask_words, dtype=np.int32)
        ids: list[int] = []
        for _ in range(max_tokens):
            m.fill_mask(mask)
            allowed = allowed_ids(mask, self.vocab.size)
            allowed = allowed[allowed != self.vocab.eos_id]
            if m.is_accepting() and (not allowed.size or rng.random() < 0.5):
                break
            if not allowed.size and not ids:
                self.counts.empty += 1
                detail = "nothing allowed and EOS refused at the start: an empty language"
                self._fail(EMPTY_LANGUAGE, "", 0, detail)
                return
            if not allowed.size:
                self._fail(
                    INVALID_OUTPUT,
                    self.vocab.decode(ids).decode("utf-8", "replace"),
                    len(ids),
                    "dead end: no token allowed and EOS refused",
                )
                self.counts.invalid_outputs += 1
                return
            token = self._pick(rng, allowed)
            if not m.advance(token):
                text = self.vocab.decode(ids).decode("utf-8", "replace")
                self._fail(MASK_ADVANCE, text, len(ids), f"token {token} in the mask refused")
                self.counts.invalid_outputs += 1
                return
            ids.append(token)
        else:
            self.counts.unfinished += 1
            return
        raw = self.vocab.decode(ids)
        text = raw.decode("utf-8", "replace")
        repeated: list[str] = []
        try:
            value = loads(raw, object_pairs_hook=functools.partial(_members, repeated))
        except ValueError as exc:
            self.counts.invalid_outputs += 1
            self._fail(INVALID_OUTPUT, text, None, f"not JSON: {exc}")
            return
        if repeated:
            self.counts.repeated_keys += 1
            self._fail(REPEATED_KEYS, text, None, f"repeats the name {repeated[0]!r}")
            return
        try:
            why = validate(self.schema, value)
        except Exception as exc:
            self._fail(UNVERIFIABLE, text, None, f"{type(exc).__name__}: {exc}"[:200])
            return
        if why is not None and not self._policy_accepts(INVALID_OUTPUT, text, value, why):
            self.counts.invalid_outputs += 1
            self._fail(INVALID_OUTPUT, text, None, why)

    def _pick(self, rng: random.Random, allowed: np.ndarray) -> int:
        tokens = self.vocab.tokens
        if rng.random() < 0.5:
            sample = [int(allowed[rng.randrange(allowed.size)]) for _ in range(64)]
            closing = [t for t in sample if _STRUCTURAL.intersection(tokens[t])]
            if closing:
                return rng.choice(closing)
        if rng.random() < 0.5:  # a long token: the longest of a small sample
            sample = [int(allowed[rng.randrange(allowed.size)]) for _ in range(8)]
            return max(sample, key=lambda t: (len(tokens[t]), t))
        return int(allowed[rng.randrange(allowed.size)])


def _members(repeated: list[str], pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members as `json.loads` keeps them (the last of a repeated name
    wins), noting the names that repeat in `repeated`."""
    seen: set[str] = set()
    for name, _ in pairs:
        if name in seen:
            repeated.append(name)
        seen.add(name)
    return dict(pairs)


def check_instances(
    engine: str,
    compiled: Compiled,
    schema: Any,
    spec_id: str,
    vocab: Vocabulary,
    valid: Sequence[Any],
    invalid: Sequence[Any],
    *,
    samples: int = 4,
    seed: int = 0,
    max_tokens: int = 256,
    layouts: Sequence[Layout] = ("compact",),
    schema_policies: tuple[SchemaPolicy, ...] = (),
) -> InstanceCounts:
    """Every check above for one engine, spec and vocabulary. `layouts` are the JSON
    layouts valid instances must be accepted in (`paths.POLICY_LAYOUTS` of the engine's
    whitespace policy: compact for all, spaced for outlines' `[ ]?`, pretty for
    flexible whitespace); `schema_policies` the JSON-schema policies it declares."""
    checker = InstanceChecker(engine, compiled, schema, spec_id, vocab, schema_policies)
    try:
        for value in valid:
            checker.check_valid(value, layouts)
        for value in invalid:
            checker.check_invalid(value)
        rng = random.Random(f"{seed}:{spec_id}:{engine}:{vocab.name}")
        for _ in range(samples):
            checker.sample(rng, max_tokens)
    except EngineError as exc:
        checker._fail("engine-error", "", None, str(exc)[:300])
    return checker.counts
