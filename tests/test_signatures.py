"""Every bug signature and canonical policy on a case it describes and on a near miss it
must not describe (`harness.diff.judge.signatures`, `harness.diff.judge.triage`), and the
leftmost-first model the `leftmost-first` signature compares with."""

from __future__ import annotations

from typing import Any

import pytest

from harness import engines
from harness.diff.judge.leftmost import LeftmostFirst
from harness.diff.judge.signatures import (
    escapes_surrogate,
    ill_formed_utf8,
    impossible_date,
    leaves_match_last_byte,
    raw_control_in_string,
    unfinished_character,
)
from harness.diff.judge.triage import triage
from harness.diff.judge.view import Models, StateView
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.engines.base import Policy
from harness.language import reference

tokensdfa = pytest.importorskip("tokensdfa")

OC = engines.get("outlines-core")  # declares no policy besides Unicode classes
LLG = engines.get("llguidance")  # canonical-forced
CANON = engines.get("tokensdfa-canonical")  # canonical-forced and canonical-literals


def view(
    regex: str,
    tokens: list[bytes],
    prefix: bytes,
    expected: set[int],
    actual: set[int],
    *,
    engine: Any = OC,
    accepting: tuple[bool, bool] = (False, False),
    **kw: Any,
) -> StateView:
    """A state of `regex` after `prefix`; token 0 is EOS; `special` ids may be given."""
    fields: dict[str, Any] = dict(
        engine=engine,
        tokens=[b"<eos>", *tokens],
        prefix=prefix,
        expected=frozenset(expected),
        actual=frozenset(actual),
        accepting_expected=accepting[0],
        accepting_actual=accepting[1],
        forced=b"",
        dfa=tokensdfa.ByteDfa(regex),
        dotall_dfa=None,
        policy_reference={},
        vocab=tiny_vocabulary(tokens),
        regex=regex,
        models=Models(leftmost_first=LeftmostFirst.build(regex)),
    )
    fields.update(kw)
    return StateView(**fields)


def rule(v: StateView) -> str:
    verdict = triage(v)
    return verdict.rule if verdict.kind == "bug" else f"policy:{verdict.rule}"


def test_special_allowed() -> None:
    tokens = [b"a", b"b", b"<pad>"]
    assert rule(view("a+", tokens, b"", {1}, {1, 3}, special=frozenset({3}))) == ("special-allowed")
    # near miss: a text token the reference refuses comes with it
    assert rule(view("a+", tokens, b"", {1}, {1, 2, 3}, special=frozenset({3}))) == ("unclassified")


def test_eos_signatures() -> None:
    tokens = [b"a", b"b"]
    both = (True, True)
    bit = view("a+", tokens, b"a", {1}, {1}, accepting=both, eos_bit_actual=False)
    assert rule(bit) == "eos-bit-mismatch"
    refused = view("a+", tokens, b"a", {1}, {1}, accepting=(True, False))
    assert rule(refused) == "eos-refused-at-match"
    early = view("a+b", tokens, b"a", {1, 2}, {1, 2}, accepting=(False, True))
    assert rule(early) == "eos-allowed-before-match"
    # near misses: the EOS difference comes with a dropped token
    assert rule(view("a+", tokens, b"a", {1}, set(), accepting=(True, False))) == "unclassified"
    assert rule(view("a+", tokens, b"a", {1}, set(), accepting=both, eos_bit_actual=False)) == (
        "unclassified"
    )


def test_final_state_exit() -> None:
    tokens = [b"a", b".", b".a", b"\xe0"]
    regex = r"a(\.a)*"
    assert rule(view(regex, tokens, b"a", {2, 3}, {3}, accepting=(True, True))) == (
        "final-state-exit"
    )
    # near misses: ".a" does not leave a match at its last byte; a non-accepting state
    assert rule(view(regex, tokens, b"a", {2, 3}, set(), accepting=(True, True))) != (
        "final-state-exit"
    )
    assert rule(view(regex, tokens, b"a.", {1}, set())) != "final-state-exit"
    # a one-byte token at a full match leaves it, but keeping another token of that very
    # shape is not this bug
    dot = r"a.*"
    more = [b"a", b"b", b"c"]
    assert rule(view(dot, more, b"a", {2, 3}, {3}, accepting=(True, True))) != ("final-state-exit")
    assert leaves_match_last_byte(tokensdfa.ByteDfa(regex), 0, b"a") is False


