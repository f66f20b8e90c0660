"""The reference indexes of one regex over one vocabulary, as the differ needs them."""

from __future__ import annotations

from typing import Any

from harness.corpora.regex_syntax import (
    ascii_classes,
    pieces,
    regex_features,
    uses_class_escapes,
)
from harness.engines import reference
from harness.engines.base import Engine
from harness.vocab import Vocabulary


class References:
    """The reference indexes of one regex over one vocabulary: naive (the definition),
    TokensDFA exact (checked against it, and the source of forced text), the byte DFA (for
    triage), and the reference under each policy an engine declares or each reading a
    signature compares with (`anchors-removed`), built on demand."""

    def __init__(
        self,
        regex: str,
        vocab: Vocabulary,
        spec_id: str = "<regex>",
        deeper: str | None = None,
    ) -> None:
        """Raises SpecError or UnsupportedSpec (naming the reference) when the reference
        cannot read or build `regex`: there is then no language to compare with.
        `deeper`, for a schema converted in an engine's dialect, is the same schema with
        unconstrained values nested one level deeper (`values-nested-deeper`)."""
        tokensdfa = reference.tokensdfa()
        self.regex = regex
        self.vocab = vocab
        self.native_vocab = reference.native_vocabulary(vocab)
        self.naive = reference.build(regex, self.native_vocab, reference.NAME, spec_id)
        self.exact = tokensdfa.Index(regex, self.native_vocab)
        self.dfa = tokensdfa.ByteDfa(regex)
        self.deeper = deeper
        self._policy: dict[str, Any] = {}
        self._dotall: Any | None = None
        self._dotall_built = False

    @property
    def dotall_dfa(self) -> Any | None:
        """The byte DFA of the regex with `.` matching newline (for triage)."""
        tokensdfa = reference.tokensdfa()
        if not self._dotall_built:
            self._dotall_built = True
            try:
                self._dotall = tokensdfa.ByteDfa(f"(?s:{self.regex})")
            except ValueError:
                self._dotall = None
        return self._dotall

    def policy_index(self, name: str, engine: Engine) -> Any | None:
        """The naive index of the regex as `engine` reads it under policy or reading
        `name`, or None when that reading does not change the regex."""
        tokensdfa = reference.tokensdfa()
        table = engine.policies.class_table if name == "ascii-classes" else ()
        key = f"{name}:{table}"
        if key not in self._policy:
            pattern = None
            if name == "ascii-classes" and uses_class_escapes(self.regex):
                try:
                    pattern = ascii_classes(self.regex, dict(table))
                except ValueError:
                    pattern = None  # no ASCII spelling (negated escape in a class)
            elif name == "anchors-removed" and "anchors" in regex_features(self.regex):
                pattern = without_anchors(self.regex)
            elif name == "values-nested-deeper":
                pattern = self.deeper
            elif name == "canonical-literals":
                self._policy[key] = self._canonical_index()
                return self._policy[key]
            index = None
            # the deeper schema's regex is large and only read at a few states: built
            # lazily (TokensDFA's lazy index, exact against the naive one by its tests)
            build = tokensdfa.LazyIndex if name == "values-nested-deeper" else tokensdfa.NaiveIndex
            if pattern is not None and pattern != self.regex:
                try:
                    index = build(pattern, self.native_vocab)
                except ValueError:
                    index = None
            self._policy[key] = index
        return self._policy[key]

    def _canonical_index(self) -> Any | None:
        """TokensDFA in canonical_literals mode: what that policy prescribes."""
        try:
            return reference.tokensdfa().Index(
                self.regex, self.native_vocab, mode="canonical_literals"
            )
        except ValueError:
            return None


def without_anchors(regex: str) -> str:
    """`regex` with its anchors `^ $ \\A \\z` (outside bracket classes) removed."""
    kept = []
    for piece in pieces(regex):
        anchor = (piece.kind == "char" and piece.text in "^$") or (
            piece.kind == "escape" and piece.text in ("\\A", "\\z")
        )
        if piece.in_class or not anchor:
            kept.append(piece.text)
    return "".join(kept)


def policies_needing_reference(engine: Engine) -> list[str]:
    """The policies of `engine` whose rule compares with a reference of their own."""
    needed = [] if engine.policies.unicode_classes else ["ascii-classes"]
    needed += ["values-nested-deeper"] if engine.policies.json_dialect else []
    return needed + (["canonical-literals"] if engine.policies.canonical_literals else [])
