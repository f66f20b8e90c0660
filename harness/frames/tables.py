"""A run's rows as pandas DataFrames: `runs` (every run of a reports directory), `cells`
(one row per bench cell) and `steps` (one row per timed mask fill or advance), read from
the results store; `cells_of` and `steps_of` build them from cells already read.

Columns of `cells` (`CELL_COLUMNS`): the cell's keys (`run`, `engine`, `release`,
`vocab`, `corpus`, `spec`, `study`), the spec's `features` (comma-separated, sorted;
missing when it has none or they were not looked up), `status` and `message`; the
timings in integer nanoseconds (`compile_ns`, `compile_first_ns`, `compile_p90_ns`: the
p90 of its samples where a fast compile was repeated 3 times or more, else the compile;
`convert_ns`, `ttfm_ns`, `matcher_ns`, `first_fill_ns`, the mask and advance
percentiles of the cell's own steps, `mask_n`, `mask_mean_ns`, `mask_p50_ns`,
`mask_p90_ns`, `mask_p99_ns`, `mask_max_ns`, `advance_p50_ns`, `advance_p90_ns`);
memory (`memory_bytes` and `memory_kind`, the engine's own figure or the worker's RSS
growth; `engine_memory_bytes`, `rss_growth_bytes`, `peak_rss_bytes`); `states`, `paths`,
`refused_paths`, `truncated`, `vocab_size`, `cell_s`, and where it ran: `host`,
`session`, `finished`. A value that was not measured is missing (NaN or None), never 0;
so is a text that is empty (CSV could not tell the two apart).

Columns of `steps`: `run`, `engine`, `vocab`, `corpus`, `spec`, `study`, `status`,
`kind` ("fill" or "advance"), `step` (its position in the cell's pooled steps) and `ns`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.store import Cell, RunKind, opened

CELL_COLUMNS = (
    "run", "engine", "release", "vocab", "corpus", "spec", "study", "features", "status",
    "message", "compile_ns", "compile_first_ns", "compile_p90_ns", "convert_ns", "ttfm_ns",
    "matcher_ns", "first_fill_ns", "mask_n", "mask_mean_ns", "mask_p50_ns", "mask_p90_ns",
    "mask_p99_ns", "mask_max_ns", "advance_p50_ns", "advance_p90_ns", "memory_bytes",
    "memory_kind", "engine_memory_bytes", "rss_growth_bytes", "peak_rss_bytes", "states",
    "paths", "refused_paths", "truncated", "vocab_size", "cell_s", "host", "session",
    "finished",
)  # fmt: skip
STEP_COLUMNS = (
    "run", "engine", "vocab", "corpus", "spec", "study", "status", "kind", "step", "ns",
)  # fmt: skip
# counts, and durations and sizes measured as whole numbers: nullable integers
INTEGER_COLUMNS = (
    "compile_ns", "compile_first_ns", "compile_p90_ns", "convert_ns", "ttfm_ns", "matcher_ns",
    "first_fill_ns", "mask_n", "engine_memory_bytes", "rss_growth_bytes", "peak_rss_bytes",
    "states", "paths", "refused_paths", "vocab_size", "session",
)  # fmt: skip
RUN_COLUMNS = ("run", "kind", "created", "commit", "host", "engines", "vocabs", "specs")


def corpus_of(spec_id: str) -> str:
    """The corpus set of a spec id (`SET/NAME`)."""
    return spec_id.split("/", 1)[0]


def runs(reports_dir: Path) -> pd.DataFrame:
    """Every run of the reports directory's store, of every kind, oldest first."""
    rows = []
    with opened(Path(reports_dir), readonly=True) as store:
        for kind in RunKind:
            for run in store.runs(kind):
                options = run.meta.get("options") or {}
                rows.append(
                    {
                        "run": run.name,
                        "kind": kind.value,
                        "created": run.created,
                        "commit": run.meta.get("commit"),
                        "host": (run.meta.get("machine") or {}).get("host"),
                        "engines": ",".join(options.get("engines") or ()),
                        "vocabs": ",".join(options.get("vocabs") or ()),
                        "specs": len(run.meta.get("spec_ids") or ()),
                    }
                )
    frame = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    return frame.sort_values(["created", "run"], kind="stable").reset_index(drop=True)


def cells(reports_dir: Path, run: str, *, features: bool = True) -> pd.DataFrame:
    """The cells of bench run `run` (UnknownName when there is none); `features` looks
    each spec's features up (its corpus set or the run's own entries)."""
    with opened(Path(reports_dir), readonly=True) as store:
        meta = store.run(run).meta
        found = store.cells(run)
    looked_up = spec_features(meta, {c.spec_id for c in found}) if features else {}
    return cells_of(found, meta.get("versions") or {}, looked_up)


