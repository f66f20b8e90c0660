"""The controller of a differential test: every (spec, vocabulary) cell run in a worker
process (`harness.diff.run.service`), its outcome stored, its findings collected, and at the
end every bug's repro written and run on its own.

Each vocabulary gets one worker, which prepares it for every engine once; a cell that
hangs, crashes or blows its memory limit costs only that cell (its status is recorded)
and the next cell gets a fresh worker. Cells are stored in the results database as they
finish (`diff_cells`), so `diff --resume` continues an interrupted run: the stored cells
are replayed into the collector, the rest are run, and findings and repros come out as if
the run had gone in one go. `RUN/diff.json` is rewritten after every cell, `diff.html`
and `findings/` at the end.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness import cluster, corpora, engines, report
from harness import vocab as vocabularies
from harness.corpora import paths, user
from harness.diff.findings.collector import Collector
from harness.diff.run.cell import SERVICE
from harness.diff.run.service import CellOutcome
from harness.diff.walk.differ import WalkPlan
from harness.embed import write_json
from harness.errors import BadInput, EngineUnavailable, TokensieveError
from harness.figures import fmt_seconds
from harness.language import converter
from harness.results import Status
from harness.results.provenance import git_commit, machine
from harness.spec import Spec
from harness.store import Store

KIND = "diff"
# Specs per Dask task: a vocabulary is prepared once per task.
DASK_BATCH = 8
# The share of an engine's --timeout its minimization may take inside a cell.
MINIMIZE_SHARE = 0.35


@dataclass(frozen=True)
class DiffOptions:
    vocabs: tuple[str, ...]
    engines: tuple[str, ...]
    sets: tuple[str, ...]
    corpus_dir: str | None = None
    limit_specs: int | None = None
    paths: int = 4
    walks: int = 8
    cover: int = 200
    seed: int = 0
    timeout: float = 180.0
    memory_limit: int = 8 << 30
    instances: int = 8
    samples: int = 4
    minimize: bool = True
    strict_corpus: bool = False
    # JSON schema -> regex for the reference and the regex engines
    converter: str = "ours"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> DiffOptions:
        tuples = ("vocabs", "engines", "sets")
        # runs stored before there was a choice used outlines-core's converter
        data = {"converter": "outlines-core", **data}
        return DiffOptions(**{k: tuple(v) if k in tuples else v for k, v in data.items()})

    def shown(self, run: str) -> dict[str, Any]:
        """The options as diff.json has always listed them (comma lists, flag names)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("vocabs", "engines", "sets")}
        out.update(
            vocab=",".join(self.vocabs),
            engines=",".join(self.engines),
            corpus=",".join(self.sets),
            no_minimize=not self.minimize,
            run=run,
        )
        return out


