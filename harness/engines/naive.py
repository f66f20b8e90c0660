"""The reference as an engine: the naive index (`harness.language.reference`), measured
like any other so that every speedup has its brute-force baseline."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from harness.engines.rust_index import IndexCompiled, RustIndexEngine, RustVocab
from harness.engines.support import check_features
from harness.language import converter, grammar, reference
from harness.spec import NOTATIONS, Spec

if TYPE_CHECKING:  # the extension is imported when an engine is built (`reference.tokensdfa`)
    import tokensdfa


class NaiveEngine(RustIndexEngine):
    """The naive index of a regex (a schema through the converter in use), and of a
    grammar the Earley reference (`tokensdfa.NaiveGrammarIndex`) in any notation."""

    name = "naive"
    capabilities = replace(RustIndexEngine.capabilities, grammars=NOTATIONS)

    # On JSON schemas its language is the converter's in use: its instance failures are
    # that converter's, and their repros drive it.
    @property
    def instance_repro(self) -> str:  # type: ignore[override]
        return converter.INSTANCE_REPRO[converter.current()]

    @property
    def instance_repro_target(self) -> str:  # type: ignore[override]
        return f"converter:{converter.current()}"

    @property
    def instance_repro_package(self) -> str:  # type: ignore[override]
        return converter.REPRO_PACKAGE[converter.current()]

    def compile(self, prepared: RustVocab, spec: Spec) -> IndexCompiled:
        if spec.kind != "grammar":
            return super().compile(prepared, spec)
        check_features(self, spec)
        index = grammar.build(spec, prepared.native, self.name)
        return IndexCompiled(index, prepared.vocab.eos_id, self.name, spec.id)

    def build_index(self, regex: str, native_vocab: tokensdfa.Vocabulary) -> tokensdfa.NaiveIndex:
        return reference.tokensdfa().NaiveIndex(regex, native_vocab)
