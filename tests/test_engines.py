"""Every engine adapter against the reference (tokensdfa's naive index, used directly).

Over a synthetic vocabulary (UTF-8 fragments, duplicate ids, specials, a size that leaves
the last mask word partly unused), each regex is checked at a shortest path to every
reference state and along random paths sampled from the reference's own masks: at every
step the adapter's full mask, accepting status and refusals must equal the reference's,
modulo each engine's declared policies.
"""

from __future__ import annotations

import random
import re
from collections import deque
from typing import Any

import numpy as np
import pytest

from harness import engines
from harness.engines.base import Engine
from harness.errors import EngineError, SpecError, UnknownName, UnsupportedSpec
from harness.language import converter
from harness.language.converter import schema_to_regex
from harness.language.regex_syntax import ascii_classes
from harness.spec import Spec
from harness.vocab import Vocabulary, synthetic

tokensdfa = pytest.importorskip("tokensdfa")

# 1000 is not a multiple of 32: bits past the last token must stay clear.
VOCAB = synthetic(1000, seed=7)
WALKS = 12
MAX_STEPS = 24
MAX_COVERED_STATES = 200

REGEXES = [
    "[0-9]{1,3}",
    "(ab|cd)+e?",
    r"a(\.a)*",
    "(a|ab)c?",
    "[a-z]{2,5}@[a-z]+\\.(com|org)",
    '"[^"]*"',
    "(true|false|null)",
    r"-?\d+(\.\d+)?",
    # Most tokens allowed: xgrammar then fills with ones, including bits past the vocabulary.
    r"[\x00-\x7f]*",
]

# Bugs of the engines' current versions, not of the adapters (strict: a fix upstream makes
# the test fail, so the entry gets removed).
OUTLINES_FINAL_STATE_BUG = (
    "outlines-core 0.2.14 drops a token that leaves a final state for a non-final one "
    "(finish-and-continue), e.g. 'a(\\.a)*' with tokens {a, .} accepts only 'a'"
)
OUTLINES_LEFTMOST_FIRST = (
    "outlines-core 0.2.14 uses leftmost-first alternation: '(a|ab)' never allows 'ab'"
)
XGRAMMAR_SURROGATES = (
    "xgrammar 0.2.8 lets a negated class continue lead byte ED with A0-BF, i.e. UTF-8 "
    "encoded surrogates U+D800-DFFF, which are not UTF-8"
)
KNOWN_BUGS: dict[tuple[str, str], str] = {
    ("outlines-core", "(ab|cd)+e?"): OUTLINES_FINAL_STATE_BUG,
    ("outlines-core", r"a(\.a)*"): OUTLINES_FINAL_STATE_BUG,
    ("outlines-core", "(a|ab)c?"): OUTLINES_LEFTMOST_FIRST,
    ("outlines-core", r"-?\d+(\.\d+)?"): OUTLINES_FINAL_STATE_BUG,
    ("xgrammar", '"[^"]*"'): XGRAMMAR_SURROGATES,
}


