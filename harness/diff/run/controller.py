"""The controller of a differential test: every (spec, vocabulary) cell run in a worker
process (`harness.diff.run.service`), its outcome stored, its findings collected, and at the
end every bug's repro written and run on its own.

Each vocabulary gets one worker, which prepares it for every engine once; a cell that
hangs, crashes or blows its memory limit costs only that cell (its status is recorded)
and the next cell gets a fresh worker. Cells are stored in the results database as they
finish (`diff_cells`), so `diff --resume` continues an interrupted run: the stored cells
are replayed into the collector, the rest are run, and findings and repros come out as if
the run had gone in one go. `RUN/diff.json` is rewritten after every cell, `diff.html`
(when given the page to write: `harness.runs.diff` passes the report's) and `findings/`
at the end. The run's lock, its creation or resumption and its sessions (each recorded
with how it ended) are the store's `RunSession`, as for every kind of run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from harness import cluster, corpora, engines
from harness import vocab as vocabularies
from harness.corpora import paths, user
from harness.diff.findings.collector import Collector
from harness.diff.findings.records import CellCounts, CellRow
from harness.diff.judge.triage import VerdictKind
from harness.diff.run.cell import SERVICE
from harness.diff.run.protocol import (
    CellItem,
    CellOutcome,
    CellReply,
    CellRequest,
    DiffSetup,
    InstancePlan,
    StoredCell,
)
from harness.diff.walk.plan import WalkPlan
from harness.embed import write_json
from harness.errors import BadInput, EngineUnavailable, TokensieveError
from harness.figures import fmt_seconds
from harness.language import converter
from harness.results import Status
from harness.spec import Spec
from harness.store import RunKind, RunMeta, RunSession, Store
from harness.vocab import Vocabulary

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
    # serving-protocol walks per engine and spec (`harness.diff.walk.serving`; 0: none)
    protocol_walks: int = 4

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> DiffOptions:
        tuples = ("vocabs", "engines", "sets")
        # runs stored before there was a choice used outlines-core's converter
        data = {"converter": "outlines-core", **data}
        # and those stored before the serving protocol was walked, none
        data = {"protocol_walks": 0, **data}
        fields: dict[str, Any] = {k: tuple(v) if k in tuples else v for k, v in data.items()}
        return DiffOptions(**fields)

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
        page: Callable[[dict[str, Any], str], str] | None = None,
        command: str | None = None,
    ) -> None:
        """`user_entries`: the user's own specs (`harness.corpora.user`), diffed after the
        corpus sets' and stored with the run, so a resumed run needs no file. `log` takes
        the progress lines (default: standard output); `quiet` leaves out the summary.
        `executor`/`scheduler`: where the cells run (`harness.cluster`); a
        resumed run may change them. `page(data, run)`: the HTML of `diff.html`, written
        at the end (none without it). `command`: the one that continues the run after an
        interruption (default diff). The run's lock is held from here until `run` returns
        (released here if this fails)."""
        self.quiet = quiet
        self.executor = executor
        self.scheduler = scheduler
        self.store = store
        self.run_name = run
        self.out_dir = out_dir
        self.page = page
        self.log = log or (lambda text: print(text, flush=True))
        self.owner = RunSession(store, RunKind.DIFF, run, self.log, command)
        stored = self.owner.claim(resume)
        try:
            self.options = options if stored is None else DiffOptions.from_json(stored.options)
            # the run's converter, for this process and every worker it starts
            converter.use(self.options.converter)
            if stored is None:
                self._create(user_entries)
            self.entries = self._lookup(self.meta.spec_ids)
        except BaseException:
            self.owner.release()
            raise
        self.specs = [e.spec for e in self.entries.values()]
        self.collector = Collector()
        self.rows: list[dict[str, Any]] = []
        self.started = time.perf_counter()

    @property
    def meta(self) -> RunMeta:
        """The run's stored metadata (engine versions fill in as cells report them)."""
        return self.owner.meta

    def _create(self, user_entries: tuple[corpora.Entry, ...]) -> None:
        for name in self.options.engines:
            ok, why = engines.get(name).available()
            if not ok:
                raise EngineUnavailable(f"engine {name} unavailable: {why}")
        chosen = _select(self.options) + list(user_entries)
        if not chosen:
            raise BadInput("no spec to diff: give --corpus SETS, --spec PATH or --regex")
        meta = RunMeta.new(
            self.options.to_json(), [e.spec.id for e in chosen], user.to_json(user_entries)
        )
        self.owner.create(meta)

    def _lookup(self, ids: list[str]) -> dict[str, corpora.Entry]:
        """The run's entries by spec id, in the run's order."""
        found = {e.spec.id: e for e in user.from_json(self.meta.user_entries)}
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
        """Replay the stored cells, run the rest, write the outputs, in one session of the
        run; the run's lock is released when this returns. Ctrl-C or SIGTERM ends the
        session `interrupted`, any failure `failed`; either is raised."""
        try:
            with self.owner.session() as session:
                self._replay()
                self._run_cells(session)
                self._finish_outputs()
        finally:
            self.owner.release()

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
                        DiffSetup(vname, self.options.engines).to_json(),
                        self.options.engines,
                        self.options.memory_limit,
                        "harness.diff.run.cell:run_cell",
                        items[i : i + size],
                    )
                )

        def handle(item: CellItem, result: CellReply) -> None:
            self._cell_done(item, result, loaded[item.row.vocab], session)

        cluster.run(batches, handle, self.log, self.executor, self.scheduler)

    def _item(self, spec: Spec, voc: Vocabulary) -> CellItem:
        row = CellRow(spec.id, voc.name)
        request = self._request(spec, voc, row)
        return CellItem(row, request, self.options.engines, self.options.timeout)

    def _cell_done(self, item: CellItem, result: CellReply, voc: Vocabulary, session: int) -> None:
        row = replace(item.row, seconds=result.seconds, host=result.host)
        self.owner.record_versions(result.versions)
        for note in result.notes:
            self.log(f"  {voc.name} {note}")
        outcome = result.outcome
        if outcome is not None:
            self._collect(outcome, voc)
            self._summarize(row, outcome)
        elif result.failure is not None:
            failure = result.failure
            row.status, row.failure = failure.status, failure.message
            self.log(f"  {voc.name} {row.spec}: {failure.status} {failure.message}")
        stored = StoredCell(row, outcome).to_json()
        self.rows.append(stored["row"])
        assert row.status is not None  # a cell ends with an outcome or a failure
        self.store.add_diff_cell(self.run_name, row.spec, voc.name, row.status, stored, session)
        self.owner.touch()
        self._write(final=False)

    def _request(self, spec: Spec, voc: Vocabulary, row: CellRow) -> CellRequest:
        """The cell's request; why it has no mask diff or no corpus paths goes to `row`."""
        o = self.options
        regex: str | None = None
        try:
            if spec.kind != "grammar":  # a grammar's reference is its own (Earley)
                regex = converter.schema_to_regex(spec)
        except TokensieveError as exc:
            regex = None  # no reference language; the native engines still face instances
            row.note = f"no mask diff: {exc}"
        try:
            found = paths.paths_for(spec, voc, seed=o.seed, n=o.paths)
            token_paths = [tuple(p.ids) for p in found if p.exact]
        except TokensieveError as exc:
            token_paths = []  # the walks still cover the reference's states
            row.paths = f"no corpus paths: {exc}"
        plan = WalkPlan(
            paths=tuple(token_paths),
            random_walks=o.walks,
            cover_states=o.cover,
            seed=o.seed,
            protocol_walks=o.protocol_walks,
        )
        instances = None
        if spec.kind in ("json_schema", "grammar"):  # JSON values, or a grammar's texts
            entry = self.entries[spec.id]
            valid, invalid = entry.valid[: o.instances], entry.invalid[: o.instances]
            instances = InstancePlan(tuple(valid), tuple(invalid), o.samples, o.seed)
        # the spec travels with its converted regex, so the worker never converts
        return CellRequest(
            spec=converter.with_regex(spec),
            regex=regex,
            plan=plan,
            minimize=o.minimize,
            minimize_budget_s=o.timeout * MINIMIZE_SHARE,
            instances=instances,
        )

    def _collect(self, outcome: CellOutcome, voc: Vocabulary) -> None:
        for d, m in outcome.grouped():
            self.collector.add(d, m, voc.tokens)
        for engine, n in outcome.diff.states.items():
            self.collector.states[(engine, voc.name)] += n
        for engine, n in outcome.diff.steps.items():
            self.collector.steps[(engine, voc.name)] += n
        for engine, n in outcome.diff.protocol_walks.items():
            self.collector.protocol_walks[(engine, voc.name)] += n
        for engine, n in outcome.diff.protocol_ops.items():
            self.collector.protocol_ops[(engine, voc.name)] += n
        for counts in outcome.instances:
            spec = self.entries[counts.spec_id].spec
            # a grammar's instance bugs are mask bugs on their token paths, minimized with
            # the cell's (`service.grammar_instance_checks`); a schema's get repros here
            self.collector.add_instances(counts, _schema(spec) if spec.kind != "grammar" else None)

    def _summarize(self, row: CellRow, outcome: CellOutcome) -> None:
        bugs = sum(1 for d in outcome.diff.disagreements if d.verdict == VerdictKind.BUG)
        by_engine: dict[str, dict[str, int]] = {}
        for d in outcome.diff.disagreements:
            counts = by_engine.setdefault(d.engine, {kind: 0 for kind in VerdictKind})
            counts[d.verdict] += 1
        row.status = Status.OK
        row.counts = CellCounts(
            outcome.diff.states,
            len(outcome.diff.disagreements),
            bugs,
            by_engine,
            outcome.diff.skipped,
        )
        self.log(
            f"  {row.vocab} {row.spec}: {len(outcome.diff.disagreements)} "
            f"disagreeing states, {bugs} bugs ({row.seconds}s)"
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
        version = self.meta.versions.get(row["engine"], "")
        return {"engine": row["engine"], "version": version, **row}

    def _write(self, final: bool) -> None:
        """diff.json after every cell (so an interrupted run keeps what it finished), and
        the HTML page at the end."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        data = self.data(final)
        write_json(self.out_dir / "diff.json", data)
        if final and self.page is not None:
            page = self.page(data, self.run_name)
            (self.out_dir / "diff.html").write_text(page, encoding="utf-8")

    def _print(self) -> None:
        if self.quiet:
            return
        elapsed = time.perf_counter() - self.started
        out = sys.stdout
        print(f"\n{len(self.rows)} cells in {fmt_seconds(elapsed)}", file=out)
        print(
            f"{'engine':<20} {'states':>8} {'policy':>8} {'bug':>6} {'bugs':>5} {'findings':>9}"
            f" {'protocol walks/ops/bugs':>24}",
            file=out,
        )
        for r in self.collector.summary():
            print(
                f"{r['engine']:<20} {r['states']:>8} {r['policy_states']:>8} "
                f"{r['bug_states']:>6} {r['bugs']:>5} {r['findings']:>9} "
                f"{r['protocol_walks']:>10}/{r['protocol_ops']}/{r['protocol_bugs']}",
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
        html = f"report: {self.out_dir / 'diff.html'}  " if self.page is not None else ""
        print(f"{html}data: {self.out_dir / 'diff.json'}", file=out)


def _select(options: DiffOptions) -> list[corpora.Entry]:
    out: list[corpora.Entry] = []
    for name in options.sets:
        found = corpora.entries(name, options.corpus_dir, strict=options.strict_corpus)
        out += corpora.spread(list(found), options.limit_specs)
    return out


def _schema(spec: Spec) -> Any:
    import json

    return json.loads(spec.text)
