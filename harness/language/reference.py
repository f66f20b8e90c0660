"""The reference, built in one place: the naive index (`tokensdfa.NaiveIndex`) of a regex
over a vocabulary, which defines the language every engine is compared with.

For a regex R, at prefix bytes p a token t is allowed iff some string s makes p·t·s a full
match of R (all alternatives count, no leftmost-first preference); EOS is allowed iff p
itself fully matches. The naive index computes exactly this by brute force. Everything
that needs the reference asks here: the `naive` engine adapter, the differ (which also
keeps TokensDFA exact and the byte DFA beside it), and the token-path checks. A spec's
reference (a schema through the converter first) is `converter.reference_index`.

Here too: the one rule of whether a spec is valid (`spec_is_valid`: the reference's
parser reads it), and the walk of a token path on any tokensdfa index (`walk`).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, TypeAlias

from harness.errors import EngineUnavailable, SpecError, UnsupportedSpec
from harness.spec import Spec
from harness.vocab import Vocabulary

if TYPE_CHECKING:  # the extension is imported only when used (`tokensdfa()`): unbuilt, it
    # costs its engines, not every import of the harness
    import tokensdfa as tdfa

    # An index the extension builds: the naive reference, TokensDFA's eager or lazy one.
    TokenIndex: TypeAlias = tdfa.NaiveIndex | tdfa.Index | tdfa.LazyIndex | tdfa.NaiveGrammarIndex


class Walkable(Protocol):
    """What `walk` (and a test of whole texts after it) needs of an index: every
    tokensdfa index has it, and so does any stand-in typed by this surface. States are
    ints; a refused token has no next state."""

    @property
    def initial_state(self) -> int: ...

    def next_state(self, state: int, token: int) -> int | None: ...

    def is_accepting(self, state: int) -> bool: ...


NAME = "tokensdfa-naive"
# The longest regex an eager index (the reference, TokensDFA eager, outlines-core) is built
# from; past it the spec is unsupported, never attempted.
EAGER_REGEX_LIMIT = 1_000_000

_native: weakref.WeakKeyDictionary[Vocabulary, tdfa.Vocabulary] = weakref.WeakKeyDictionary()


def tokensdfa() -> ModuleType:
    """The tokensdfa extension module, or EngineUnavailable when it is not built. (A module
    object types its attributes as Any: callers type what they build from it by the stub,
    tokensdfa.pyi, at their own signatures.)"""
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


def native_vocabulary(vocab: Vocabulary) -> tdfa.Vocabulary:
    """The `tokensdfa.Vocabulary` of `vocab`, built once per vocabulary object."""
    native = _native.get(vocab)
    if native is None:
        native = tokensdfa().Vocabulary(list(vocab.tokens), vocab.eos_id, sorted(vocab.special_ids))
        _native[vocab] = native
    return native


def build(
    regex: str, native: tdfa.Vocabulary, who: str = NAME, spec_id: str = "<regex>"
) -> tdfa.NaiveIndex:
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


def walk(index: Walkable, ids: Iterable[int]) -> int | None:
    """The state a tokensdfa index (naive, DFA or lazy) reaches from its start over
    token `ids`, or None at the first one it refuses."""
    state = index.initial_state
    for token in ids:
        following = index.next_state(state, token)
        if following is None:
            return None
        state = following
    return state


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


@lru_cache(maxsize=4096)
def _valid(kind: str, text: str) -> bool:
    if kind == "regex":
        import tokensdfa

        try:
            tokensdfa.check_pattern(text)
        except tokensdfa.PatternError:
            return False
        except ValueError:  # unsupported features and limits: valid syntax all the same
            return True
        return True
    try:
        schema = json.loads(text)
    except ValueError:
        return False
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError:
        return False
    except Exception:  # an unresolvable $schema: nothing says the schema is wrong
        return True
    return True


def spec_is_valid(spec: Spec) -> bool:
    """Whether the reference's parser reads `spec` (see the module doc). A grammar is
    valid when the front end of its notation reads it or refuses only a construct it
    does not implement (the notation has it; an engine may too)."""
    if spec.kind == "grammar":
        return _valid_grammar(spec.text, str(spec.notation))
    return _valid(spec.kind, spec.text)


@lru_cache(maxsize=1024)
def _valid_grammar(text: str, notation: str) -> bool:
    module = tokensdfa()
    try:
        module.grammar_summary(text, notation)
    except module.UnsupportedGrammarError:
        return True
    except module.GrammarError:
        return False
    except ValueError:  # a size bound of the front end: nothing says the grammar is wrong
        return True
    return True