def test_leftmost_first() -> None:
    tokens = [b"a", b"ab", b"b"]
    assert rule(view("(a|ab)", tokens, b"", {1, 2}, {1})) == "leftmost-first"
    # near miss: dropping the higher-priority branch's token is not leftmost-first
    assert rule(view("(a|ab)", tokens, b"", {1, 2}, {2})) == "unclassified"


def test_leftmost_first_model() -> None:
    model = LeftmostFirst.build("(a|ab)")
    assert model is not None
    assert model.allows(b"", b"a") and not model.allows(b"", b"ab")
    phone = LeftmostFirst.build(r"[2-9]\d{9}|3\d{6}")
    assert phone is not None
    assert not phone.allows(b"3333333", b"3")  # a match stands just before it
    assert phone.allows(b"3333333", b"33")
    dotted = LeftmostFirst.build(r"a(\.a)*")
    assert dotted is not None and not dotted.allows(b"a", b".") and dotted.allows(b"a", b".a")
    hexes = LeftmostFirst.build("#(?:[0-9a-f]{3,4}){1,2}")
    assert hexes is not None
    start = hexes.after(b"#abcdef")
    assert start is not None and not hexes.at_end(start[0])  # the 3+3 reading was cut
    assert LeftmostFirst.build(r"\bword") is None  # not modelled, so never this signature


def test_anchors_ignored() -> None:
    tokens = [b"a", b"b", b"ab"]
    removed = {"anchors-removed": (frozenset({1, 3}), False)}
    v = view("a^b", tokens, b"", set(), {1, 3}, policy_reference=removed)
    assert rule(v) == "anchors-ignored"
    off = {"anchors-removed": (frozenset({1}), False)}
    assert rule(view("a^b", tokens, b"", set(), {1, 3}, policy_reference=off)) == "unclassified"


def test_allof_widened() -> None:
    """The engine's mask and accepting status are the schema's read with its multi-allOf
    subschemas as any value: named; one token off, or another accepting status: not."""
    tokens = [b"{", b'"', b"1"]
    widened = {"allof-widened": (frozenset({1, 2, 3}), False)}
    v = view(r"\{", tokens, b"", {1}, {1, 2, 3}, policy_reference=widened)
    assert rule(v) == "allof-widened"
    off = {"allof-widened": (frozenset({1, 2}), False)}
    assert rule(view(r"\{", tokens, b"", {1}, {1, 2, 3}, policy_reference=off)) == "unclassified"
    late = {"allof-widened": (frozenset({1, 2, 3}), True)}
    assert rule(view(r"\{", tokens, b"", {1}, {1, 2, 3}, policy_reference=late)) == "unclassified"


def test_utf8_signatures() -> None:
    tokens = ["é".encode(), b"\xed\xa0", b"\xe4", b"z", b"q\xe4", b"a\n"]
    surrogate = view('"[^"]*', tokens, b'"', {1, 4, 5, 6}, {1, 2, 4, 5, 6})
    assert rule(surrogate) == "utf8-surrogate"
    assert rule(view('"[^"]*', tokens, b'"', {1}, {1, 2, 4})) == "unclassified"
    over = view("a[é]", tokens, b"a", {1}, {1, 3})
    assert rule(over) == "utf8-overapproximation"
    # near misses: an ASCII token, and a token whose text before the character is dead
    assert rule(view("a[é]", tokens, b"a", {1}, {1, 4})) == "unclassified"
    assert rule(view("a[é]", tokens, b"a", {1}, {1, 5})) == "unclassified"
    assert unfinished_character(b"a\xe4\xb8") == 1 and unfinished_character(b"a\xff") is None


