"""Bug signatures: the known shapes of a bug, each a test that can fail.

A signature names a bug only when it explains the *whole* difference at the state, and
each test is written so that a difference it does not describe fails it: a random dropped
token is not `final-state-exit` (that needs exactly the tokens that leave a full match to
be dropped), a random added token is not `utf8-overapproximation` (that needs the regex to
accept everything before the unfinished character). `tests/test_diff.py` holds a positive
and a near-miss case for each. The first signature that holds names the bug:

- `special-allowed`: the engine only adds tokens, each a special or padding id.
- `eos-bit-mismatch`: masks and accepting status agree, but the EOS bit of the engine's
  mask contradicts its own accepting status.
- `eos-refused-at-match`: the masks agree, the text so far is a full match, and the
  engine refuses EOS.
- `eos-allowed-before-match`: the masks agree, the text is not a full match, and the
  engine allows EOS.
- `final-state-exit`: the engine only drops tokens, with the same accepting status, and
  the dropped tokens are exactly those t for which prefix + t minus its last byte is a
  full match and prefix + t is not (a DFA whose match is reported one byte late stopping
  there: outlines-core's finish-and-continue).
- `finished-mid-token`: the engine reports the text finished (accepting, no token but
  EOS allowed) where the reference sees no sentence, and the path's last token passes
  through a full match inside its bytes (kbnf 0.4.2 stopping at a match it met within
  a token).
- `leftmost-first`: the engine only drops tokens and its mask and accepting status are
  those of leftmost-first matching (`harness.diff.judge.leftmost`): a lower-priority branch is
  abandoned once a higher one has matched (`(a|ab)` never allows `ab`).
- `anchors-ignored`: the engine's mask and accepting status are those of the regex with
  its anchors (`^ $ \\A \\z`) removed, and the regex has one.
- `allof-widened` (JSON schemas): the engine's mask and accepting status are those of
  the schema with every subschema holding an `allOf` of two or more subschemas read as
  any value (`harness.diff.walk.dialects`; xgrammar 0.2.8).
- `utf8-surrogate`: the engine only adds tokens, and each one spells a UTF-8-encoded
  surrogate (ED A0-BF), which is not UTF-8 and so matches no regex over text.
- `ill-formed-utf8`: the engine only adds tokens, and each makes the text ill-formed
  UTF-8 (a byte no continuation turns into a character, such as a lone continuation byte
  after `"`): an engine matching token bytes against a grammar's classes one byte at a
  time, as if each byte were a code point (transformers-CFG 0.2.7 on ASCII grammars).
- `utf8-overapproximation`: the engine only adds tokens, and each stops inside an
  unfinished UTF-8 character (by the length its lead byte's high bits announce) that
  starts where the spec still matches: a byte-range approximation of a Unicode class,
  or a decoder taking any lead byte, lets the character's first bytes through.
- `dot-matches-newline`: the engine only adds tokens, each holding a newline, and each
  fits the regex read with `.` matching newline (outside `(?s)`, `.` excludes it).
- `lone-surrogate-escape` (JSON schemas): the engine only adds tokens, and each writes
  (part of) a `\\uXXXX` escape of a UTF-16 surrogate, D800-DFFF, which the reference
  allows only as a high-low pair: a lone one stands for no Unicode character.
- `raw-control-in-string` (JSON schemas): the engine only adds tokens, and each puts a
  raw control character (U+0000-U+001F, which a JSON string must escape) inside a
  string: the text is no longer JSON (xgrammar 0.2.8 in a string with `maxLength`).
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Iterable

from harness.diff.judge.view import ByteDfa, StateView

Signature = Callable[[StateView], str | None]
# Kept tokens checked when a signature needs "no kept token has the shape" (a real
# vocabulary keeps up to 128k at a state; a seeded sample of this many stands for them).
KEPT_SAMPLE = 20000


def passes_through_match(dfa: ByteDfa, prefix: bytes, token: bytes) -> bool:
    """True if `prefix` + some proper prefix of `token` (possibly empty) fully matches."""
    state = dfa.walk(dfa.initial_state, prefix)
    if state is None:
        return False
    for byte in token[:-1] if token else b"":
        if dfa.is_accepting(state):
            return True
        state = dfa.walk(state, bytes([byte]))
        if state is None:
            return False
    return bool(dfa.is_accepting(state)) and len(token) > 0


def leaves_match_last_byte(dfa: ByteDfa, start: int, token: bytes) -> bool:
    """From byte-DFA state `start` (after the prefix): the text up to the token's last
    byte is a full match and the text with it is not."""
    if not token:
        return False
    state = dfa.walk(start, token[:-1]) if len(token) > 1 else start
    if state is None or not dfa.is_accepting(state):
        return False
    after = dfa.walk(state, token[-1:])
    return after is None or not dfa.is_accepting(after)


_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")


def spells_surrogate(prefix: bytes, token: bytes) -> bool:
    """True if `token`, written after `prefix`, completes or contains the two leading
    bytes of a UTF-8-encoded surrogate."""
    joined = prefix[-1:] + token
    return _SURROGATE.search(joined) is not None


# A `\uXXXX` escape (possibly unfinished) not preceded by an escaped backslash.
_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u([0-9a-fA-F]{0,4})")
# Context kept before a token: a whole surrogate pair's escapes.
_ESCAPE_CONTEXT = 12


def escapes_surrogate(prefix: bytes, token: bytes) -> bool:
    """True if `token`, written after `prefix`, writes a hex digit of a `\\u` escape of a
    low surrogate (DC00-DFFF) that no complete high one precedes, or follows a complete
    high surrogate escape (D800-DBFF) with text that cannot begin a low one."""
    head = prefix[-_ESCAPE_CONTEXT:]
    text = head + token
    escapes = list(_ESCAPE.finditer(text))
    for i, m in enumerate(escapes):
        digits = m.group(1)
        if len(digits) < 2 or digits[:1] not in b"dD":
            continue
        # an escape the prefix finished counts only while the token writes what follows
        # a high one, which must begin the low one (`\udAAD` + `\` + token `":`)
        if m.end() < len(head) and not (_high(digits) and m.end() + 4 > len(head)):
            continue
        if digits[1:2] in b"cdefCDEF" and m.end() > len(head):
            before = escapes[i - 1] if i else None
            if before is None or before.end() != m.start() or not _high(before.group(1)):
                return True
        elif _high(digits):
            rest = text[m.end() : m.end() + 4]
            if rest and not _LOW_START.fullmatch(rest) and m.end() < len(text):
                return True
    return False


def _high(digits: bytes) -> bool:
    return len(digits) == 4 and digits[:1] in b"dD" and digits[1:2] in b"89abAB"


# What may follow a high surrogate escape while a low one can still complete the pair.
_LOW_START = re.compile(rb"\\(?:u(?:[dD][c-fC-F]?)?)?|\\u[dD][c-fC-F][0-9a-fA-F]?")


def unfinished_character(data: bytes, by_high_bits: bool = False) -> int | None:
    """Where the well-formed but unfinished UTF-8 character that `data` ends with starts
    (a lead byte C2-F4 followed by fewer continuation bytes 80-BF than it announces), or
    None when `data` does not end inside one. `by_high_bits` reads any lead byte C0-F7 by
    the length its high bits announce, as a decoder that checks no ranges does (C0 and
    C1 start no character; F5-F7 none that Unicode has)."""
    lowest, highest = (0xC0, 0xF7) if by_high_bits else (0xC2, 0xF4)
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: keep looking for the lead
        need = 2 if byte <= 0xDF else 3 if byte <= 0xEF else 4
        if not lowest <= byte <= highest:
            return None
        return len(data) - back if back < need else None
    return None


def ends_mid_character(data: bytes) -> bool:
    """True if `data` ends inside a multi-byte UTF-8 sequence."""
    return unfinished_character(data) is not None


def _same_accepting(view: StateView) -> bool:
    return view.accepting_actual == view.accepting_expected and view.eos_consistent


def _only_adds(view: StateView) -> bool:
    return bool(view.engine_only) and not view.reference_only and _same_accepting(view)


def _only_drops(view: StateView) -> bool:
    return bool(view.reference_only) and not view.engine_only and _same_accepting(view)


def _sample(ids: Iterable[int], seed: str) -> list[int]:
    pool = sorted(ids)
    if len(pool) <= KEPT_SAMPLE:
        return pool
    return random.Random(seed).sample(pool, KEPT_SAMPLE)


def _special_allowed(view: StateView) -> str | None:
    if view.engine_only and view.engine_only <= view.special and not view.reference_only:
        if _same_accepting(view):
            return f"the engine allows {len(view.engine_only)} special or padding ids as text"
    return None


def _eos_bit_mismatch(view: StateView) -> str | None:
    if view.expected == view.actual and view.accepting_actual == view.accepting_expected:
        if not view.eos_consistent:
            said = "accepting" if view.accepting_actual else "not accepting"
            return f"masks agree; the engine says {said} but its mask's EOS bit says otherwise"
    return None


def _eos_refused_at_match(view: StateView) -> str | None:
    if view.expected == view.actual and view.accepting_expected and not view.accepting_actual:
        return "masks agree; the text so far is a full match but the engine refuses EOS"
    return None


def _eos_allowed_before_match(view: StateView) -> str | None:
    if view.expected == view.actual and view.accepting_actual and not view.accepting_expected:
        return "masks agree; the text so far is no full match but the engine allows EOS"
    return None


def _final_state_exit(view: StateView) -> str | None:
    if not _only_drops(view) or view.dfa is None:
        return None
    start = view.dfa.walk(view.dfa.initial_state, view.prefix)
    if start is None:
        return None
    dfa, tokens = view.dfa, view.tokens
    if not all(leaves_match_last_byte(dfa, start, tokens[t]) for t in view.reference_only):
        return None
    kept = _sample(view.actual, f"fse:{view.prefix!r}")
    if any(leaves_match_last_byte(dfa, start, tokens[t]) for t in kept):
        return None  # it keeps tokens of the very shape it drops: not this bug
    return (
        f"the engine drops exactly the {len(view.reference_only)} tokens whose text up to "
        "their last byte is a full match that the last byte leaves"
    )


def _leftmost_first(view: StateView) -> str | None:
    model = view.models.leftmost_first
    if model is None or view.engine_only or not view.reference_only:
        return None
    return model.explains(view)


def _as_read(view: StateView, reading: str, read: str) -> str | None:
    """The reason when the engine's mask and accepting status are those of the
    reference under `reading` (`StateView.policy_reference`), the regex `read`."""
    under = view.policy_reference.get(reading)
    if under is None or not view.eos_consistent:
        return None
    allowed, accepting = under
    if allowed == view.actual and accepting == view.accepting_actual:
        return f"mask and accepting status equal the reference's on {read}"
    return None


def _anchors_ignored(view: StateView) -> str | None:
    return _as_read(view, "anchors-removed", "the regex without anchors")


def _allof_widened(view: StateView) -> str | None:
    return _as_read(
        view,
        "allof-widened",
        "the schema with every allOf of two or more subschemas read as any value",
    )


def _every_added(view: StateView, shape: Callable[[bytes, bytes], bool], what: str) -> str | None:
    """The reason when the engine only adds tokens and each has `shape` after the prefix."""
    if not _only_adds(view):
        return None
    if all(shape(view.prefix, view.tokens[t]) for t in view.engine_only):
        return f"every one of the {len(view.engine_only)} extra tokens {what}"
    return None


def _utf8_surrogate(view: StateView) -> str | None:
    return _every_added(view, spells_surrogate, "spells a surrogate (ED A0-BF)")


def ill_formed_utf8(prefix: bytes, token: bytes) -> bool:
    """Whether `prefix` + `token` is ill-formed UTF-8: some byte no continuation turns
    into a character (a lone continuation byte, a lead byte followed by a byte that
    cannot continue it, a byte that never starts one). A text that only stops inside a
    character is not ill-formed: the next token may finish it."""
    try:
        (prefix + token).decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason != "unexpected end of data"
    return False


def _ill_formed_utf8(view: StateView) -> str | None:
    return _every_added(view, ill_formed_utf8, "makes the text ill-formed UTF-8")


def _viable(view: StateView) -> Callable[[bytes], bool | None] | None:
    """Whether a text is a viable prefix of the spec: the walk's model, else the byte DFA."""
    if view.models.viable is not None:
        return view.models.viable
    dfa = view.dfa
    if dfa is None:
        return None
    return lambda text: dfa.walk(dfa.initial_state, text) is not None