class DiffRun:
    def __init__(
        self,
        store: Store,
        run: str,
        options: DiffOptions,
        out_dir: Path,
        *,
        resume: bool = False,
        user_entries: tuple[corpora.Entry, ...] = (),
        log: Callable[[str], None] | None = None,
        quiet: bool = False,
        executor: str = "local",
        scheduler: str | None = None,
    ) -> None:
        """`user_entries`: the user's own specs (`harness.corpora.user`), diffed after the
        corpus sets' and stored with the run, so a resumed run needs no file. `log` takes
        the progress lines (default: standard output); `quiet` leaves out the summary.
        `executor`/`scheduler`: where the cells run (`harness.cluster`); a
        resumed run may change them."""
        self.quiet = quiet
        self.executor = executor
        self.scheduler = scheduler
        self.store = store
        self.run_name = run
        self.out_dir = out_dir
        self.log = log or (lambda text: print(text, flush=True))
        existing = store.find_run(run, "diff_runs")
        if resume:
            if existing is None:
                raise BadInput(f"no diff run {run!r} to resume in {store.path}")
            self.meta = existing.meta
            self.options = DiffOptions.from_json(existing.meta["options"])
        else:
            if existing is not None:
                raise BadInput(
                    f"diff run {run!r} already exists in {store.path}; pass --resume to "
                    "continue it or choose another --run name"
                )
            self.options = options
        # the run's converter, for this process and every worker it starts
        converter.use(self.options.converter)
        if not resume:
            self.meta = self._create(user_entries)
        self.entries = self._lookup(self.meta["spec_ids"])
        self.specs = [e.spec for e in self.entries.values()]
        self.collector = Collector()
        self.rows: list[dict[str, Any]] = []
        self.started = time.perf_counter()

    def _create(self, user_entries: tuple[corpora.Entry, ...]) -> dict[str, Any]:
        for name in self.options.engines:
            ok, why = engines.get(name).available()
            if not ok:
                raise EngineUnavailable(f"engine {name} unavailable: {why}")
        chosen = _select(self.options) + list(user_entries)
        if not chosen:
            raise BadInput("no spec to diff: give --corpus SETS, --spec PATH or --regex")
        meta = {
            "options": self.options.to_json(),
            "spec_ids": [e.spec.id for e in chosen],
            "user_entries": user.to_json(user_entries),
            "commit": git_commit(),
            "machine": machine(),
            "versions": {},
        }
        self.store.create_run(self.run_name, meta, "diff_runs")
        return meta

    def _lookup(self, ids: list[str]) -> dict[str, corpora.Entry]:
        """The run's entries by spec id, in the run's order."""
        found = {e.spec.id: e for e in user.from_json(self.meta.get("user_entries", []))}
        for name in self.options.sets:
            for e in corpora.entries(name, self.options.corpus_dir):
                found[e.spec.id] = e
        missing = [i for i in ids if i not in found]
        if missing:
            raise BadInput(
                f"diff run {self.run_name!r}: spec {missing[0]} is no longer "
                "in the corpus; it cannot be resumed"
            )
        return {i: found[i] for i in ids}

    # --- running -----------------------------------------------------------------------

    def run(self) -> None:
        with self.store.lock(self.run_name, KIND):
            session = self.store.start_session(self.run_name, KIND, 1, os.getpid())
            status, reason = "complete", None
            try:
                self._replay()
                self._run_cells(session)
                self._finish_outputs()
            except KeyboardInterrupt:
                status = "interrupted"
                self.log(
                    f"\ninterrupted; continue with: tokensieve diff --resume --run {self.run_name}"
                )
                raise
            except BaseException as exc:
                status, reason = "failed", " ".join(str(exc).split()) or type(exc).__name__
                raise
            finally:
                try:
                    self.store.finish_session(self.run_name, KIND, session, status, reason)
                except Exception as exc:
                    self.log(f"tokensieve: could not record the session's end: {exc}")

    def _replay(self) -> None:
        """The cells a previous session finished, into the collector as if run now."""
        done = self.store.diff_cells(self.run_name)
        if done:
            self.log(f"resuming diff {self.run_name}: {len(done)} cells done")
        loaded: dict[str, Any] = {}
        for cell in done:
            outcome = cell.outcome.get("outcome")
            if outcome is not None:
                voc = loaded.get(cell.vocab) or loaded.setdefault(
                    cell.vocab, vocabularies.load(cell.vocab)
                )
                self._collect(CellOutcome.from_json(outcome), voc)
            self.rows.append(cell.outcome["row"])

    def _run_cells(self, session: int) -> None:
        """Every cell not stored yet, per vocabulary on one worker process (here), or in
        batches of `DASK_BATCH` specs on a Dask cluster; each stored as it comes back."""
        done = {(c.spec_id, c.vocab) for c in self.store.diff_cells(self.run_name)}
        loaded = {}
        batches = []
        for vname in self.options.vocabs:
            todo = [s for s in self.specs if (s.id, vname) not in done]
            if not todo:
                continue
            voc = loaded[vname] = vocabularies.load(vname)
            items = [self._item(spec, voc) for spec in todo]
            size = len(items) if self.executor == "local" else DASK_BATCH
            for i in range(0, len(items), size):
                batches.append(
                    cluster.Batch(
                        SERVICE,
                        {"vocab": vname, "engines": list(self.options.engines)},
                        self.options.engines,
                        self.options.memory_limit,
                        "harness.diff.run.cell:run_cell",
                        items[i : i + size],
                    )
                )

        def handle(item: dict[str, Any], result: dict[str, Any]) -> None:
            self._cell_done(item, result, loaded[item["row"]["vocab"]], session)

        cluster.run(batches, handle, self.log, self.executor, self.scheduler)

    def _item(self, spec: Spec, voc: Any) -> dict[str, Any]:
        row: dict[str, Any] = {"spec": spec.id, "vocab": voc.name}
        request = self._request(spec, voc, row)
        return {
            "row": row,
            "request": request,
            "engines": list(self.options.engines),
            "timeout": self.options.timeout,
        }

    def _cell_done(
        self, item: dict[str, Any], result: dict[str, Any], voc: Any, session: int
    ) -> None:
        row = {**item["row"], "seconds": result["seconds"], "host": result["host"]}
        if result["versions"]:
            self.meta["versions"].update(result["versions"])
            self.store.update_meta(self.run_name, self.meta, "diff_runs")
        for note in result["notes"]:
            self.log(f"  {voc.name} {note}")
        outcome = None
        if result["outcome"] is not None:
            outcome = CellOutcome.from_json(result["outcome"])
            self._collect(outcome, voc)
            self._summarize(row, outcome)
        else:
            failure = result["failure"]
            row.update(status=failure["status"], detail=failure["message"])
            self.log(f"  {voc.name} {row['spec']}: {failure['status']} {failure['message']}")
        self.rows.append(row)
        self.store.add_diff_cell(
            self.run_name,
            row["spec"],
            voc.name,
            row["status"],
            {"row": row, "outcome": result["outcome"]},
            session,
        )
        self._write(final=False)

    def _request(self, spec: Spec, voc: Any, row: dict[str, Any]) -> dict[str, Any]:
        o = self.options
        regex: str | None
        try:
            regex = converter.schema_to_regex(spec)
        except TokensieveError as exc:
            regex = None  # no reference language; the native engines still face instances
            row["detail"] = f"no mask diff: {exc}"
        try:
            found = paths.paths_for(spec, voc, seed=o.seed, n=o.paths)
            token_paths = [list(p.ids) for p in found if p.exact]
        except TokensieveError as exc:
            token_paths = []  # the walks still cover the reference's states
            row["paths"] = f"no corpus paths: {exc}"
        plan = WalkPlan(
            paths=tuple(map(tuple, token_paths)),
            random_walks=o.walks,
            cover_states=o.cover,
            seed=o.seed,
        )
        instances = None
        if spec.kind == "json_schema":
            entry = self.entries[spec.id]
            instances = {
                "valid": list(entry.valid[: o.instances]),
                "invalid": list(entry.invalid[: o.instances]),
                "samples": o.samples,
                "seed": o.seed,
            }
        # the spec travels with its converted regex, so the worker never converts
        return {
            "spec": converter.with_regex(spec).to_json(),
            "regex": regex,
            "plan": asdict(plan),
            "minimize": o.minimize,
            "minimize_budget_s": o.timeout * MINIMIZE_SHARE,
            "instances": instances,
        }

    def _collect(self, outcome: CellOutcome, voc: Any) -> None:
        for d, m in outcome.grouped():
            self.collector.add(d, m, voc.tokens)
        for engine, n in outcome.diff.states.items():
            self.collector.states[(engine, voc.name)] += n
        for engine, n in outcome.diff.steps.items():
            self.collector.steps[(engine, voc.name)] += n
        for counts in outcome.instances:
            self.collector.add_instances(counts, _schema(self.entries[counts.spec_id].spec))

    def _summarize(self, row: dict[str, Any], outcome: CellOutcome) -> None:
        bugs = sum(1 for d in outcome.diff.disagreements if d.verdict == "bug")
        by_engine: dict[str, dict[str, int]] = {}
        for d in outcome.diff.disagreements:
            counts = by_engine.setdefault(d.engine, {"policy": 0, "bug": 0})
            counts["bug" if d.verdict == "bug" else "policy"] += 1
        row.update(
            status=Status.OK.value,
            states=outcome.diff.states,
            disagreements=len(outcome.diff.disagreements),
            bugs=bugs,
            by_engine=by_engine,
            skipped=outcome.diff.skipped,
        )
        self.log(
            f"  {row['vocab']} {row['spec']}: {len(outcome.diff.disagreements)} "
            f"disagreeing states, {bugs} bugs ({row['seconds']}s)"
        )

    # --- outputs -----------------------------------------------------------------------

    def _finish_outputs(self) -> None:
        """Repros, then the final report, which is written even if a repro fails."""
        try:
            if self.options.minimize:
                self.log("writing and running repros")
                self.collector.write_repros(self.out_dir / "findings")
                self.collector.write_instance_repros(self.out_dir / "findings")
        finally:
            self._write(final=True)
        self._print()

    def data(self, final: bool) -> dict[str, Any]:
        c = self.collector
        return {
            "options": self.options.shown(self.run_name),
            "complete": final,
            "seconds": round(time.perf_counter() - self.started, 1),
            "summary": [self._with_version(row) for row in c.summary()],
            "policy_counts": [
                {"engine": e, "rule": r, "states": n}
                for (e, r), n in sorted(c.policy_counts.items())
            ],
            "bugs": [b.row() for b in c.bugs()],
            "findings": [f.row() for f in c.findings.values()],
            "instances": c.instance_summary(),
            "instance_checks": [counts.row() for counts in c.instance_counts],
            "instance_failures": [f.row() for f in c.instance_failures],
            "instance_repros": c.instance_repros,
            "cells": self.rows,
        }

    def _with_version(self, row: dict[str, Any]) -> dict[str, Any]:
        """`row` with the release its worker imported, right after the engine's name."""
        version = self.meta["versions"].get(row["engine"], "")
        return {"engine": row["engine"], "version": version, **row}

    def _write(self, final: bool) -> None:
        """diff.json after every cell (so an interrupted run keeps what it finished), and
        the HTML page at the end."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        data = self.data(final)
        write_json(self.out_dir / "diff.json", data)
        if final:
            page = report.diff_page(data, self.run_name)
            (self.out_dir / "diff.html").write_text(page, encoding="utf-8")

    def _print(self) -> None:
        if self.quiet:
            return
        elapsed = time.perf_counter() - self.started
        out = sys.stdout
        print(f"\n{len(self.rows)} cells in {fmt_seconds(elapsed)}", file=out)
        print(
            f"{'engine':<20} {'states':>8} {'policy':>8} {'bug':>6} {'bugs':>5} {'findings':>9}",
            file=out,
        )
        for r in self.collector.summary():
            print(
                f"{r['engine']:<20} {r['states']:>8} {r['policy_states']:>8} "
                f"{r['bug_states']:>6} {r['bugs']:>5} {r['findings']:>9}",
                file=out,
            )
        mark = {True: "reproduces", False: "DOES NOT REPRODUCE", None: "no repro"}
        for b in self.collector.bugs():
            row = b.row()
            print(
                f"  bug {b.id}: {row['witness_count']} witnesses, {len(b.findings)} findings, "
                f"{mark[row['reproduces']]}",
                file=out,
            )
        print(f"report: {self.out_dir / 'diff.html'}  data: {self.out_dir / 'diff.json'}", file=out)


def _select(options: DiffOptions) -> list[corpora.Entry]:
    out: list[corpora.Entry] = []
    for name in options.sets:
        found = corpora.entries(name, options.corpus_dir, strict=options.strict_corpus)
        out += corpora.spread(list(found), options.limit_specs)
    return out


def _schema(spec: Spec) -> Any:
    import json

    return json.loads(spec.text)