def test_ill_formed_utf8() -> None:
    """A lone continuation byte after `"` (transformers-CFG reading bytes as code points)
    is ill-formed; a character only begun is not, nor is valid text the engine adds."""
    tokens = ["é".encode(), b"\xa1", b"\xe4", b"z"]
    assert rule(view('"[^"]*', tokens, b'"', {1, 3, 4}, {1, 2, 3, 4})) == "ill-formed-utf8"
    assert rule(view('"[^"a-z]*', tokens, b'"', {1, 3}, {1, 2, 3, 4})) == "unclassified"
    assert ill_formed_utf8(b'"', b"\xa1") and ill_formed_utf8(b"\xe4", b"z")
    assert not ill_formed_utf8(b'"', b"\xe4") and not ill_formed_utf8(b'"\xe4', b"\xb8")


def test_lone_surrogate_escape() -> None:
    """xgrammar's strings: a low surrogate escape alone, or a high one followed by other
    text, is the signature; the two halves of a pair are not."""
    string = '"(?:[^"\\\\]|\\\\u[0-9a-cA-Ce-fE-F][0-9a-fA-F]{3})*"'
    tokens = [b"dc00", b"D83D", b"0041", b"x", b"\\uDE00"]
    low = view(string, tokens, b'"\\u', {2, 3}, {1, 2, 3})
    assert rule(low) == "lone-surrogate-escape"
    after_high = view(string, tokens, b'"\\uD83D', {}, {4})
    assert rule(after_high) == "lone-surrogate-escape"
    # the high one finished in the prefix, the token ends the escape after it otherwise
    # (xgrammar on pydantic schemas: `\udAAD\` + `":`, an escaped quote)
    assert escapes_surrogate(b'"\\udAAD\\', b'":') is True
    assert escapes_surrogate(b'"\\ud830\\', b"name") is True
    assert escapes_surrogate(b'"\\ud830\\', b"udc00") is False
    # near misses: completing a pair, and an ordinary escape the reference refuses
    assert escapes_surrogate(b'"\\uD83D', b"\\uDE00") is False
    assert rule(view(string, tokens, b'"\\u', {2}, {2, 3})) == "unclassified"


def test_raw_control_in_string() -> None:
    """xgrammar's length-bounded strings: a raw control byte inside a string is the
    signature; the same byte as whitespace between tokens, or after the string has
    closed, is not."""
    string = '\\{"t":"[^"\\\\\\x00-\\x1f]{0,3}"\\}'
    tokens = [b"a", b"\x00", b"b\x1f", b"\n", b'"}']
    raw = view(string, tokens, b'{"t":"', {1, 5}, {1, 2, 3, 4, 5})
    assert rule(raw) == "raw-control-in-string"
    assert raw_control_in_string(b'{"t":', b"\n") is False  # whitespace, outside
    assert raw_control_in_string(b'{"t":"\\\\', b"\x00") is True  # after an escaped backslash
    assert raw_control_in_string(b'{"t":"\\', b"\n") is True  # no escape reads a raw byte
    assert raw_control_in_string(b'{"t":"a"', b"\x00") is False  # the string has closed
    # near miss: one extra token is an ordinary character the reference refuses
    near = view(string, [*tokens, b"\\q"], b'{"t":"', {1, 5}, {1, 2, 5, 6})
    assert rule(near) == "unclassified"


def test_impossible_date() -> None:
    """xgrammar's `format: date` (on a pydantic schema): a day its month does not have is
    the signature; the last day of each month, and leap days of leap years, are not."""
    date = '"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"'
    tokens = [b"30", b"31", b"29", b"28"]
    assert rule(view(date, tokens, b'"1111-11-', {1, 3, 4}, {1, 2, 3, 4})) == "impossible-date"
    assert impossible_date(b'"2023-02-', b"29") is True
    assert impossible_date(b'"2024-02-', b"29") is False  # a leap year
    assert impossible_date(b'"1900-02-', b"29") is True  # a century, not a leap year
    assert impossible_date(b'"2000-02-', b"29") is False  # 400 years: a leap year
    assert impossible_date(b'"2024-12-', b"31") is False
    assert impossible_date(b'"2024-04-3', b"1") is True  # the token writes the last digit
    assert impossible_date(b'"2024-04-31', b'"') is False  # finished before the token
    assert impossible_date(b'"0202-02-', b"3") is True  # no day of February begins so
    assert impossible_date(b'"0202-03-', b"3") is False
    # near miss: one extra token is a day no month has
    near = view(date, [*tokens, b"32"], b'"1111-11-', {1, 3, 4}, {1, 2, 3, 4, 5})
    assert rule(near) != "impossible-date"


