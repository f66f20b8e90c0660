"""A diff run's findings and bugs as DataFrames, from the `diff.json` that `tokensieve
diff` (and `check`) write beside the run's report (`REPORTS_DIR/RUN/diff.json`), read as
the differ's records (`harness.diff.findings.records`), so a diff.json of any release
reads the same.

Columns of `findings`: `run`, `id`, `engine`, `release`, `signature`, `occurrences`,
`specs` and `vocabs` (comma-separated), `corpus` (of its first spec), `minimal_tokens`,
`minimal_prefix` (the minimized prefix as a JSON string literal, so an empty one is `""`
and control characters show), `regex`, `schema`, `explanation`, `repro` (the script's
path), `reproduces`. Columns of `bugs`: `run`, `id`, `engine`, `release`, `signature`,
`findings`, `witnesses` (SPEC@VOCAB, comma-separated), `witness_count`, `occurrences`,
`minimized`, `regex`, `repro`, `reproduces`, `explanation`. A text that is empty is
missing (None), as CSV reads it back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from harness.diff.findings.records import FindingRecord, bugs_of
from harness.errors import BadInput
from harness.frames.tables import corpus_of

FINDING_COLUMNS = (
    "run", "id", "engine", "release", "signature", "occurrences", "specs", "vocabs",
    "corpus", "minimal_tokens", "minimal_prefix", "regex", "schema", "explanation", "repro",
    "reproduces",
)  # fmt: skip
BUG_COLUMNS = (
    "run", "id", "engine", "release", "signature", "findings", "witnesses", "witness_count",
    "occurrences", "minimized", "regex", "repro", "reproduces", "explanation",
)  # fmt: skip


def diff_json(reports_dir: Path, run: str) -> dict[str, Any]:
    """The run's diff.json; BadInput naming it when the run has none."""
    source = Path(reports_dir) / run / "diff.json"
    if not source.is_file():
        raise BadInput(f"run {run!r} has no differential test: no {source}")
    data: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return data


def findings(reports_dir: Path, run: str) -> pd.DataFrame:
    """The findings of run `run`'s differential test (see the module)."""
    data = diff_json(reports_dir, run)
    where = Path(reports_dir) / run / "findings"
    rows = []
    for f in map(FindingRecord.from_json, data.get("findings") or []):
        rows.append(
            {
                "run": run,
                "id": f.id,
                "engine": f.engine,
                "release": f.version or None,
                "signature": f.signature or None,
                "occurrences": f.occurrences,
                "specs": ",".join(f.specs),
                "vocabs": ",".join(f.vocabs),
                "corpus": corpus_of(f.specs[0]) if f.specs else None,
                "minimal_tokens": f.minimal_tokens,
                "minimal_prefix": None
                if f.minimal_prefix is None
                else json.dumps(f.minimal_prefix, ensure_ascii=False),
                "regex": f.regex or None,
                "schema": f.schema or None,
                "explanation": f.explanation or None,
                "repro": str(where / f.repro) if f.repro else None,
                "reproduces": f.reproduces,
            }
        )
    return pd.DataFrame(rows, columns=list(FINDING_COLUMNS))


def bugs(reports_dir: Path, run: str) -> pd.DataFrame:
    """The bugs of run `run`'s differential test, findings grouped (see the module)."""
    data = diff_json(reports_dir, run)
    where = Path(reports_dir) / run / "findings"
    rows = []
    for b in bugs_of(data) or []:
        rows.append(
            {
                "run": run,
                "id": b.id,
                "engine": b.engine,
                "release": b.version or None,
                "signature": b.signature,
                "findings": ",".join(b.findings) or None,
                "witnesses": ",".join(f"{w.spec}@{w.vocab or '?'}" for w in b.witnesses),
                "witness_count": b.witness_count,
                "occurrences": b.occurrences,
                "minimized": b.minimized,
                "regex": b.regex or None,
                "repro": str(where / b.repro) if b.repro else None,
                "reproduces": b.reproduces,
                "explanation": b.explanation or None,
            }
        )
    return pd.DataFrame(rows, columns=list(BUG_COLUMNS))
