"""The repro scripts of serving-protocol findings (`harness.diff.walk.serving`): the
paragraph that explains one, and the check the script runs (`PROTOCOL_CHECK`), joined to
the engine's part (`Engine.protocol_repro`, which defines `_new()`) and to the common
script of `harness.diff.findings.repro`. The script replays HISTORY through the engine's
own calls, notes what broke the protocol on the way, and holds the matcher to a new one
walking PREFIX (the tokens the history leaves it holding)."""

from __future__ import annotations

from harness.diff.shrink.minimal import Minimal
from harness.diff.walk.history import narrate


def protocol_explanation(m: Minimal, subject: str, signature: str | None) -> str:
    """The paragraph of a serving-protocol finding: what the matcher was made to do, and
    how it then differs from a new matcher holding the same tokens."""
    missing = sorted(set(m.expected) - set(m.actual))
    extra = sorted(set(m.actual) - set(m.expected))
    parts = [
        f"{m.engine} {m.version} on {subject} with a {len(m.tokens)}-token vocabulary, driven "
        f"as a server drives it ({narrate(m.history, m.tokens)!r}), holding the prefix "
        f"{m.prefix.decode('utf-8', 'backslashreplace')!r}:",
        (signature or "it breaks the serving protocol") + ".",
    ]
    if missing or extra:
        parts.append(
            f"Against the reference its mask lacks {len(missing)} and adds {len(extra)} "
            "tokens; the repro holds it to a new matcher of the same engine walking PREFIX."
        )
    return " ".join(parts)


# The protocol check of a repro script (WHAT protocol or batch): the engine's part
# (`Engine.protocol_repro`) defines `_new()`, a new matcher with take, fill, accepting,
# reset, rollback, validate and batch through the engine's own calls.
PROTOCOL_CHECK = """

def _bare(make):
    # make() with no HISTORY and no PREFIX: a new matcher at the start
    global HISTORY, PREFIX
    saved = HISTORY, PREFIX
    HISTORY, PREFIX = [], []
    try:
        return make()
    finally:
        HISTORY, PREFIX = saved


def _takes(held, draft):
    m = _new()
    for t in held:
        assert m.take(t)
    for i, t in enumerate(draft):
        if not m.take(t):
            return i
    return len(draft)


def _rows_wrong(m):
    # m beside a new matcher in a batch of two: the first row unlike its single fill
    other = _new()
    rows = np.zeros((2, (len(TOKENS) + 31) // 32), dtype=np.int32)
    m.batch(other, rows)
    for i, each in enumerate((m, other)):
        single = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
        each.fill(single)
        if allowed(single) != allowed(rows[i]):
            return i
    return None


def replay_history():
    # HISTORY through the engine's own calls; what broke the protocol on the way
    m, held, broken, i = _new(), [], [], 0
    scratch = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
    while i < len(HISTORY):
        op, i = HISTORY[i], i + 1
        if op >= 0:
            if m.take(op):
                held.append(op)
            else:
                broken.append(f"refused token {op} {TOKENS[op]!r}")
        elif op == FILL:
            m.fill(scratch)
        elif op == RESET:
            m.reset()
            held.clear()
        elif op == BATCH:
            row = _rows_wrong(m)
            if row is not None:
                broken.append(f"row {row} of a batch of two differs from its single fill")
        elif op > VALIDATE:
            m.rollback(ROLLBACK - op)
            del held[len(held) - (ROLLBACK - op) :]
        elif op > REFUSE:
            draft, i = HISTORY[i : i + VALIDATE - op], i + VALIDATE - op
            counted, want = m.validate(draft), _takes(held, draft)
            if counted != want:
                broken.append(f"validate counted {counted} of a draft; a new matcher takes {want}")
        elif m.take(REFUSE - op):
            broken.append(f"took token {REFUSE - op}, which it must refuse")
    return m, broken


def protocol_problems():
    m, found = replay_history()
    mask = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
    m.fill(mask)
    fresh = _new()
    for t in PREFIX:
        assert fresh.take(t)
    theirs = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
    fresh.fill(theirs)
    print("reference:", [TOKENS[t] for t in EXPECTED if t != EOS], "accepting:", EOS in EXPECTED)
    print("new matcher:", [TOKENS[t] for t in allowed(theirs) if t != EOS], fresh.accepting())
    print("this matcher:", [TOKENS[t] for t in allowed(mask) if t != EOS], m.accepting())
    if allowed(mask) != allowed(theirs) or bool(m.accepting()) != bool(fresh.accepting()):
        found.append("after HISTORY it answers otherwise than a new matcher walking PREFIX")
    return found
"""
