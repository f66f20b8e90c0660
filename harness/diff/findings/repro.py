"""Standalone repro scripts and one-paragraph explanations for minimized bugs.

A repro imports only the engine's own package and numpy: the vocabulary, prefix and the
mask the regular-language semantics require are written into the script, so an engine's
maintainers can run it without tokensieve. It exits 1 and prints REPRODUCED while the
engine still disagrees, 0 and FIXED once it agrees. Where Python's `re` reads the regex
the same way, the script also proves each "should be allowed" claim by a full match.
"""

from __future__ import annotations

import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

from harness import engines
from harness.diff.findings.protocol_repro import PROTOCOL_CHECK, protocol_explanation
from harness.diff.shrink.minimal import Minimal
from harness.diff.walk.history import (
    BATCH,
    FILL,
    REFUSE,
    RESET,
    ROLLBACK,
    VALIDATE,
    describe,
    walks,
)
from harness.diff.walk.serving import PROTOCOL_WHATS
from harness.embed import comment, literal
from harness.language.grammar import check_notation
from harness.language.regex_syntax import python_regex

# Bytes tried first when completing a match, so witnesses read as text.
_PREFERRED = list(range(0x61, 0x7B)) + list(range(0x30, 0x3A)) + list(range(0x20, 0x7F))
_BYTE_ORDER = list(dict.fromkeys(_PREFERRED + list(range(256))))
MAX_COMPLETION = 64
# States a witness search on a grammar may visit (see `completion`).
GRAMMAR_COMPLETION_STATES = 4000
RUN_TIMEOUT_S = 120.0

SIGNATURE_TEXT = {
    "final-state-exit": "it drops exactly the tokens whose text up to their last byte is a "
    "full match that the last byte leaves: a match reported one byte late ends the path "
    "(finish-and-continue)",
    "utf8-surrogate": "every token it adds spells a UTF-8-encoded surrogate (ED A0-BF), "
    "which is not UTF-8 and so matches no regex over text",
    "ill-formed-utf8": "every token it adds makes the text ill-formed UTF-8 (a byte that no "
    "continuation turns into a character), which no text matches",
    "utf8-overapproximation": "every token it adds stops inside a UTF-8 character that starts "
    "where the spec still matches but that the spec cannot finish: the engine approximates "
    "the UTF-8 byte ranges of a Unicode class, or takes any lead byte",
    "finished-mid-token": "the engine reports the text finished and allows only EOS, where "
    "the text is no sentence: its last token passed through a full match inside its bytes",
    "dot-matches-newline": "every token it adds holds a newline and fits the regex only if "
    "`.` matched newline, which it does not outside (?s)",
    "special-allowed": "the engine allows special or padding ids, which are never text",
    "eos-bit-mismatch": "the EOS bit of the engine's mask contradicts its own accepting status",
    "eos-refused-at-match": "the masks agree, the text so far is a full match, and the engine "
    "refuses EOS",
    "eos-allowed-before-match": "the masks agree, the text so far is no full match, and the "
    "engine allows EOS",
    "leftmost-first": "the engine keeps only what leftmost-first matching keeps: a "
    "lower-priority branch is abandoned once a higher one has matched",
    "anchors-ignored": "the engine's mask is that of the regex with its anchors removed",
    "allof-widened": "the engine reads a subschema holding an allOf of two or more "
    "subschemas as any JSON value, its siblings (`type`, `properties`) included",
    "mask-advance-mismatch": "the engine's own mask allows the token, but advancing by it fails",
    "lone-surrogate-escape": "every token it adds writes a \\u escape of a UTF-16 surrogate "
    "(D800-DFFF) outside a high-low pair: a JSON string that stands for no Unicode text",
    "raw-control-in-string": "every token it adds puts a raw control character "
    "(U+0000-U+001F) inside a JSON string, where JSON requires an escape: the text is no "
    "longer JSON",
    "impossible-date": "every token it adds writes a day of a date (YYYY-MM-DD) that its "
    "month does not have (April 31, February 30, February 29 of a common year, a day of "
    "February beginning with 3): the engine's date grammar ignores the lengths of months",
    "fraction-trailing-zero": "the engine refuses to end a number whose fraction ends in "
    "a zero (`0.50`), a valid JSON number equal to the one without it",
    "stale-after-reset": "a new matcher walking the same tokens answers otherwise: the "
    "engine's matcher, reset after an earlier walk, answers from what that walk left",
    "unclassified": "the difference matches no declared policy and no known bug shape",
    "rollback-stale": "after a rollback the matcher answers otherwise than a new matcher "
    "holding the tokens left: the rollback kept some of the state it undid",
    "draft-check-moved": "checking a draft (validate) changed the matcher's state, which "
    "a check must leave as it was",
    "draft-miscounted": "checking a draft counts otherwise than a new matcher takes its "
    "tokens one by one",
    "refused-token-taken": "the matcher took a token that a new matcher holding the same "
    "tokens refuses (a draft's planted token)",
    "forced-tokens-stale": "after tokens taken with no mask filled between (jump-forward "
    "text consumed as tokens) the matcher answers otherwise than a new matcher",
    "protocol-history": "after the operations of the serving protocol the matcher answers "
    "otherwise than a new matcher holding the same tokens",
    "batch-row-mismatch": "a row of a batch fill differs from that matcher's single fill",
}


