"""Known upstream bugs of the pinned lm-format-enforcer and Formatron releases, each
shown minimally by a strict xfail naming it: a fix upstream makes its test fail, so the
entry gets removed; and the vocabulary lm-format-enforcer cannot build, made a project
error.
"""

from __future__ import annotations

import pytest
from new_engine_helpers import (
    FORMATRON,
    FORMATRON_QUOTING,
    KBNF_FINISHED_MID_TOKEN,
    KBNF_REFUSAL_MOVES_STATE,
    LMFE,
    LMFE_ALPHABET,
    LMFE_JSON_STRING_POPS,
    LMFE_LITERAL_ITEMS,
    LMFE_RAW_CONTROL,
    mask_of,
    reference_mask,
    tiny_matcher,
)
from test_engines import VOCAB, _available, _prepared

from harness.diff.shrink.minimize import tiny_vocabulary
from harness.errors import EngineError, UnsupportedSpec
from harness.spec import Spec


@pytest.mark.xfail(reason=LMFE_ALPHABET, strict=True)
def test_lmfe_bug_alphabet() -> None:
    engine = _available(LMFE)
    # "中" only ever follows another character in a token: it starts none
    vocab, matcher = tiny_matcher(
        engine, [b'"', b"x", "x中".encode()], Spec.regex("t/s", '"[^"]*"')
    )
    assert matcher.advance(1)
    assert mask_of(matcher, vocab) == reference_mask('"[^"]*"', vocab, (1,)) == {1, 2, 3}


@pytest.mark.xfail(reason=LMFE_JSON_STRING_POPS, strict=True)
def test_lmfe_bug_json_string_pops_the_object() -> None:
    engine = _available(LMFE)
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    tokens = [b'{"s":"', "x中".encode(), b'"}', b"x"]
    vocab, matcher = tiny_matcher(engine, tokens, Spec.schema("t/s", schema))
    assert matcher.advance(1)
    if matcher.advance(2):  # allowed, as the free-text shortcut says: then it must go on
        assert not matcher.is_accepting()
        assert 3 in mask_of(matcher, vocab)


@pytest.mark.xfail(reason=LMFE_RAW_CONTROL, strict=True)
def test_lmfe_bug_raw_control_character() -> None:
    engine = _available(LMFE)
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    vocab, matcher = tiny_matcher(engine, [b'{"s":"', b"\t", b'"}'], Spec.schema("t/s", schema))
    assert matcher.advance(1)
    assert 2 not in mask_of(matcher, vocab)


@pytest.mark.xfail(reason=LMFE_LITERAL_ITEMS, strict=True)
def test_lmfe_bug_array_of_literals() -> None:
    engine = _available(LMFE)
    takes = {}
    for item, typ in (("1", "integer"), ("true", "boolean")):
        schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": typ}}}}
        compiled = engine.compile(_prepared(engine), Spec.schema(f"t/{typ}", schema))
        text = '{"a":[' + ",".join([item] * 12) + "]}"
        matcher = compiled.matcher()
        ok = all(matcher.advance(VOCAB.tokens.index(bytes([b]))) for b in text.encode())
        takes[typ] = ok and matcher.is_accepting()
    assert takes == {"integer": True, "boolean": True}


@pytest.mark.xfail(reason=KBNF_FINISHED_MID_TOKEN, strict=True)
def test_formatron_bug_finished_mid_token() -> None:
    engine = _available(FORMATRON)
    vocab, matcher = tiny_matcher(engine, [b"a", b"ab", b"c", b"b"], Spec.regex("t/abc", "a(bc)?"))
    assert mask_of(matcher, vocab) == {1, 2}
    assert matcher.advance(2)
    assert not matcher.is_accepting()  # "ab" is no match of a(bc)?
    assert mask_of(matcher, vocab) == {3}


@pytest.mark.xfail(reason=FORMATRON_QUOTING, strict=True, raises=UnsupportedSpec)
@pytest.mark.parametrize("text", ["it's", "a\\b"])
def test_formatron_bug_quoting(text: str) -> None:
    engine = _available(FORMATRON)
    schema = {"type": "object", "properties": {"k": {"enum": [text]}}, "required": ["k"]}
    engine.compile(_prepared(engine), Spec.schema("t/quote", schema))


@pytest.mark.xfail(reason=KBNF_REFUSAL_MOVES_STATE, strict=True)
def test_kbnf_bug_refusal_moves_state() -> None:
    """Driven directly (the adapter checks the mask first, so its `advance` keeps the
    state, as the comparisons above show)."""
    _available(FORMATRON)
    import kbnf

    tokens = {1: b"r", 2: b"bssmbhbrej", 3: b"@", 4: b"a"}
    vocab = kbnf.Vocabulary(
        {i: kbnf.Token(t) for i, t in tokens.items()}, {i: t.decode() for i, t in tokens.items()}
    )
    engine = kbnf.InternalEngine("start ::= #'[a-z]{2,5}@[a-z]+';", vocab, None)
    engine.try_accept_new_token(1)
    with pytest.raises(ValueError):
        engine.try_accept_new_token(2)
    engine.compute_allowed_token_ids()
    assert engine.get_allowed_token_ids_from_last_computation() == [4]  # "r@" is no match


def test_lmfe_vocabulary_it_cannot_build_is_engine_error() -> None:
    """It asserts that some token fits inside a JSON string; a tiny vocabulary (as the
    minimizer builds) may have none: a project error, not an AssertionError."""
    engine = _available(LMFE)
    for tokens in ([b'"x'], ["中".encode()[:1]]):
        with pytest.raises(EngineError) as info:
            engine.prepare(tiny_vocabulary(tokens))
        assert info.value.engine == LMFE