def _available(name: str) -> Engine:
    engine = engines.get(name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")
    return engine


_PREPARED: dict[str, Any] = {}


def _prepared(engine: Engine) -> Any:
    # Once per engine, as the interface intends; every compile reuses it.
    if engine.name not in _PREPARED:
        _PREPARED[engine.name] = engine.prepare(VOCAB)
    return _PREPARED[engine.name]


def _reference(regex: str) -> Any:
    native = tokensdfa.Vocabulary(VOCAB.tokens, VOCAB.eos_id, sorted(VOCAB.special_ids))
    return tokensdfa.NaiveIndex(regex, native)


def _policy_regex(engine: Engine, regex: str) -> str:
    """The regex the reference must run so that it reads classes as the engine declares."""
    if engine.policies.unicode_classes:
        return regex
    return ascii_classes(regex, dict(engine.policies.class_table))


def _allowed(mask: np.ndarray, vocab: Vocabulary) -> set[int]:
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")
    assert not bits[vocab.size :].any(), "bits set past the last token"
    return set(np.flatnonzero(bits[: vocab.size]).tolist())


def _forced(allowed: set[int], accepting: bool, vocab: Vocabulary) -> bool:
    """True when the reference's next byte is forced: not accepting, and every allowed
    token starts with the same byte."""
    firsts = {vocab.tokens[t][0] for t in allowed if t != vocab.eos_id}
    return not accepting and len(firsts) == 1


class Walk:
    """One engine matcher and the reference index advanced in lockstep."""

    def __init__(self, engine: Engine, compiled: Any, ref: Any, rng: random.Random) -> None:
        self.engine = engine
        self.canonical = engine.policies.canonical_forced
        # TokensDFA's canonical_literals mode restricts every literal run, forced or not
        self.literals_only_canonical = engine.policies.canonical_literals
        self.matcher = compiled.matcher()
        self.ref = ref
        self.state: int = ref.initial_state
        self.path: list[int] = []
        self.rng = rng
        self.ref_mask = np.zeros(VOCAB.mask_words, dtype=np.int32)
        self.eng_mask = np.zeros(VOCAB.mask_words, dtype=np.int32)

    def where(self) -> str:
        return f"after {VOCAB.decode(self.path)!r} (ids {self.path})"

    def compare(self) -> tuple[set[int], set[int]]:
        """Check mask, accepting status and refusals here; returns (expected, engine)."""
        self.ref.fill_mask(self.state, self.ref_mask)
        self.eng_mask.fill(-1)  # stale bits must not survive a fill
        self.matcher.fill_mask(self.eng_mask)
        want, accepting = self.expectation(
            _allowed(self.ref_mask, VOCAB), self.ref.is_accepting(self.state)
        )
        got = _allowed(self.eng_mask, VOCAB)
        assert self.matcher.is_accepting() == accepting, self.where()
        if self.literals_only_canonical:
            assert got <= want, f"{self.where()}: extra {sorted(got - want)}"
            assert bool(got) == bool(want), f"{self.where()}: dead end"
        elif self.canonical and _forced(want, accepting, VOCAB):
            # Policy: where the next text is forced, the engine allows only the forced
            # text's canonical tokenization, a non-empty subset of the reference's tokens.
            assert got and got <= want, f"{self.where()}: extra {sorted(got - want)}"
        else:
            assert got == want, (
                f"{self.where()}: reference only {sorted(want - got)[:10]}, "
                f"engine only {sorted(got - want)[:10]}"
            )
        self._check_refusals(want)
        return want, got

    def expectation(self, allowed: set[int], accepting: bool) -> tuple[set[int], bool]:
        """What the engine must answer given the reference's answer: the same here; a
        subclass reads it through policies this comparison does not model."""
        return allowed, accepting

    def _check_refusals(self, want: set[int]) -> None:
        """A token the reference refuses, and EOS, return False and change nothing."""
        outside = sorted(set(range(VOCAB.size)) - want)
        before = self.eng_mask.copy()
        for token in [self.rng.choice(outside)] if outside else []:
            assert not self.matcher.advance(token), f"{self.where()}: took refused {token}"
        assert not self.matcher.advance(VOCAB.eos_id), f"{self.where()}: advanced EOS"
        self.matcher.fill_mask(self.eng_mask)
        assert np.array_equal(self.eng_mask, before), f"{self.where()}: a refusal moved it"

    def advance(self, token: int) -> None:
        assert self.matcher.advance(token), f"{self.where()}: refused allowed token {token}"
        nxt = self.ref.next_state(self.state, token)
        assert nxt is not None
        self.state = nxt
        self.path.append(token)


def compare_with_reference(engine: Engine, regex: str, walk_class: type[Walk] = Walk) -> None:
    """Walk `engine` and the reference in lockstep on `regex`: every reference state by a
    shortest path, then random walks, each back at the start after a reset."""
    ref = _reference(_policy_regex(engine, regex))
    compiled = engine.compile(_prepared(engine), Spec.regex(f"test/{regex}", regex))
    rng = random.Random(f"{engine.name}:{regex}")
    _cover_states(walk_class, engine, compiled, ref, rng)
    for _ in range(WALKS):
        walk = walk_class(engine, compiled, ref, rng)
        for _ in range(MAX_STEPS):
            want, got = walk.compare()
            choices = sorted((want & got) - {VOCAB.eos_id})
            if not choices or (walk.ref.is_accepting(walk.state) and rng.random() < 0.15):
                break
            walk.advance(rng.choice(choices))
        walk.matcher.reset()
        walk.state, walk.path = ref.initial_state, []
        walk.compare()


def _cover_states(
    walk_class: type[Walk], engine: Engine, compiled: Any, ref: Any, rng: random.Random
) -> None:
    """Reach every reference state (up to a bound) through tokens both allow, by a
    shortest path, and compare there, so rare states (a UTF-8 lead byte, say) are checked
    whatever the random walks pick."""
    queue: deque[list[int]] = deque([[]])
    seen = {ref.initial_state}
    while queue and len(seen) <= MAX_COVERED_STATES:
        walk = walk_class(engine, compiled, ref, rng)
        for token in queue.popleft():
            walk.advance(token)
        want, got = walk.compare()
        for token in sorted((want & got) - {VOCAB.eos_id}):
            nxt = ref.next_state(walk.state, token)
            if nxt not in seen:
                seen.add(nxt)
                queue.append([*walk.path, token])


# Engines whose declared policies this mask-by-mask comparison does not model (tokens
# that are not UTF-8 on their own; ending at the first full match) are held to the
# reference under those policies in tests/test_new_engines.py.
COMPARED = [
    n
    for n in engines.ENGINE_NAMES
    if engines.get(n).capabilities.regex
    and not (engines.get(n).policies.utf8_tokens_only or engines.get(n).policies.eager_end)
]
# Engines by the kinds of spec they read (transformers-CFG reads grammars only).
REGEX_ENGINES = [n for n in engines.ENGINE_NAMES if engines.get(n).capabilities.regex]
SCHEMA_ENGINES = [
    n for n in engines.ENGINE_NAMES if engines.get(n).capabilities.json_schema != "no"
]


@pytest.mark.parametrize("regex", REGEXES)
@pytest.mark.parametrize("name", COMPARED)
def test_agrees_with_reference(name: str, regex: str, request: pytest.FixtureRequest) -> None:
    reason = KNOWN_BUGS.get((name, regex))
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError))
    compare_with_reference(_available(name), regex)