def completion(dfa: Any, data: bytes, max_states: int | None = None) -> bytes | None:
    """The shortest bytes s with data+s a full match (readable bytes preferred); None
    past `max_states` states visited (a grammar's reference numbers states by path, so
    its search is bounded)."""
    start = dfa.walk(dfa.initial_state, data)
    if start is None:
        return None
    seen = {start: b""}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        path = seen[state]
        if dfa.is_accepting(state):
            return path
        if len(path) >= MAX_COMPLETION or (max_states is not None and len(seen) > max_states):
            continue
        for byte in _BYTE_ORDER:
            nxt = dfa.walk(state, bytes([byte]))
            if nxt is not None and nxt not in seen:
                seen[nxt] = path + bytes([byte])
                queue.append(nxt)
    return None


class GrammarBytes:
    """A grammar's reference over the 256 single bytes (and EOS), walked as `completion`
    walks a byte DFA: `walk` gives the state after some bytes (None once no sentence
    starts with them), `next` the state after one more byte."""

    def __init__(self, text: str, notation: str) -> None:
        import tokensdfa

        vocab = tokensdfa.Vocabulary([b"<eos>", *(bytes([b]) for b in range(256))], 0, [])
        self.index = tokensdfa.NaiveGrammarIndex(text, vocab, check_notation(notation))
        self.initial_state = self.index.initial_state

    def walk(self, state: int | None, data: bytes) -> int | None:
        for b in data:
            if state is None:
                return None
            state = self.index.next_state(state, b + 1)
        return state

    def next(self, state: int, byte: int) -> int | None:
        return self.index.next_state(state, byte + 1)

    def is_accepting(self, state: int) -> bool:
        return bool(self.index.is_accepting(state))


def _show(data: bytes) -> str:
    return repr(data.decode("utf-8", errors="backslashreplace"))


def witnesses(m: Minimal) -> dict[int, bytes]:
    """For each token the reference allows and the engine does not: a completion."""
    import tokensdfa

    dfa = GrammarBytes(m.grammar, m.notation) if m.grammar else tokensdfa.ByteDfa(m.regex)
    cap = GRAMMAR_COMPLETION_STATES if m.grammar else None
    out: dict[int, bytes] = {}
    for t in sorted(set(m.expected) - set(m.actual) - {0}):
        s = completion(dfa, m.prefix + m.tokens[t], cap)
        if s is not None:
            out[t] = s
    return out


