"""Jump-forward: how much of each output the grammar forces, per engine and tokenizer.

Along a token path of a valid output, at every state:
- a token is *forced (single)* when the engine's mask allows exactly that one token and
  EOS is not allowed: decoding it needs no model call;
- a token is *forced (text)* when its bytes lie inside the text the grammar forces from
  that state (`Matcher.forced_text()`): the share MaskBench calls fast-forward tokens.

Then decoding of the same output is simulated with jump-forward (SGLang's compressed FSM):
wherever forced text exists it is appended at once, and every other token is decoded one
step at a time, following the output's text. Two ways of appending are compared:
- *naive*: append the canonical tokens of the forced text to the tokens so far;
- *retokenized*: re-encode the whole output so far after each jump, so tokens may merge
  across the jump's boundary.
`boundary_differs` counts the jumps where the two token sequences differ — the boundary
problem the SGLang write-up describes. Steps saved are against decoding the output's own
canonical tokenization token by token (plus EOS).

Forced texts are also compared state by state across engines; a difference is triaged as
`char-granularity` (one side stops at a character boundary, e.g. xgrammar returns str),
`shorter` (a peer forces a strict prefix of what the language forces: it saves less but is
not wrong), or `overreach` (an engine forces text the reference index does not force: a
bug) — checked against the naive index's mask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from harness.engines.base import Compiled, Matcher, allowed_ids
from harness.vocab import Vocabulary


@dataclass
class PathJump:
    spec_id: str
    engine: str
    vocab: str
    tokens: int
    forced_single: int = 0
    forced_text: int = 0
    jumps_naive: int = 0
    jumps_retok: int = 0
    steps_plain: int = 0
    steps_naive: int = 0
    steps_retok: int = 0
    boundary_differs: int = 0
    note: str = ""

    @property
    def saved_naive(self) -> int:
        return self.steps_plain - self.steps_naive

    @property
    def saved_retok(self) -> int:
        return self.steps_plain - self.steps_retok

    def row(self) -> dict[str, Any]:
        return {**asdict(self), "saved_naive": self.saved_naive, "saved_retok": self.saved_retok}


@dataclass
class ForcedDisagreement:
    spec_id: str
    vocab: str
    prefix: str
    step: int
    forced: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)


def complete_utf8(data: bytes) -> bytes:
    """The longest prefix of `data` that ends on a character boundary."""
    for cut in range(len(data), max(len(data) - 4, -1), -1):
        try:
            data[:cut].decode("utf-8")
            return data[:cut]
        except UnicodeDecodeError:
            continue
    return b""


def forced_shares(matcher: Matcher, vocab: Vocabulary, ids: Sequence[int], out: PathJump) -> None:
    """Count forced tokens along `ids` (one mask fill and one forced-text call per step)."""
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    for step, t in enumerate(ids):
        matcher.fill_mask(mask)
        allowed = allowed_ids(mask, vocab.size)
        if len(allowed) == 1 and allowed[0] == t:
            out.forced_single += 1
        forced = matcher.forced_text()
        token = vocab.tokens[t]
        if forced and token and forced.startswith(token):
            out.forced_text += 1
        if not matcher.advance(t):
            out.note = f"refused token {step} of the path"
            return


def _decode_one(matcher: Matcher, vocab: Vocabulary, rest: bytes) -> int | None:
    """The token a model following the output would emit next: the encoder's first token
    of the remaining text, or else the longest allowed token that the text starts with."""
    text = complete_utf8(rest).decode("utf-8")
    if text:
        first = vocab.encode(text)[:1]
        if first and rest.startswith(vocab.tokens[first[0]]) and matcher.advance(first[0]):
            return first[0]
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    matcher.fill_mask(mask)
    best = None
    for t in allowed_ids(mask, vocab.size):
        tok = vocab.tokens[int(t)]
        if tok and rest.startswith(tok) and (best is None or len(tok) > len(vocab.tokens[best])):
            best = int(t)
    if best is not None and matcher.advance(best):
        return best
    return None


def simulate(
    compiled: Compiled, vocab: Vocabulary, text: bytes, retokenize: bool
) -> tuple[int, int, int, str]:
    """Decode `text` with jump-forward; returns (decode steps incl. EOS, jumps, boundary
    differences, note)."""
    matcher = compiled.matcher()
    out: list[int] = []
    pos = steps = jumps = differs = 0
    while pos < len(text):
        forced = complete_utf8(matcher.forced_text() or b"")
        if forced and not text.startswith(forced, pos):
            return steps, jumps, differs, f"forced text {forced!r} contradicts a valid output"
        if forced:
            jumps += 1
            appended = vocab.encode(forced.decode("utf-8"))
            whole = vocab.encode(text[: pos + len(forced)].decode("utf-8", "surrogateescape"))
            if out + appended != whole:
                differs += 1
            pos += len(forced)
            if retokenize:
                out = whole
                matcher = compiled.matcher()
                seq = out
            else:
                out = out + appended
                seq = appended
            if not all(matcher.advance(t) for t in seq):
                return steps, jumps, differs, "engine refused the tokens of its own forced text"
            continue
        token = _decode_one(matcher, vocab, text[pos:])
        if token is None:
            return steps, jumps, differs, f"no allowed token continues the output at byte {pos}"
        out.append(token)
        steps += 1
        pos += len(vocab.tokens[token])
    return steps + 1, jumps, differs, ""


def analyze_path(
    engine: str, compiled: Compiled, vocab: Vocabulary, spec_id: str, text: str, ids: Sequence[int]
) -> PathJump | None:
    """Every figure for one path, or None when the engine exposes no forced text."""
    if compiled.matcher().forced_text() is None:
        return None
    data = text.encode()
    result = PathJump(
        spec_id, engine, vocab.name, len(ids), steps_plain=len(vocab.encode(text)) + 1
    )
    forced_shares(compiled.matcher(), vocab, ids, result)
    result.steps_naive, result.jumps_naive, result.boundary_differs, note = simulate(
        compiled, vocab, data, retokenize=False
    )
    result.steps_retok, result.jumps_retok, _, note2 = simulate(
        compiled, vocab, data, retokenize=True
    )
    result.note = "; ".join(n for n in (result.note, note, note2) if n)
    return result


def triage_forced(
    forced: dict[str, bytes], reference_allowed: Sequence[bytes], accepting: bool
) -> dict[str, str]:
    """Verdict per engine on its forced text at one state, given the reference mask's
    token texts there. The language forces `f` iff every allowed token agrees with `f` on
    their common length and EOS is not allowed."""

    def consistent(f: bytes) -> bool:
        if not f:
            return True
        if accepting:
            return False
        return all(tok[: len(f)] == f[: len(tok)] for tok in reference_allowed if tok)

    longest = max(forced.values(), key=len)
    verdicts = {}
    for name, f in forced.items():
        if not consistent(f):
            verdicts[name] = "overreach"
        elif f == longest:
            verdicts[name] = "agree"
        elif longest.startswith(f) and complete_utf8(longest) == f:
            verdicts[name] = "char-granularity"
        elif longest.startswith(f):
            verdicts[name] = "shorter"
        else:
            verdicts[name] = "conflict"
    return verdicts


def compare_forced(
    matchers: dict[str, Matcher],
    reference: Any,
    vocab: Vocabulary,
    spec_id: str,
    ids: Sequence[int],
) -> tuple[int, list[ForcedDisagreement]]:
    """Walk `ids` with every matcher and the reference index in lockstep; at each state
    where the engines' forced texts differ, record and triage the difference. Returns the
    number of states compared and the disagreements."""
    found: list[ForcedDisagreement] = []
    state = reference.initial_state
    compared = 0
    for step, t in enumerate([*ids, None]):
        forced = {n: m.forced_text() or b"" for n, m in matchers.items()}
        compared += 1
        if len(set(forced.values())) > 1:
            allowed = [vocab.tokens[i] for i in reference.allowed(state) if i != vocab.eos_id]
            verdicts = triage_forced(forced, allowed, bool(reference.is_accepting(state)))
            found.append(
                ForcedDisagreement(
                    spec_id,
                    vocab.name,
                    vocab.decode(list(ids[:step])).decode("utf-8", "replace"),
                    step,
                    {n: f.decode("utf-8", "replace") for n, f in forced.items()},
                    verdicts,
                )
            )
        if t is None:
            break
        nxt = reference.next_state(state, t)
        if nxt is None or not all(m.advance(t) for m in matchers.values()):
            break
        state = nxt
    return compared, found