@pytest.mark.parametrize("name", REGEX_ENGINES)
def test_bad_regex_names_engine_and_spec(name: str) -> None:
    engine = _available(name)
    with pytest.raises(SpecError) as info:
        engine.compile(_prepared(engine), Spec.regex("test/unclosed", "("))
    assert info.value.engine == name
    assert info.value.spec_id == "test/unclosed"
    assert name in str(info.value) and "test/unclosed" in str(info.value)


@pytest.mark.parametrize("name", SCHEMA_ENGINES)
def test_bad_schema_is_spec_error(name: str) -> None:
    engine = _available(name)
    with pytest.raises(SpecError) as info:
        engine.compile(_prepared(engine), Spec.schema("test/broken", "{"))
    assert (info.value.engine, info.value.spec_id) == (name, "test/broken")


@pytest.mark.parametrize("name", REGEX_ENGINES)
def test_declared_unsupported_feature(name: str) -> None:
    engine = _available(name)
    spec = Spec.regex("test/lookahead", "a(?=b)", features=frozenset({"lookaround"}))
    with pytest.raises(UnsupportedSpec) as info:
        engine.compile(_prepared(engine), spec)
    assert (info.value.engine, info.value.spec_id) == (name, "test/lookahead")


@pytest.mark.parametrize("name", SCHEMA_ENGINES)
def test_schema_example_reaches_accepting(name: str) -> None:
    engine = _available(name)
    schema = {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "tag": {"enum": ["x", "y"]}},
        "required": ["id", "tag"],
    }
    compiled = engine.compile(_prepared(engine), Spec.schema("test/object", schema))
    matcher = compiled.matcher()
    mask = np.zeros(VOCAB.mask_words, dtype=np.int32)
    text = '{"id": 12, "tag": "y"}'
    if engine.policies.canonical_literals:
        # literals come only in their minimal tokenization, not the encoder's
        assert _produces(compiled, text.encode())
        return
    for token in VOCAB.encode(text):
        matcher.fill_mask(mask)
        assert token in _allowed(mask, VOCAB)
        assert matcher.advance(token)
    matcher.fill_mask(mask)
    assert matcher.is_accepting() and VOCAB.eos_id in _allowed(mask, VOCAB)


@pytest.mark.parametrize("name", engines.ENGINE_NAMES)
def test_jump_forward_flag_is_what_the_matchers_do(name: str) -> None:
    """`Engine.jump_forward` (what `tokensieve jumpforward` measures, and which engines it
    skips with a line saying so) holds exactly where the matchers answer `forced_text`."""
    engine = _available(name)
    spec = Spec.regex("test/forced", "abc[0-9]")
    if not engine.capabilities.regex:
        spec = Spec.grammar("test/forced", 'root ::= "abc" [0-9]\n', "gbnf")
    matcher = engine.compile(_prepared(engine), spec).matcher()
    assert (matcher.forced_text() is not None) == engine.jump_forward


def test_wrong_mask_buffer_is_project_error() -> None:
    engine = _available("llguidance")
    compiled = engine.compile(_prepared(engine), Spec.regex("test/digits", "[0-9]+"))
    with pytest.raises(EngineError):
        compiled.matcher().fill_mask(np.zeros(VOCAB.mask_words - 1, dtype=np.int32))


def test_unknown_engine() -> None:
    with pytest.raises(UnknownName):
        engines.get("no-such-engine")


def test_registry_lists_every_engine() -> None:
    assert [e.name for e in engines.all_engines()] == list(engines.ENGINE_NAMES)


