"""The reference indexes of one regex over one vocabulary, as the differ needs them."""

from __future__ import annotations

from typing import Any

from harness.corpora.regex_syntax import ascii_classes, uses_class_escapes
from harness.engines import reference
from harness.engines.base import Engine
from harness.vocab import Vocabulary


class References:
    """The reference indexes of one regex over one vocabulary: naive (the definition),
    TokensDFA exact (checked against it, and the source of forced text), the byte DFA (for
    triage), and the reference under each policy an engine declares, built on demand."""

    def __init__(self, regex: str, vocab: Vocabulary, spec_id: str = "<regex>") -> None:
        """Raises SpecError or UnsupportedSpec (naming the reference) when the reference
        cannot read or build `regex`: there is then no language to compare with."""
        tokensdfa = reference.tokensdfa()
        self.regex = regex
        self.vocab = vocab
        self.native_vocab = reference.native_vocabulary(vocab)
        self.naive = reference.build(regex, self.native_vocab, reference.NAME, spec_id)
        self.exact = tokensdfa.Index(regex, self.native_vocab)
        self.dfa = tokensdfa.ByteDfa(regex)
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
        """The naive index of the regex as `engine` reads it under policy `name`, or None
        when the policy does not change the regex."""
        tokensdfa = reference.tokensdfa()
        table = engine.policies.class_table
        key = f"{name}:{table}"
        if key not in self._policy:
            index = None
            if name == "ascii-classes" and uses_class_escapes(self.regex):
                try:
                    pattern = ascii_classes(self.regex, dict(table))
                    index = tokensdfa.NaiveIndex(pattern, self.native_vocab)
                except ValueError:
                    index = None  # no ASCII spelling (negated escape in a class)
            self._policy[key] = index
        return self._policy[key]


def policies_needing_reference(engine: Engine) -> list[str]:
    return [] if engine.policies.unicode_classes else ["ascii-classes"]