def verified_by_python_re(m: Minimal, found: dict[int, bytes]) -> dict[int, bytes]:
    """The witnesses Python's `re` confirms as full matches (none if it reads the regex
    differently or a witness is not text; none for a grammar)."""
    if m.grammar:
        return {}
    try:
        pattern = python_regex(m.regex)
    except ValueError:  # a shrunk regex Python's re reads otherwise (`a{2}{3}`)
        return {}
    if pattern is None:
        return {}
    out = {}
    for t, s in found.items():
        try:
            text = (m.prefix + m.tokens[t] + s).decode("utf-8")
        except UnicodeDecodeError:
            continue
        if pattern.fullmatch(text):
            out[t] = s
    return out


def explanation(m: Minimal, found: dict[int, bytes]) -> str:
    """One paragraph: what the engine does, what the semantics require, and why."""
    missing = sorted(set(m.expected) - set(m.actual))
    extra = sorted(set(m.actual) - set(m.expected))
    shrunk = (
        f" (shrunk from a {len(m.source_regex)}-character regex)"
        if m.source_regex and m.source_regex != m.regex
        else ""
    )
    if m.grammar:
        subject = f"the {m.notation} grammar {m.grammar[:160]!r}" + (
            "…" if len(m.grammar) > 160 else ""
        )
        if m.engine_grammar:
            subject += f" (which it reads as the {m.engine_notation} tokensieve writes of it)"
    else:
        subject = _regex_subject(m, shrunk)
    if m.what in PROTOCOL_WHATS:
        return protocol_explanation(m, subject, SIGNATURE_TEXT.get(m.rule))
    n = len(walks(m.history))
    history = (
        f"after {n} walk{'s' if n > 1 else ''} ({_show(describe(m.history, m.tokens).encode())}"
        ", masks filled as HISTORY says) and a reset of the matcher, then "
        if m.history
        else ""
    )
    parts = [
        f"{m.engine} {m.version} on {subject} with a {len(m.tokens)}-token vocabulary, "
        f"{history}after the prefix {_show(m.prefix)}:"
    ]
    if m.what == "advance":
        t = missing[0] if missing else m.expected[0]
        parts.append(f"its mask allows token {t} ({_show(m.tokens[t])}) but advancing by it fails.")
        missing = []
    parts += _missing_text(m, missing, found) + _extra_text(m, extra)
    if m.eos_bit_actual is not None and m.eos_bit_actual != m.accepting_actual:
        parts.append(
            f"Its mask's EOS bit is {'set' if m.eos_bit_actual else 'clear'} while it reports "
            f"the text as {'' if m.accepting_actual else 'not '}accepting."
        )
    parts.append(f"Signature {m.rule}: {SIGNATURE_TEXT.get(m.rule, m.rule)}.")
    return " ".join(parts)


def _regex_subject(m: Minimal, shrunk: str) -> str:
    if m.schema:
        return (
            f"the JSON schema {m.schema[:120]!r}"
            + ("…" if len(m.schema) > 120 else "")
            + " (the regex: that schema's texts, read as the engine documents it reads "
            "schemas, in its own JSON dialect)"
        )
    return f"the regex {m.regex[:120]!r}" + ("…" if len(m.regex) > 120 else "") + shrunk


def _language(m: Minimal) -> str:
    return "grammar" if m.grammar else "regex"


def _match(m: Minimal) -> str:
    """What a complete text is called: a sentence of a grammar, a full match of a regex."""
    return "sentence" if m.grammar else "full match"


def _missing_text(m: Minimal, missing: list[int], found: dict[int, bytes]) -> list[str]:
    out = []
    for t in missing:
        if t == 0:
            out.append(
                f"EOS is refused although {_show(m.prefix)} is itself a "
                f"{_match(m)} of the {_language(m)}."
            )
        elif t in found:
            out.append(
                f"token {t} ({_show(m.tokens[t])}) is refused, yet "
                f"{_show(m.prefix + m.tokens[t] + found[t])} is a {_match(m)}, "
                "so it must be allowed."
            )
        else:
            out.append(
                f"token {t} ({_show(m.tokens[t])}) is refused though the {_language(m)} continues."
            )
    return out