def _utf8_overapproximation(view: StateView) -> str | None:
    viable = _viable(view)
    if not _only_adds(view) or viable is None:
        return None
    for t in view.engine_only:
        data = view.prefix + view.tokens[t]
        start = unfinished_character(data, by_high_bits=True)
        if start is None or not viable(data[:start]):
            return None
    return (
        f"every one of the {len(view.engine_only)} extra tokens stops inside a UTF-8 "
        "character (as its lead byte's high bits announce it) that starts where the spec "
        "still matches but that it cannot finish"
    )


def _finished_mid_token(view: StateView) -> str | None:
    sentence = view.models.sentence
    if sentence is None and view.dfa is not None:
        dfa = view.dfa

        def sentence(text: bytes) -> bool | None:
            state = dfa.walk(dfa.initial_state, text)
            return state is not None and bool(dfa.is_accepting(state))

    ends = not view.actual and view.accepting_actual and not view.accepting_expected
    if sentence is None or not ends or not view.eos_consistent:
        return None
    for back in range(1, len(view.last_token)):
        if sentence(view.prefix[:-back]):
            return (
                f"the engine reports the text finished and allows no token, and its last "
                f"token passes through a full match {back} byte(s) before its end"
            )
    return None


def _dot_matches_newline(view: StateView) -> str | None:
    if not _only_adds(view) or view.dotall_dfa is None:
        return None
    dfa = view.dotall_dfa
    for t in view.engine_only:
        token = view.tokens[t]
        if b"\n" not in token or dfa.walk(dfa.initial_state, view.prefix + token) is None:
            return None
    return (
        f"every one of the {len(view.engine_only)} extra tokens holds a newline and fits "
        "the regex when `.` matches newline"
    )


