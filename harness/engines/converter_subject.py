"""outlines-core's schema converter as a subject of its own, beside our converter.

With `--converter ours` the reference and every regex engine compile our compiler's
regex, so outlines-core's `build_regex_from_schema` would drop out of the comparison.
It is what outlines users actually run, so the differ keeps checking it: this subject
is the naive index over *that* converter's regex, judged on the schema's instances like
the engines with their own JSON grammar (false rejections, false acceptances, invalid
sampled completions), its findings filed under `outlines-core-converter` with repros
that drive outlines-core and Python's `re`. It is not an engine a user selects (it
measures nothing of its own speed); the diff adds it where outlines-core runs on a
schema (`harness.diff.run.service.instance_checks`).
"""

from __future__ import annotations

from harness.engines.base import Capabilities
from harness.engines.naive import NaiveEngine
from harness.engines.rust_index import IndexCompiled, RustVocab
from harness.language import converter
from harness.spec import Spec

NAME = "outlines-core-converter"


class OutlinesConverterSubject(NaiveEngine):
    name = NAME
    extra = "outlines"
    module = "outlines_core"
    capabilities = Capabilities(
        regex=False,
        json_schema="native",
        unsupported_features=frozenset(),
        max_regex_chars=None,
    )
    instance_repro = converter.INSTANCE_REPRO[converter.OUTLINES]
    instance_repro_target = f"converter:{converter.OUTLINES}"
    instance_repro_package = converter.REPRO_PACKAGE[converter.OUTLINES]

    def version(self) -> str:
        """outlines-core's release; raises when it is absent (so `available` says so)."""
        from importlib.metadata import version

        return version("outlines-core")

    def compile(self, prepared: RustVocab, spec: Spec) -> IndexCompiled:
        regex = converter.schema_to_regex(spec, self.name, converter.OUTLINES)
        return self.compile_regex(prepared, spec, regex)
