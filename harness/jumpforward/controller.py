"""The controller of a jump-forward run: every (engine, spec) measured and every spec's
forced texts cross-checked in a worker process per vocabulary (`harness.process`), here
or on a Dask cluster (`harness.cluster`), so a hang or a crash costs only that
unit; then `RUN/jumpforward.json`, `.csv` and `.html`,
and a console summary. The bench report embeds the summary when the run names match."""

from __future__ import annotations

import csv
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness import cluster, corpora, report
from harness import vocab as vocabularies
from harness.corpora import paths
from harness.embed import csv_cell, write_json
from harness.errors import TokensieveError
from harness.jumpforward.cell import SERVICE
from harness.language import converter
from harness.spec import Spec

# Specs per Dask task: a vocabulary is prepared once per task.
DASK_BATCH = 8


@dataclass(frozen=True)
class JumpOptions:
    vocabs: tuple[str, ...]
    engines: tuple[str, ...]
    sets: tuple[str, ...]
    corpus_dir: str | None = None
    paths: int = 3
    limit_specs: int | None = None
    timeout: float = 120.0
    memory_limit: int | None = None
    strict_corpus: bool = False
    executor: str = "local"  # or "dask", at `scheduler` (harness.cluster)
    scheduler: str | None = None


@dataclass
class JumpResults:
    rows: list[dict[str, Any]]
    disagreements: list[dict[str, Any]]
    states_compared: int
    skipped: list[str]


def run(
    options: JumpOptions,
    out_dir: Path,
    out: IO[str] | None = None,
    user_entries: tuple[corpora.Entry, ...] = (),
) -> dict[str, Any]:
    """Measure the corpus sets' specs and the user's own (`harness.corpora.user`), write
    the run's files, print the summary (on `out`, default the current standard output)
    and return what jumpforward.json holds."""
    out = out or sys.stdout
    started = time.perf_counter()
    results = JumpResults([], [], 0, [])
    specs = [
        (set_name, spec)
        for set_name in options.sets
        for spec in corpora.spread(
            corpora.load_set(set_name, options.corpus_dir, strict=options.strict_corpus),
            options.limit_specs,
        )
    ] + [("user", e.spec) for e in user_entries]
    _measure(options, specs, results)
    data = _data(results, time.perf_counter() - started)
    _write(out_dir, data)
    print(console(data, out_dir), file=out)
    return data


def _measure(options: JumpOptions, specs: list[tuple[str, Spec]], results: JumpResults) -> None:
    """Every (vocabulary, spec) on the vocabulary's worker process, here or in batches of
    `DASK_BATCH` specs on a Dask cluster (`harness.cluster`)."""
    batches = []
    for vname in options.vocabs:
        voc = vocabularies.load(vname)
        items = []
        for set_name, spec in specs:
            try:
                walked = [p for p in paths.paths_for(spec, voc, n=options.paths) if p.exact]
            except TokensieveError as exc:
                results.skipped.append(f"{spec.id}: {exc}")
                continue
            items.append(
                {
                    "set": set_name,
                    "vocab": vname,
                    "spec": converter.with_regex(spec).to_json(),
                    "paths": [{"text": p.text, "ids": list(p.ids)} for p in walked],
                    "engines": list(options.engines),
                    "timeout": options.timeout,
                }
            )
        size = max(1, len(items)) if options.executor == "local" else DASK_BATCH
        for i in range(0, len(items), size):
            batches.append(
                cluster.Batch(
                    SERVICE,
                    {"vocab": vname, "engines": list(options.engines)},
                    options.engines,
                    options.memory_limit,
                    "harness.jumpforward.cell:run_spec",
                    items[i : i + size],
                )
            )

    def handle(item: dict[str, Any], result: dict[str, Any]) -> None:
        results.rows.extend(result["rows"])
        results.disagreements.extend(result["disagreements"])
        results.states_compared += result["states"]
        results.skipped.extend(result["skipped"])

    def log(line: str) -> None:
        print(line, flush=True)

    cluster.run(batches, handle, log, options.executor, options.scheduler)


def _data(results: JumpResults, elapsed: float) -> dict[str, Any]:
    from harness.jumpforward.tables import maskbench_table, summarize

    return {
        "summary": summarize(results.rows),
        "maskbench": maskbench_table(results.rows),
        "paths": results.rows,
        "forced_text_disagreements": results.disagreements,
        "states_compared": results.states_compared,
        "skipped": results.skipped,
        "seconds": elapsed,
    }


def _write(out_dir: Path, data: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "jumpforward.json", data)
    rows = data["paths"]
    if rows:
        with open(out_dir / "jumpforward.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows({k: csv_cell(v) for k, v in r.items()} for r in rows)
    (out_dir / "jumpforward.html").write_text(report.jumpforward_page(data), encoding="utf-8")


def console(data: dict[str, Any], out_dir: Path) -> str:
    """The summary `tokensieve jumpforward` prints."""
    cols = (
        "set",
        "engine",
        "vocab",
        "paths",
        "forced_single_pct",
        "forced_text_pct",
        "saved_naive_pct",
        "saved_retok_pct",
        "boundary_differs_pct",
    )
    lines = ["  ".join(f"{c:>14}" for c in cols)]
    for r in data["summary"]:
        lines.append(
            "  ".join(
                f"{r[c]:>14.1f}" if isinstance(r[c], float) else f"{r[c]!s:>14}" for c in cols
            )
        )
    for r in data["maskbench"]:
        lines.append(
            f"maskbench {r['split']:>16} {r['engine']:>12}: forced_text "
            f"{r['forced_text_pct']:.1f}% (published compact {r['published_compact_pct']}%)"
        )
    verdicts: dict[str, int] = defaultdict(int)
    for d in data["forced_text_disagreements"]:
        for name, v in d["verdicts"].items():
            verdicts[f"{name}:{v}"] += 1
    lines.append(
        f"forced text: {data['states_compared']} states compared, "
        f"{len(data['forced_text_disagreements'])} differ: "
        + ", ".join(f"{k}={v}" for k, v in sorted(verdicts.items()) if not k.endswith(":agree"))
    )
    lines.append(f"{data['seconds']:.0f} s; wrote {out_dir}/jumpforward.html")
    return "\n".join(lines)