def _lone_surrogate_escape(view: StateView) -> str | None:
    return _every_added(
        view, escapes_surrogate, "writes a \\u escape of a UTF-16 surrogate that no pair completes"
    )


def raw_control_in_string(prefix: bytes, token: bytes) -> bool:
    """Whether `token`, read after the JSON text `prefix`, puts a raw control character
    (a byte below 0x20) inside a string, where JSON requires an escape (outside strings,
    tab, newline and carriage return are whitespace)."""
    in_string, escaped = _string_state(prefix)
    for b in token:
        if in_string and b < 0x20:
            return True
        in_string, escaped = _read_json_byte(b, in_string, escaped)
    return False


@functools.lru_cache(maxsize=64)
def _string_state(prefix: bytes) -> tuple[bool, bool]:
    """(inside a string, after a backslash) at the end of JSON text `prefix`: read once
    per state, not once per token tried there."""
    in_string, escaped = False, False
    for b in prefix:
        in_string, escaped = _read_json_byte(b, in_string, escaped)
    return in_string, escaped


def _read_json_byte(b: int, in_string: bool, escaped: bool) -> tuple[bool, bool]:
    if escaped:
        return in_string, False
    if in_string and b == 0x5C:
        return True, True
    return (not in_string if b == 0x22 else in_string), False


