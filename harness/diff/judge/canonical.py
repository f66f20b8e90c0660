"""What the `canonical-forced` policy requires at one state: the encoder's first token.

llguidance keeps, where the grammar forces text F, only the first token of F as the
vocabulary's own encoder spells it (measured: at every forced state of five regexes on
gpt2 it kept exactly that token, and nothing that runs past F). A rule that accepted any
non-empty subset of the reference's tokens would hide a dropped token behind the policy
(82 of 87 seeded drops were once called policy), so triage asks this module for the one
token the policy prescribes. (`canonical-literals` has a reference of its own, TokensDFA
in that mode: see `harness.diff.walk.references`.)
"""

from __future__ import annotations

from harness.vocab import Vocabulary


def encoder_first(vocab: Vocabulary, forced: bytes) -> bytes | None:
    """The first token of `forced` as the vocabulary's encoder spells it, or None when
    the text is not UTF-8, the vocabulary has no encoder, or the encoder does not give
    back exactly its bytes (one that adds a prefix space or a BOS)."""
    try:
        text = forced.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        ids = list(vocab.encode(text))
    except Exception:  # no encoder, or one that cannot take this text: no prescription
        return None
    if not ids or vocab.decode(ids) != forced:
        return None
    return vocab.tokens[ids[0]]
