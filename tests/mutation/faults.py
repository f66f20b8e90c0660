"""Seeded faults for the mutation suite: what a mutant of TokensDFA exact does wrong.

Each fault kind is a deterministic function of the path taken so far, so the mutant
adapter (`tests.mutation.mutants`) and the standalone repro script the differ writes for
it behave identically: the script embeds the source of the functions below (they need
only numpy and the `tokensdfa` index), never anything from a corpus. A fault touches the
mask, the accepting status, the EOS bit, or the next state; some act only deep in a
walk or only on paths the breadth-first cover never takes (a path that returns to a
state it already visited: a shortest path never does).
"""

import numpy as np

# kind -> what it does (shown in the mutation report)
FAULTS = {
    "drop-token": "drops the shortest allowed token at every state",
    "add-token": "adds the first token the reference refuses at every state",
    "refuse-eos": "refuses EOS (accepting status and EOS bit) at every full match",
    "allow-eos": "allows EOS (accepting status and EOS bit) before a full match",
    "eos-bit": "sets the EOS bit where the text is no full match, accepting status right",
    "stay-on-long": "advancing by a token of 3 bytes or more leaves the state unchanged",
    "special-as-text": "allows every special and padding id as text",
    "deep-drop": "drops the longest allowed token, only after 6 tokens",
    "revisit-add": "adds a refused token on a state the path visited before (off the cover)",
    "advance-refuses": "refuses to advance by 2-byte tokens its own mask allows",
    "drop-non-ascii": "drops every allowed token holding a non-ASCII byte",
    "add-mid-char": "adds tokens ending inside a UTF-8 character wherever the regex goes on",
}


def _bits(mask, size):
    return np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little")[:size])


def _set_bit(mask, token, on):
    word, bit = token >> 5, token & 31
    value = int(mask[word]) & 0xFFFFFFFF
    value = value | (1 << bit) if on else value & ~(1 << bit)
    mask[word] = np.int32(value - (1 << 32) if value >= 1 << 31 else value)


def _text_ids(mask, tokens, specials):
    return [int(t) for t in _bits(mask, len(tokens)) if int(t) not in specials]


def _visited_before(index, path):
    """Whether the state after `path` was already visited earlier on it."""
    state = index.initial_state
    states = [state]
    for t in path:
        state = index.next_state(state, t)
        if state is None:
            return False
        states.append(state)
    return states[-1] in states[:-1]


def _refused(mask, tokens, specials):
    allowed = set(_bits(mask, len(tokens)).tolist())
    for t in range(len(tokens)):
        if t not in allowed and t not in specials and tokens[t]:
            return t
    return None


def _mid_char(token):
    for back in range(1, min(4, len(token)) + 1):
        byte = token[-back]
        if byte & 0xC0 == 0x80:
            continue
        need = 2 if 0xC2 <= byte <= 0xDF else 3 if 0xE0 <= byte <= 0xEF else 4
        return 0xC2 <= byte <= 0xF4 and back < need
    return False


def fault_mask(kind, index, state, path, tokens, eos, specials, mask):
    """Fill `mask` as the mutant does after `path` (at index state `state`); return its
    accepting status. `specials` holds every special id, EOS included."""
    index.fill_mask(state, mask)
    accepting = bool(index.is_accepting(state))
    text = _text_ids(mask, tokens, specials)
    if kind == "drop-token" and text:
        _set_bit(mask, min(text, key=lambda t: (len(tokens[t]), t)), False)
    elif kind == "add-token" or (kind == "revisit-add" and _visited_before(index, path)):
        extra = _refused(mask, tokens, specials)
        if extra is not None:
            _set_bit(mask, extra, True)
    elif kind == "refuse-eos" and accepting:
        accepting = False
        _set_bit(mask, eos, False)
    elif kind == "allow-eos" and not accepting:
        accepting = True
        _set_bit(mask, eos, True)
    elif kind == "eos-bit" and not accepting:
        _set_bit(mask, eos, True)
    elif kind == "special-as-text":
        for t in specials:
            if t != eos:
                _set_bit(mask, t, True)
    elif kind == "deep-drop" and len(path) >= 6 and text:
        _set_bit(mask, max(text, key=lambda t: (len(tokens[t]), t)), False)
    elif kind == "drop-non-ascii":
        for t in text:
            if max(tokens[t]) >= 0x80:
                _set_bit(mask, t, False)
    elif kind == "add-mid-char" and text:
        for t in range(len(tokens)):
            if t not in specials and _mid_char(tokens[t]):
                _set_bit(mask, t, True)
    return accepting


def fault_next(kind, index, state, path, token, tokens):
    """The mutant's state after `token` from `state` (after `path`), or None (refused)."""
    if kind == "advance-refuses" and len(tokens[token]) == 2:
        return None
    nxt = index.next_state(state, token)
    if nxt is not None and kind == "stay-on-long" and len(tokens[token]) >= 3:
        return state
    return nxt
