"""The reference as an engine: the naive index (`harness.engines.reference`), measured
like any other so that every speedup has its brute-force baseline."""

from __future__ import annotations

from typing import Any

from harness.corpora.converter import INSTANCE_REPRO as CONVERTER_REPRO
from harness.engines import reference
from harness.engines.rust_index import RustIndexEngine


class NaiveEngine(RustIndexEngine):
    name = "naive"
    # On JSON schemas its language is the converter's: its instance failures are the
    # converter's, and their repros drive outlines-core's converter.
    instance_repro = CONVERTER_REPRO
    instance_repro_target = "converter"
    instance_repro_package = "outlines-core"

    def build_index(self, regex: str, native_vocab: Any) -> Any:
        return reference.tokensdfa().NaiveIndex(regex, native_vocab)
