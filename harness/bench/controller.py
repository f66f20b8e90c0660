"""The controller of a benchmark run: which cells to measure, where their results go, and
how the run ends.

A cell is one (engine, spec, vocabulary). The controller plans the cells
(`harness.bench.plan`), owns the results store for the run (one controller per run, by
the store's lock), and hands groups of cells to `jobs` executor threads
(`harness.bench.executor`), which run them on isolated worker processes. It never imports
an engine's package: whatever an engine does costs at most its cell (`timeout`, `oom`,
`crash`; `unsupported` and `error` when the engine says so).

Each finished cell is committed to the store at once, so `--resume` after Ctrl-C, a
SIGTERM, a killed controller or a failure measures only what is missing; the run's options
and spec ids are stored with it (`RunMeta`), so a resumed run measures exactly the cells
the first session planned. The run's lock, its creation or resumption and its sessions
(each recorded with how it ended) are the store's `RunSession`, as for every kind of run.
What the command prints and the report it writes are `harness.runs.bench`'s.

JSON schemas reach the regex-only engines (`json_schema == "via-regex"`) through the one
converter, whose verdict is cached on disk; a schema it cannot convert because the regex
is too large, or because it runs out of time or memory, is recorded for those engines from
that verdict without starting a worker.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import IO, Any

from harness import corpora, engines
from harness import vocab as vocabularies
from harness.bench import dask_executor
from harness.bench.batch import STUDY as BATCH_STUDY
from harness.bench.executor import CellInputs, Executor, Measured, Prepared
from harness.bench.options import Options
from harness.bench.plan import (
    SCALING_PATHS,
    CellPlan,
    batch_mix,
    group_cells,
    plan_cells,
    scaling_selection,
    select_specs,
    token_paths,
)
from harness.bench.progress import Progress
from harness.corpora import maskbench, user
from harness.errors import BadInput
from harness.figures import fmt_seconds
from harness.language import converter
from harness.results import Status
from harness.results.metrics import CellResult
from harness.spec import Spec
from harness.store import RunKind, RunMeta, RunSession, Store


@dataclass
class RunResult:
    run: str
    measured: int
    total: int
    wall_s: float
    interrupted: bool
    counts: Counter[str]


# A line on how the token paths stand every this many seconds while they are drawn (a
# run of thousands of specs draws for minutes before its first cell).
PATHS_PROGRESS_S = 15.0


class Runner:
    """Measures the cells of one run that the store does not have yet. The run is claimed
    (`RunSession`: its lock held, created or resumed) from construction until `run`
    returns."""

    def __init__(
        self,
        store: Store,
        run: str,
        options: Options,
        *,
        resume: bool = False,
        user_entries: tuple[corpora.Entry, ...] = (),
        stream: IO[str] | None = None,
        log: Callable[[str], None] | None = None,
        on_result: Callable[[CellPlan, CellResult], None] | None = None,
        command: str | None = None,
    ) -> None:
        """`user_entries`: the user's own specs (`harness.corpora.user`), measured after the
        corpus sets' and stored with the run, so a resumed run needs no file. `on_result`
        is told each cell's result as it is stored (in the controller's thread).
        `command`: the one that continues the run after an interruption (default bench)."""
        self.on_result = on_result
        self.store = store
        self.user_entries = user_entries
        self.run_name = run
        self.stream = stream or sys.stderr
        self.log = log or (lambda text: print(text, file=self.stream, flush=True))
        # The run is this controller's from here until `run` returns.
        self.owner = RunSession(store, RunKind.BENCH, run, self.log, command)
        stored = self.owner.claim(resume)
        try:
            if stored is not None:
                self._resume(stored, options)
            else:
                self._create(options)
            # the run's converter, for this process and every worker it starts
            converter.use(self.options.converter)
        except BaseException:
            self.owner.release()
            raise
        self._by_id = {s.id: s for s in [*self.specs, *self.scaling]}
        self._plan: list[CellPlan] | None = None

    @property
    def meta(self) -> RunMeta:
        """The run's stored metadata (engine versions fill in as workers report)."""
        return self.owner.meta

    def _resume(self, meta: RunMeta, options: Options) -> None:
        """The stored options, but where the cells run (`jobs`, `executor`, `scheduler`)
        as given now; the stored specs."""
        stored = Options.from_json(meta.options)
        self.options = replace(
            stored, jobs=options.jobs, executor=options.executor, scheduler=options.scheduler
        )
        self.specs = self._lookup(meta.spec_ids)
        self.scaling = self._lookup(meta.scaling_spec_ids or [])

    def _create(self, options: Options) -> None:
        options.validate(len(self.user_entries))
        for name in options.engines:  # any NAME@VERSION is installed now, or refused
            engines.environment([name])
        self.options = options
        self.specs = select_specs(options) + [e.spec for e in self.user_entries]
        if not self.specs:
            raise BadInput(f"corpus sets {', '.join(options.sets)} hold no spec")
        self.scaling = scaling_selection(self.specs, options.scaling_specs)
        meta = RunMeta.new(
            options.to_json(),
            [s.id for s in self.specs],
            user.to_json(self.user_entries),
            scaling_spec_ids=[s.id for s in self.scaling] if options.scaling else [],
            corpus_problems=maskbench.problems() if "maskbench" in options.sets else [],
        )
        self.owner.create(meta)

    def _lookup(self, ids: list[str]) -> list[Spec]:
        found = {e.spec.id: e.spec for e in user.from_json(self.meta.user_entries)}
        for name in sorted({i.split("/", 1)[0] for i in ids} - {user.SET}):
            for spec in corpora.load_set(name, self.options.corpus_dir):
                found[spec.id] = spec
        missing = [i for i in ids if i not in found]
        if missing:
            raise BadInput(
                f"run {self.run_name!r}: spec {missing[0]} is no longer in the corpus "
                f"({len(missing)} missing); it cannot be resumed"
            )
        return [found[i] for i in ids]

    def parallel(self, cells: list[CellPlan]) -> int:
        """How many of `cells` run at once: `jobs`, but here never more than their groups
        (one engine on one vocabulary runs its cells one after another, in one worker);
        on Dask, as many as the cluster's workers take, which `jobs` does not bound."""
        if self.options.executor == "dask":
            return self.options.jobs
        return max(1, min(self.options.jobs, len(group_cells(cells))))

    def plan(self) -> list[CellPlan]:
        """The run's cells (planned once: the announcement and the run both ask)."""
        if self._plan is None:
            full = vocabularies.load(self.options.vocabs[0]).size if self.options.scaling else 0
            self._plan = plan_cells(self.options, self.specs, self.scaling, full)
        return self._plan

    # --- running ---------------------------------------------------------------------

    def run(self) -> RunResult:
        """Measure what is missing, in one session of the run (none when nothing is); the
        run's lock is released when this returns. Ctrl-C or SIGTERM ends the session
        `interrupted` and returns (`interrupted` set); any other failure ends it `failed`
        and is raised."""
        try:
            return self._run_claimed()
        finally:
            self.owner.release()

    def _run_claimed(self) -> RunResult:
        cells = self.plan()
        done = self.store.finished_keys(self.run_name)
        todo = [c for c in cells if c.key not in done]
        if not todo:
            self.log(f"run {self.run_name}: all {len(cells)} cells are already measured")
            return RunResult(self.run_name, 0, len(cells), 0.0, False, Counter())
        if done:
            self.log(f"resuming run {self.run_name}: {len(done)} of {len(cells)} cells done")
        started = time.monotonic()
        counts: Counter[str] = Counter()
        interrupted = False
        try:
            with self.owner.session(self.parallel(todo)) as session:
                self._measure(cells, todo, session, counts)
        except KeyboardInterrupt:
            interrupted = True
        wall = time.monotonic() - started
        return RunResult(self.run_name, sum(counts.values()), len(cells), wall, interrupted, counts)

    def _measure(
        self, cells: list[CellPlan], todo: list[CellPlan], session: int, counts: Counter[str]
    ) -> None:
        progress = Progress(len(cells), len(cells) - len(todo), self.stream)
        remaining: list[CellPlan] = []
        for cell in todo:
            result = self._prechecked(cell)
            if result is None:
                remaining.append(cell)
                continue
            self._record(cell, result, session, counts)
            progress.cell(result.status.value, instant=True)
        mix = tuple(s.id for s in batch_mix(self.specs, self.options.batch_mix))
        paths = self._prepare_paths(remaining, mix)
        inputs = CellInputs(self._by_id, paths, self._convert_ns(), mix)
        progress.rate_started = time.monotonic()
        self._schedule(remaining, inputs, progress, session, counts)
        progress.finish()

    def _schedule(
        self,
        cells: list[CellPlan],
        inputs: CellInputs,
        progress: Progress,
        session: int,
        counts: Counter[str],
    ) -> None:
        """Run the cells' groups where the options say: here on `jobs` threads, or on a
        Dask cluster (`harness.bench.dask_executor`); events are stored as they come.
        Batch cells run last, here, one at a time: an engine's thread pool is timed with
        the machine to itself."""
        groups = [g for g in group_cells(cells) if g.study != BATCH_STUDY]
        batches = [g for g in group_cells(cells) if g.study == BATCH_STUDY]

        def handle(event: Prepared | Measured) -> None:
            self._handle(event, session, counts, progress)
            progress.draw()
            self.owner.touch()

        if self.options.executor == "dask" and groups:
            progress.running = [f"dask {self.options.scheduler or ''}".strip()]
            dask_executor.run(groups, self.options, inputs, handle, self.log)
        elif groups:
            self._run_local(groups, inputs, progress, handle, self.options.jobs)
        if batches:
            self._run_local(batches, inputs, progress, handle, 1)

    def _run_local(
        self,
        groups: list[Any],
        inputs: CellInputs,
        progress: Progress,
        handle: Callable[[Prepared | Measured], None],
        jobs: int,
    ) -> None:
        pending = deque(groups)
        events: queue.Queue[Prepared | Measured] = queue.Queue()
        cancel = threading.Event()
        executor = Executor(self.options, inputs, events, cancel)
        take = threading.Lock()

        def next_group() -> Any:
            with take:
                return pending.popleft() if pending else None

        threads = [
            threading.Thread(target=executor.loop, args=(next_group,), daemon=True)
            for _ in range(min(jobs, len(pending)))
        ]
        for thread in threads:
            thread.start()
        try:
            while any(t.is_alive() for t in threads) or not events.empty():
                try:
                    handle(events.get(timeout=0.2))
                except queue.Empty:
                    progress.draw()
                progress.running = sorted(executor.running)
        finally:
            cancel.set()
            for thread in threads:
                thread.join()

    def _handle(
        self, event: Prepared | Measured, session: int, counts: Counter[str], progress: Progress
    ) -> None:
        if isinstance(event, Measured):
            self._record(event.cell, event.result, session, counts)
            progress.cell(event.result.status.value)
            return
        group = event.group
        if event.status is Status.OK and event.metrics.version:
            self.owner.record_versions({group.engine: event.metrics.version})
        self.store.add_preparation(
            self.run_name,
            group.engine,
            group.vocab,
            event.status.value,
            event.message,
            event.metrics,
        )

    def _record(
        self, cell: CellPlan, result: CellResult, session: int, counts: Counter[str]
    ) -> None:
        key = (cell.engine, cell.spec_id, cell.vocab, cell.study)
        self.store.add_cell(self.run_name, key, result, session)
        counts[result.status.value] += 1
        if self.on_result is not None:
            self.on_result(cell, result)

    # --- inputs of the cells -----------------------------------------------------------

    def _prepare_paths(
        self, cells: Sequence[CellPlan], mix: Sequence[str] = ()
    ) -> dict[tuple[str, str], tuple[list[list[int]], str | None]]:
        """Token paths of every (spec, vocabulary) still to measure: [ids], note; for a
        batch cell, those of the specs it mixes (`mix`)."""
        wanted = sorted({(c.vocab, c.spec_id, c.study) for c in cells if c.study != BATCH_STUDY})
        batch_vocabs = {c.vocab for c in cells if c.study == BATCH_STUDY}
        wanted = sorted({*wanted, *((v, s, "main") for v in batch_vocabs for s in mix)})
        out: dict[tuple[str, str], tuple[list[list[int]], str | None]] = {}
        loaded: dict[str, Any] = {}
        started = time.monotonic()
        if wanted:
            self.log(f"token paths for {len(wanted)} (spec, vocabulary) pairs (cached on disk)")
        said = started
        for done, (vocab_name, spec_id, study) in enumerate(wanted):
            if time.monotonic() - said > PATHS_PROGRESS_S:
                said = time.monotonic()
                self.log(f"token paths: {done} of {len(wanted)} pairs ready")
            voc = loaded.get(vocab_name)
            if voc is None:
                voc = loaded[vocab_name] = vocabularies.load(vocab_name)
            n = SCALING_PATHS if study == "scaling" else self.options.paths
            out[(spec_id, vocab_name)] = token_paths(self._by_id[spec_id], voc, n)
        if wanted:
            self.log(f"token paths ready in {fmt_seconds(time.monotonic() - started)}")
        return out

    def _via_regex(self, engine: str) -> bool:
        return engines.get(engine).capabilities.json_schema == "via-regex"

    def _itself(self, engine: str) -> bool:
        return engines.get(engine).compiles_schemas_itself()

    def _convert_ns(self) -> dict[tuple[str, str], int]:
        """(engine, spec id) -> the converter's time, for each schema a regex-only engine
        of this run compiles from the converted regex (not one that compiles schemas
        itself, whose compile time holds the schema's); the specs then carry their
        converted regex (`with_regex`), so no worker converts again."""
        out: dict[tuple[str, str], int] = {}
        for spec_id, spec in list(self._by_id.items()):
            if spec.kind != "json_schema":
                continue
            self._by_id[spec_id] = converter.with_regex(spec)
            _, ns = converter.verdict(spec.text)
            for engine in self.options.engines:
                if ns is not None and self._via_regex(engine) and not self._itself(engine):
                    out[(engine, spec_id)] = ns
        return out

    def _prechecked(self, cell: CellPlan) -> CellResult | None:
        """The result of a cell decided before any worker: its engine's package is not
        installed (`unsupported`, with the command that installs it), or the shared
        converter already decided its schema."""
        missing = engines.get(cell.engine).not_installed()
        if missing is not None:
            return CellResult(Status.UNSUPPORTED, f"engine {cell.engine} unavailable: {missing}")
        if cell.study == BATCH_STUDY:
            return None
        spec = self._by_id[cell.spec_id]
        if spec.kind != "json_schema" or not self._via_regex(cell.engine):
            return None
        found = converter.convert_schema(spec.text)
        status, value, regex = found.status, found.value, found.regex
        limit = engines.get(cell.engine).capabilities.max_regex_chars
        if regex is not None and limit is not None and len(regex) > limit:
            return CellResult(
                Status.UNSUPPORTED,
                f"the schema's regex has {len(regex):,} characters, over this engine's "
                f"{limit:,}-character limit (checked beforehand)",
            )
        reasons = {
            "timeout": (Status.TIMEOUT, f"ran over {value} s"),
            "crashed": (Status.CRASH, f"died ({value}) converting it"),
        }
        if status not in reasons:
            return None  # converted, or rejected with a message the engine reports itself
        outcome, reason = reasons[status]
        return CellResult(outcome, f"schema-to-regex converter (checked beforehand) {reason}")
