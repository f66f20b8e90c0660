"""The reference as an engine: the naive index (`harness.language.reference`), measured
like any other so that every speedup has its brute-force baseline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.engines.rust_index import RustIndexEngine
from harness.language import converter, reference

if TYPE_CHECKING:  # the extension is imported when an engine is built (`reference.tokensdfa`)
    import tokensdfa


class NaiveEngine(RustIndexEngine):
    name = "naive"

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

    def build_index(self, regex: str, native_vocab: tokensdfa.Vocabulary) -> tokensdfa.NaiveIndex:
        return reference.tokensdfa().NaiveIndex(regex, native_vocab)