def test_fraction_trailing_zero() -> None:
    """llguidance on `exclusiveMinimum: 0, exclusiveMaximum: 1` (a pydantic `gt=0, lt=1`)
    will not end `0.50`: refusing every token that ends the number is the signature;
    refusing a further digit, or ending a fraction without a trailing zero, is not."""
    number = '\\{"c":0\\.[0-9]*[1-9][0-9]*[ ]?\\}'
    tokens = [b"}", b" }", b"5", b"0"]
    assert rule(view(number, tokens, b'{"c":0.50', {1, 2, 3, 4}, {3, 4})) == (
        "fraction-trailing-zero"
    )
    # near misses: a digit dropped too, and a fraction ending in 5
    assert rule(view(number, tokens, b'{"c":0.50', {1, 2, 3, 4}, {4})) == "unclassified"
    assert rule(view(number, tokens, b'{"c":0.55', {1, 2, 3, 4}, {3, 4})) == "unclassified"


def test_every_signature_has_a_repro_sentence() -> None:
    """A repro names its signature and says what it means (`repro.SIGNATURE_TEXT`); a
    signature without a sentence printed its name twice."""
    from harness.diff.findings.repro import SIGNATURE_TEXT
    from harness.diff.judge.signatures import BUG_SIGNATURES

    assert set(BUG_SIGNATURES) <= set(SIGNATURE_TEXT)


def test_dot_matches_newline() -> None:
    tokens = [b"a", b"a\n", b"\n", b"ab"]
    dotall = tokensdfa.ByteDfa("(?s:a.b)")
    assert rule(view("a.b", tokens, b"", {1, 4}, {1, 2, 4}, dotall_dfa=dotall)) == (
        "dot-matches-newline"
    )
    # near miss: the newline does not fit even with `.` matching it
    assert rule(view("a.b", tokens, b"a", {}, {3, 2}, dotall_dfa=dotall)) == "unclassified"


def test_canonical_forced_keeps_exactly_the_encoder_first_token() -> None:
    tokens = [b"a", b".", b".a", b".a.a"]
    forced = dict(engine=LLG, forced=b".a")
    assert rule(view(r"a(\.a)*", tokens, b"a", {2, 3, 4}, {3}, **forced)) == (
        "policy:canonical-forced"
    )
    # near misses: a second spelling kept beside it, the canonical token dropped
    assert rule(view(r"a(\.a)*", tokens, b"a", {2, 3, 4}, {3, 4}, **forced)) != (
        "policy:canonical-forced"
    )
    assert rule(view(r"a(\.a)*", tokens, b"a", {2, 3, 4}, {2}, **forced)) != (
        "policy:canonical-forced"
    )


def test_canonical_literals_needs_the_mode_s_own_mask() -> None:
    tokens = [b"c", b"ca", b"cat", b"cats", b"s"]
    same = {"canonical-literals": (frozenset({3}), False)}
    args = ("(cat)s?", tokens, b"", {1, 2, 3, 4})
    assert rule(view(*args, {3}, engine=CANON, policy_reference=same)) == (
        "policy:canonical-literals"
    )
    # near miss: a subset, but not the one canonical literals prescribe
    assert rule(view(*args, {2}, engine=CANON, policy_reference=same)) == "unclassified"