def steps(reports_dir: Path, run: str) -> pd.DataFrame:
    """The timed steps of bench run `run`'s cells (see the module)."""
    with opened(Path(reports_dir), readonly=True) as store:
        store.run(run)
        return steps_of(store.cells(run))


def cells_of(
    found: Iterable[Cell],
    versions: Mapping[str, str] | None = None,
    features: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """`found` as the cells frame; `versions` (engine -> release) and `features` (spec
    id -> its features) fill those columns where given."""
    versions, features = versions or {}, features or {}
    rows = [_cell_row(c, versions.get(c.engine), features.get(c.spec_id, ())) for c in found]
    frame = pd.DataFrame(rows, columns=list(CELL_COLUMNS))
    for column in INTEGER_COLUMNS:
        frame[column] = frame[column].astype("Int64")
    return frame


def _cell_row(cell: Cell, release: str | None, features: Sequence[str]) -> dict[str, Any]:
    m = cell.metrics
    memory, kind = m.memory
    samples = sorted(m.compile_samples_ns)
    p90 = samples[int(np.ceil(0.9 * len(samples))) - 1] if len(samples) >= 3 else m.compile_ns
    return {
        "run": cell.run,
        "engine": cell.engine,
        "release": release or None,
        "vocab": cell.vocab,
        "corpus": corpus_of(cell.spec_id),
        "spec": cell.spec_id,
        "study": cell.study,
        "features": ",".join(sorted(features)) or None,
        "status": cell.status,
        "message": cell.message or None,
        "compile_ns": m.compile_ns,
        "compile_first_ns": m.compile_first_ns,
        "compile_p90_ns": p90,
        "convert_ns": m.convert_ns,
        "ttfm_ns": m.ttfm_ns,
        "matcher_ns": m.matcher_ns,
        "first_fill_ns": m.first_fill_ns,
        "mask_n": m.fill.get("n"),
        "mask_mean_ns": m.fill.get("mean"),
        "mask_p50_ns": m.fill.get("p50"),
        "mask_p90_ns": m.fill.get("p90"),
        "mask_p99_ns": m.fill.get("p99"),
        "mask_max_ns": m.fill.get("max"),
        "advance_p50_ns": m.advance.get("p50"),
        "advance_p90_ns": m.advance.get("p90"),
        "memory_bytes": memory,
        "memory_kind": kind if memory is not None else None,
        "engine_memory_bytes": m.engine_memory_bytes,
        "rss_growth_bytes": m.rss_growth_bytes,
        "peak_rss_bytes": m.peak_rss_bytes,
        "states": m.num_states,
        "paths": m.paths,
        "refused_paths": m.refused_paths,
        "truncated": m.truncated,
        "vocab_size": m.vocab_size,
        "cell_s": m.cell_s,
        "host": m.host,
        "session": cell.session,
        "finished": cell.finished,
    }


def steps_of(found: Iterable[Cell]) -> pd.DataFrame:
    """The timed steps of `found` (see the module)."""
    parts = []
    for c in found:
        for kind, values in (("fill", c.metrics.fill_ns), ("advance", c.metrics.advance_ns)):
            if values:
                keys = (c.run, c.engine, c.vocab, corpus_of(c.spec_id), c.spec_id, c.study)
                parts.append((keys, c.status, kind, np.asarray(values, dtype=np.int64)))
    if not parts:
        return pd.DataFrame({name: pd.Series(dtype=object) for name in STEP_COLUMNS})
    lengths = [len(values) for *_, values in parts]
    columns: dict[str, Any] = {
        name: np.repeat([keys[i] for keys, *_ in parts], lengths)
        for i, name in enumerate(STEP_COLUMNS[:6])
    }
    columns["status"] = np.repeat([status for _, status, *_ in parts], lengths)
    columns["kind"] = np.repeat([kind for _, _, kind, _ in parts], lengths)
    columns["step"] = np.concatenate([np.arange(n) for n in lengths])
    columns["ns"] = np.concatenate([values for *_, values in parts])
    return pd.DataFrame(columns, columns=list(STEP_COLUMNS))


def spec_features(meta: Mapping[str, Any], spec_ids: Iterable[str]) -> dict[str, list[str]]:
    """Spec id -> its features: from the run's own entries, else its corpus set (a set
    that cannot be read now, a MaskBench directory gone, leaves its specs without)."""
    from harness import corpora
    from harness.corpora import user
    from harness.errors import TokensieveError

    out = {
        e.spec.id: sorted(e.spec.features) for e in user.from_json(meta.get("user_entries") or [])
    }
    wanted = set(spec_ids) - set(out)
    options = meta.get("options") or {}
    for name in sorted({corpus_of(s) for s in wanted}):
        try:
            specs = corpora.load_set(name, options.get("corpus_dir"))
        except TokensieveError:
            continue
        out.update((s.id, sorted(s.features)) for s in specs if s.id in wanted)
    return out