def _extra_text(m: Minimal, extra: list[int]) -> list[str]:
    out = []
    for t in extra:
        if t == 0:
            out.append(f"EOS is allowed although {_show(m.prefix)} is not a {_match(m)}.")
        elif t in m.special:
            out.append(f"token {t} is a special id, never text, yet it is allowed.")
        else:
            out.append(
                f"token {t} ({_show(m.tokens[t])}) is allowed, yet no string completes "
                f"{_show(m.prefix + m.tokens[t])} to a {_match(m)}."
            )
    return out


_MAIN = """

def allowed(mask):
    bits = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), bitorder="little")
    return sorted(int(i) for i in np.flatnonzero(bits[: len(TOKENS)]))


def printable(text):
    # escapes for line breaks, control and terminal sequences that TEXT may hold
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def mask_after(ids):
    # the engine's mask and accepting status after `ids` instead of PREFIX
    global PREFIX
    saved, PREFIX = PREFIX, list(ids)
    try:
        return engine_mask()
    finally:
        PREFIX = saved


def problems(mask, accepting, expected):
    # every way the engine's state differs from `expected` (EOS listed iff accepting)
    got = allowed(mask)
    found = []
    want_text = [t for t in expected if t != EOS]
    got_text = [t for t in got if t != EOS]
    print("expected:", [TOKENS[t] for t in want_text], "accepting:", EOS in expected)
    print("engine:  ", [TOKENS[t] for t in got_text], "accepting:", bool(accepting))
    if got_text != want_text:
        only_expected = [TOKENS[t] for t in sorted(set(want_text) - set(got_text))]
        only_engine = [TOKENS[t] for t in sorted(set(got_text) - set(want_text))]
        found.append(f"mask differs: only expected {only_expected}, only engine {only_engine}")
    if bool(accepting) != (EOS in expected):
        found.append(f"accepting is {bool(accepting)}, expected {EOS in expected}")
    if (EOS in got) != bool(accepting):
        found.append(f"the mask's EOS bit is {EOS in got} but accepting is {bool(accepting)}")
    return found


def main():
    print(printable(TITLE))
    print(printable(EXPLANATION))
    for token, rest in WITNESSES_CHECKED_BY_PYTHON_RE.items():
        text = (b"".join(TOKENS[t] for t in PREFIX) + TOKENS[token] + rest).decode()
        assert re.fullmatch(REGEX, text), f"witness {text!r} does not match"
    if WHAT in ("protocol", "batch"):
        found = protocol_problems()
    elif WHAT == "advance":
        token = ADVANCE_TOKEN
        took = engine_advance(token)
        print(f"mask allows token {token} {TOKENS[token]!r}; advance returned {took}")
        found = [] if took else ["advance refused a token the mask allows"]
        if took:
            mask, accepting, _ = mask_after([*PREFIX, token])
            found = problems(mask, accepting, NEXT_EXPECTED)
    else:
        mask, accepting, _ = engine_mask()
        found = problems(mask, accepting, EXPECTED)
    for problem in found:
        print(printable(problem))
    print("REPRODUCED" if found else "FIXED")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
"""


