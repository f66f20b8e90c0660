"""TokensDFA, the project's own engine, in its two modes.

`tokensdfa` is exact: its masks must equal the naive reference's. `tokensdfa-canonical`
builds with `mode="canonical_literals"`: literal runs of the regex are allowed only in
their minimal tokenization, a declared policy (`canonical_forced`), so its masks are
subsets of the reference's.
"""

from __future__ import annotations

from typing import Any

from harness.engines.base import Policies
from harness.engines.naive import TokensdfaEngine


class TokensDFAEngine(TokensdfaEngine):
    name = "tokensdfa"
    mode = "exact"

    def build_index(self, regex: str, native_vocab: Any) -> Any:
        import tokensdfa

        return tokensdfa.Index(regex, native_vocab, mode=self.mode)


class TokensDFACanonicalEngine(TokensDFAEngine):
    name = "tokensdfa-canonical"
    mode = "canonical_literals"
    policies = Policies(
        unicode_classes=True, json_whitespace="regex-builder", canonical_forced=True
    )