def test_declared_schema_policies_are_rules_the_differ_knows() -> None:
    """A JSON-schema policy an engine declares must name a rule the differ can check;
    an unknown name would silently excuse nothing (or, misspelled, hide a bug)."""
    from harness.diff.judge.schema_policies import KNOWN

    for e in engines.all_engines():
        assert set(e.policies.json_schema) <= set(KNOWN), e.name
    assert engines.get("xgrammar").policies.json_schema


@pytest.mark.parametrize("name", converter.NAMES)
def test_schema_converter_tells_unsupported_from_invalid(name: str) -> None:
    """A valid schema the converter cannot handle is unsupported; a schema that is not
    JSON, or breaks its meta-schema, is invalid: decided by the schema, never by the
    converter's message. Either converter; the failure names the engine that asked."""
    if name == converter.OUTLINES:
        pytest.importorskip("outlines_core")
    refused = Spec.schema("s/1", {"type": "string", "format": "regex"})
    with pytest.raises(UnsupportedSpec) as unsupported:
        schema_to_regex(refused, name=name)
    assert (unsupported.value.engine, unsupported.value.spec_id) == ("naive", "s/1")
    with pytest.raises(UnsupportedSpec) as asked:
        schema_to_regex(refused, "tokensdfa", name)
    assert asked.value.engine == "tokensdfa" and f"({name})" in asked.value.message
    with pytest.raises(SpecError) as invalid:
        schema_to_regex(Spec.schema("s/2", '{"type": "object", "required": 3'), name=name)
    assert invalid.value.spec_id == "s/2"
    schema = Spec.schema("s/3", {"type": "object", "properties": {"a": {"type": "integer"}}})
    regex = schema_to_regex(schema, name=name)
    # both read by Python's re; both put outlines-core's one optional space after ':'
    assert re.fullmatch(regex, '{"a": 1}') and re.fullmatch(regex, '{"a":1}')
    assert not re.fullmatch(regex, '{"a":  1}')


def _produces(compiled: Any, text: bytes) -> bool:
    """Some tokenization of `text` walks the engine's masks to an accepting state."""

    def search(path: list[int], rest: bytes) -> bool:
        matcher = compiled.matcher()
        for t in path:
            assert matcher.advance(t)
        if not rest:
            return bool(matcher.is_accepting())
        mask = np.zeros(VOCAB.mask_words, dtype=np.int32)
        matcher.fill_mask(mask)
        return any(
            t != VOCAB.eos_id
            and rest.startswith(VOCAB.tokens[t])
            and search([*path, t], rest[len(VOCAB.tokens[t]) :])
            for t in sorted(_allowed(mask, VOCAB))
        )

    return search([], text)


@pytest.mark.parametrize("name", ["naive", "tokensdfa", "tokensdfa-canonical", "tokensdfa-lazy"])
def test_regex_size_limit_only_where_regex_automata_determinizes(name: str) -> None:
    """The naive reference and canonical mode determinize with regex-automata and refuse
    regexes over EAGER_REGEX_LIMIT characters beforehand; exact TokensDFA, eager or lazy,
    determinizes with its own hash-consed NFA and takes them (here a 1.25 MB alternation
    of one word, which interns to one branch)."""
    engine = _available(name)
    regex = "(" + "|".join(["abc"] * 312_500) + ")d"
    assert len(regex) > 1_000_000
    spec = Spec.regex("test/long", regex)
    if name in ("naive", "tokensdfa-canonical"):
        with pytest.raises(UnsupportedSpec, match="1,000,000-character limit"):
            engine.compile(_prepared(engine), spec)
        return
    compiled = engine.compile(_prepared(engine), spec)
    assert _produces(compiled, b"abcd")
    assert not _produces(compiled, b"abd")


@pytest.mark.parametrize("name", engines.ENGINE_NAMES)
def test_a_kind_an_engine_does_not_read_is_unsupported(name: str) -> None:
    """An engine refuses a spec of a kind its capabilities leave out as unsupported
    (naming itself and the spec), never as invalid and never by failing inside."""
    engine = _available(name)
    caps = engine.capabilities
    specs = [
        (caps.regex, Spec.regex("test/kind-regex", "a+")),
        (caps.json_schema != "no", Spec.schema("test/kind-schema", {"type": "array"})),
        (bool(caps.grammars), Spec.grammar("test/kind-grammar", 'root ::= "a"\n', "gbnf")),
    ]
    for reads, spec in specs:
        if reads:
            engine.compile(_prepared(engine), spec)
            continue
        with pytest.raises(UnsupportedSpec) as info:
            engine.compile(_prepared(engine), spec)
        assert (info.value.engine, info.value.spec_id) == (name, spec.id)