def script(m: Minimal, found: dict[int, bytes], title: str, paragraph: str) -> str:
    """The repro script's source. Every piece of data (the regex, the tokens, the title and
    the explanation, which quote corpus text) enters as a `repr` literal in a code
    position; the docstring is fixed text (see `harness.embed`). It checks every part of
    the finding: the mask's text bits, the accepting status, the EOS bit against the
    accepting status and, for a refused advance, the state the advance reaches."""
    checked = verified_by_python_re(m, found)
    tokens = "".join(f"    {literal(t)},\n" for t in m.tokens)
    # a Minimal stored before it carried its advance token: its expected set was shrunk
    # to that token
    advance_token = m.advance_token
    if advance_token is None:
        advance_token = (sorted(set(m.expected) - {0}) or [0])[0]
    engine = engines.get(m.engine)
    if engine.mask_repro is None:
        raise ValueError(f"engine {m.engine} has no mask repro code")
    protocol = ""
    if m.what in PROTOCOL_WHATS:
        if engine.protocol_repro is None:
            raise ValueError(f"engine {m.engine} has no protocol repro code")
        protocol = engine.protocol_repro + PROTOCOL_CHECK
    package = engine.repro_package
    return (
        "#!/usr/bin/env python3\n"
        '"""A tokensieve finding as a standalone repro: TITLE and EXPLANATION below say what\n'
        "it shows. Needs only the engine's package (PACKAGE) and numpy. Prints REPRODUCED and\n"
        "exits 1 while the bug is present; FIXED and 0 once the engine's mask, accepting\n"
        "status and EOS bit (and, for a refused advance, the state after it) are as\n"
        'expected.\n"""\n\n'
        "import re\nimport sys\n\nimport numpy as np\n\n"
        f"TITLE = {literal(title)}\n"
        f"EXPLANATION = {literal(paragraph)}\n"
        f"PACKAGE = {literal(package)}\n"
        f"REGEX = {literal(m.regex)}\n"
        "# the JSON schema the engine compiles (None: it compiles REGEX); REGEX is then\n"
        "# that schema's language in the engine's own JSON dialect\n"
        f"SCHEMA = {literal(m.schema or None)}\n"
        "# the grammar the engine compiles, in NOTATION (None: it compiles REGEX or\n"
        "# SCHEMA); EXPECTED is then that grammar's language, read scannerless\n"
        f"GRAMMAR = {literal((m.engine_grammar or m.grammar) or None)}\n"
        f"NOTATION = {literal((m.engine_notation or m.notation) or None)}\n"
        f"# token id -> bytes; id 0 is EOS (special, never text)\nTOKENS = [\n{tokens}]\n"
        "EOS = 0\n"
        "# special ids, EOS included: never text\n"
        f"SPECIAL = {literal([0, *m.special])}\n"
        "# what the matcher did before a reset and PREFIX (a bug that shows only on a\n"
        "# reused matcher: stale-after-reset): a token id it took, FILL (its mask filled)\n"
        "# or RESET; [] for a new matcher\n"
        f"FILL = {FILL}\nRESET = {RESET}\n"
        "# for WHAT protocol or batch (the serving protocol: HISTORY is all the matcher\n"
        "# did, and leaves it holding PREFIX): BATCH (its mask filled in a batch of two\n"
        "# beside a new matcher), ROLLBACK - k (k tokens rolled back), VALIDATE - n then\n"
        "# n tokens (a draft checked, nothing taken), REFUSE - t (token t offered, which\n"
        "# must be refused)\n"
        f"BATCH = {BATCH}\nROLLBACK = {ROLLBACK}\nVALIDATE = {VALIDATE}\nREFUSE = {REFUSE}\n"
        f"HISTORY = {literal(list(m.history))}\n"
        f"{comment(_show(m.prefix))}\n"
        f"PREFIX = {literal(list(m.prefix_ids))}\n"
        "# allowed after PREFIX when a token is allowed iff some string completes\n"
        "# PREFIX + token to a full match (EOS iff PREFIX itself is one)\n"
        f"EXPECTED = {literal(sorted(m.expected))}\n"
        f"WHAT = {literal(m.what)}\n"
        f"ADVANCE_TOKEN = {literal(advance_token)}\n"
        "# allowed after PREFIX and ADVANCE_TOKEN (for a refused advance)\n"
        f"NEXT_EXPECTED = {literal(sorted(m.next_expected))}\n"
        f"WITNESSES_CHECKED_BY_PYTHON_RE = {literal(checked)}\n"
        + engine.mask_repro
        + protocol
        + _MAIN
    )


def run(path: Path, timeout: float = RUN_TIMEOUT_S) -> tuple[bool, str]:
    """Run a repro on its own (a fresh interpreter, in its own directory): (reproduced,
    last lines of output)."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f}s"
    output = (done.stdout + done.stderr).strip().splitlines()
    tail = " | ".join(output[-3:])
    return done.returncode == 1 and "REPRODUCED" in done.stdout, tail