def _raw_control_in_string(view: StateView) -> str | None:
    return _every_added(
        view, raw_control_in_string, "puts a raw control character (U+0000-U+001F) in a string"
    )


# A date as RFC 3339 writes it (`format: date`, the date of a `date-time`), its day
# possibly unfinished.
_DATE = re.compile(rb"([0-9]{4})-([0-9]{2})-([0-9]{1,2})")


def impossible_date(prefix: bytes, token: bytes) -> bool:
    """Whether `token`, written after `prefix`, writes the day of a `YYYY-MM-DD` date
    that its month does not have: 31 in April, June, September or November, 30 or 31
    in February, 29 in February of a year that is not a leap year (Gregorian), or a
    first digit no day of the month begins with (a 3 in February)."""
    head = prefix[-9:]
    text = head + token
    for m in _DATE.finditer(text):
        if m.end() <= len(head):
            continue  # finished before the token
        year, month = int(m.group(1)), int(m.group(2))
        if not 1 <= month <= 12:
            continue
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        days = (
            29
            if month == 2 and leap
            else 28
            if month == 2
            else 30
            if month in (4, 6, 9, 11)
            else 31
        )
        day = m.group(3)
        if len(day) == 2 and days < int(day) <= 31:
            return True
        if len(day) == 1 and m.end() == len(text) and int(day) * 10 > days:
            return True  # the token ends on a first digit no day of the month has
    return False


def _impossible_date(view: StateView) -> str | None:
    return _every_added(view, impossible_date, "writes a day of a date its month does not have")


# A JSON number value (after `:`, `[` or `,`) whose fraction so far ends in a zero.
_TRAILING_ZERO = re.compile(rb"[:\[,][ \t\n\r]*-?[0-9]+\.[0-9]*0$")


def _fraction_trailing_zero(view: StateView) -> str | None:
    """The engine refuses to end a number whose fraction ends in 0 (`0.50`): it only
    drops tokens, the prefix ends in such a number, and every dropped token begins
    with a byte that ends the number (not a digit, `.`, `e` or `E`)."""
    if not _only_drops(view) or not _TRAILING_ZERO.search(view.prefix):
        return None
    if all(view.tokens[t][:1] not in b"0123456789.eE" for t in view.reference_only):
        return (
            f"every one of the {len(view.reference_only)} dropped tokens ends the number, "
            "whose fraction ends in a zero"
        )
    return None


BUG_SIGNATURES: dict[str, Signature] = {
    "special-allowed": _special_allowed,
    "eos-bit-mismatch": _eos_bit_mismatch,
    "eos-refused-at-match": _eos_refused_at_match,
    "eos-allowed-before-match": _eos_allowed_before_match,
    "final-state-exit": _final_state_exit,
    "finished-mid-token": _finished_mid_token,
    "leftmost-first": _leftmost_first,
    "anchors-ignored": _anchors_ignored,
    "allof-widened": _allof_widened,
    "utf8-surrogate": _utf8_surrogate,
    "ill-formed-utf8": _ill_formed_utf8,
    "utf8-overapproximation": _utf8_overapproximation,
    "dot-matches-newline": _dot_matches_newline,
    "lone-surrogate-escape": _lone_surrogate_escape,
    "raw-control-in-string": _raw_control_in_string,
    "impossible-date": _impossible_date,
    "fraction-trailing-zero": _fraction_trailing_zero,
}
