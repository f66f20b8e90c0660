"""The reference, built in one place: the naive index (`tokensdfa.NaiveIndex`) of a regex
over a vocabulary, which defines the language every engine is compared with.

For a regex R, at prefix bytes p a token t is allowed iff some string s makes p·t·s a full
match of R (all alternatives count, no leftmost-first preference); EOS is allowed iff p
itself fully matches. The naive index computes exactly this by brute force. Everything
that needs the reference asks here: the `naive` engine adapter, the differ (which also
keeps TokensDFA exact and the byte DFA beside it), and the token-path checks.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from harness.engines.support import EAGER_REGEX_LIMIT
from harness.errors import EngineUnavailable, SpecError, UnsupportedSpec
from harness.spec import Spec
from harness.vocab import Vocabulary

NAME = "tokensdfa-naive"

_native: weakref.WeakKeyDictionary[Vocabulary, Any] = weakref.WeakKeyDictionary()


def tokensdfa() -> Any:
    """The tokensdfa extension module, or EngineUnavailable when it is not built."""
    try:
        import tokensdfa as module
    except ImportError as exc:
        raise EngineUnavailable(f"{NAME}: the tokensdfa extension is not built ({exc})") from exc
    return module


def version() -> str:
    try:
        return str(tokensdfa().__version__)
    except EngineUnavailable:
        return "absent"


def native_vocabulary(vocab: Vocabulary) -> Any:
    """The `tokensdfa.Vocabulary` of `vocab`, built once per vocabulary object."""
    native = _native.get(vocab)
    if native is None:
        native = tokensdfa().Vocabulary(list(vocab.tokens), vocab.eos_id, sorted(vocab.special_ids))
        _native[vocab] = native
    return native


def build(regex: str, native: Any, who: str = NAME, spec_id: str = "<regex>") -> Any:
    """The naive index of `regex` over a `tokensdfa.Vocabulary`. A pattern the parser
    refuses is a SpecError; one it reads but cannot build (an unsupported feature, a
    size limit) is an UnsupportedSpec: told apart by the exception's class."""
    module = tokensdfa()
    if len(regex) > EAGER_REGEX_LIMIT:
        raise UnsupportedSpec(
            who,
            spec_id,
            f"regex of {len(regex):,} characters is beyond the reference's "
            f"{EAGER_REGEX_LIMIT:,}-character limit",
        )
    try:
        return module.NaiveIndex(regex, native)
    except module.PatternError as exc:
        raise SpecError(who, spec_id, _one_line(exc)) from exc
    except (module.UnsupportedPatternError, module.LimitError) as exc:
        raise UnsupportedSpec(who, spec_id, _one_line(exc)) from exc


def for_spec(spec: Spec, vocab: Vocabulary) -> Any:
    """The naive index of `spec` over `vocab` (schemas through the one converter)."""
    from harness.corpora.converter import schema_to_regex

    return build(schema_to_regex(spec), native_vocabulary(vocab), NAME, spec.id)


def walk(index: Any, ids: Iterable[int]) -> int | None:
    """The state a tokensdfa index (naive, DFA or lazy) reaches from its start over
    token `ids`, or None at the first one it refuses."""
    state = index.initial_state
    for token in ids:
        state = index.next_state(state, token)
        if state is None:
            return None
    return int(state)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