def test_utf8_overapproximation_reads_lead_bytes_by_their_high_bits() -> None:
    """A lead byte C0 (which starts no character, but announces two bytes) beside C3
    counts as a character begun (alone it is `ill-formed-utf8`, the first to hold);
    F8, which announces nothing, does not."""
    tokens = ["é".encode(), b"\xc0", b"\xf8", b"\xc3"]
    assert rule(view("a[é]", tokens, b"a", {1}, {1, 2, 4})) == "utf8-overapproximation"
    assert rule(view("a[é]", tokens, b"a", {1}, {1, 3, 4})) == "unclassified"
    assert unfinished_character(b"a\xc0") is None
    assert unfinished_character(b"a\xc0", by_high_bits=True) == 1


def _grammar_models(grammar: str, tokens: list[bytes]) -> Models:
    """The walk's byte-level models of a GBNF grammar: its reference's own answers."""
    index = tokensdfa.NaiveGrammarIndex(
        grammar, reference.native_vocabulary(tiny_vocabulary(tokens)), "gbnf"
    )
    return Models(sentence=index.accepts, viable=index.viable)


def test_utf8_overapproximation_on_a_grammar() -> None:
    """With no byte DFA the signature asks the grammar's reference whether the text
    before the unfinished character is viable."""
    grammar = 'root ::= "a" [一-龥]'
    tokens = ["一".encode(), b"\xe4", b"\xc3", b"b\xc3"]
    models = _grammar_models(grammar, tokens)
    over = view("", tokens, b"a", {1, 2}, {1, 2, 3}, dfa=None, models=models)
    assert rule(over) == "utf8-overapproximation"
    # near miss: the text before the character ("ab") is no viable prefix
    dead = view("", tokens, b"a", {1, 2}, {1, 2, 4}, dfa=None, models=models)
    assert rule(dead) == "unclassified"


def test_finished_mid_token() -> None:
    """kbnf's reading of `a(bc)?`: the token `ab` passes through the match `a` and the
    engine reports the text finished. A last token of one byte passes through nothing."""
    tokens = [b"ab", b"b", b"c", b"a"]
    done = view("a(bc)?", tokens, b"ab", {3}, set(), accepting=(False, True), last_token=b"ab")
    assert rule(done) == "finished-mid-token"
    one_byte = view("a(bc)?", tokens, b"ab", {3}, set(), accepting=(False, True), last_token=b"b")
    assert rule(one_byte) == "unclassified"
    # near miss: a finished engine allows no token, and this one allows `a`
    more = view("a(bc)?", tokens, b"ab", {3}, {4}, accepting=(False, True), last_token=b"ab")
    assert rule(more) == "unclassified"
    grammar = 'root ::= "a" ("bc")?'
    models = _grammar_models(grammar, tokens)
    on_grammar = view(
        "",
        tokens,
        b"ab",
        {3},
        set(),
        accepting=(False, True),
        last_token=b"ab",
        dfa=None,
        models=models,
    )
    assert rule(on_grammar) == "finished-mid-token"


def test_signature_beside_a_policy_reading() -> None:
    """llguidance refuses a space its greedy lexing refuses (its policy) and, at the
    same state, adds a surrogate (a bug): against its policy's reading the surrogate
    alone is the difference, and its signature names the bug. Without the reading, or
    with a reading that does not account for the space, nothing names it."""
    tokens = [b" ", b'"', b"\xed\xa0", b"a"]
    greedy = Policy.GREEDY_LEXEMES
    reading = {greedy: (frozenset({2, 4}), False)}
    both = view('"[^"]*"', tokens, b'"', {1, 2, 4}, {2, 3, 4}, engine=LLG, policy_reference=reading)
    verdict = triage(both)
    assert (verdict.rule, verdict.kind) == ("utf8-surrogate", "bug") and greedy in verdict.why
    assert rule(view('"[^"]*"', tokens, b'"', {1, 2, 4}, {2, 3, 4}, engine=LLG)) == "unclassified"
    wide = {greedy: (frozenset({1, 2, 4}), False)}
    off = view('"[^"]*"', tokens, b'"', {1, 2, 4}, {2, 3, 4}, engine=LLG, policy_reference=wide)
    assert rule(off) == "unclassified"
    # an engine that does not follow the policy gets no reading
    other = view('"[^"]*"', tokens, b'"', {1, 2, 4}, {2, 3, 4}, policy_reference=reading)
    assert rule(other) == "unclassified"
