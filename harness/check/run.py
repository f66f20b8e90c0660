"""`check`: the user's specs through every engine on the user's vocabulary, timed and
cross-checked, as one result a user's CI can act on.

It is a bench run and a diff run of the same specs (`harness.runs.bench` and `.diff`,
with their run lifecycle), sharing one run name in the results store (so the full report
is one `tokensieve report RUN` away), with the same isolation:
every cell runs in a worker process, a crash or hang is a status. The bench half gives
compile, time to first mask, mask latency and memory per (spec, engine), reported as each
engine finishes; the diff half compares every engine's masks with the reference state by
state, triages each difference (policy or bug), minimizes bugs to standalone repros under
`REPORTS_DIR/RUN/findings/`, and checks JSON schemas on the spec's labelled instances and
on sampled outputs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from harness import corpora, engines, runs
from harness.bench.batch_summary import rows as batch_rows
from harness.bench.options import Options
from harness.bench.plan import CellPlan
from harness.check.model import (
    CheckResult,
    EngineResult,
    Finding,
    InstanceTally,
    SpecResult,
)
from harness.corpora import user
from harness.diff.findings.records import CellRow, FindingRecord
from harness.diff.run.controller import DiffOptions
from harness.engines.converter_subject import NAME as SUBJECT
from harness.errors import BadInput
from harness.language import converter
from harness.results.metrics import CellResult
from harness.store import Cell, RunKind, RunMeta, Store, opened

DEFAULT_ENGINES = tuple(n for n in engines.ENGINE_NAMES if n != "naive")
PREFIX = "check-"  # of a check run's default name


def resolve_specs(
    specs: Sequence[str | Path | corpora.Entry], regexes: Sequence[str] = ()
) -> tuple[corpora.Entry, ...]:
    """Entries for what the user named: a corpus spec id (`SET/NAME`), a path (a spec
    file or directory, `harness.corpora.user`), an Entry; and `regexes`."""
    given: list[corpora.Entry] = []
    paths: list[Path] = []
    for item in specs:
        if isinstance(item, corpora.Entry):
            given.append(item)
        elif Path(item).exists():
            paths.append(Path(item))
        elif "/" in str(item) and str(item).split("/", 1)[0] in {s.name for s in corpora.sets()}:
            given.append(corpora.get_entry(str(item)))
        else:
            raise BadInput(f"{item}: neither a spec file or directory nor a corpus spec id")
    out = corpora.distinct([*given, *user.load(paths, regexes)])
    if not out:
        raise BadInput("no spec to check: name spec files, corpus spec ids or --regex")
    return out


def check(
    specs: Sequence[str | Path | corpora.Entry],
    vocab: str,
    *,
    engines_: Sequence[str] | None = None,
    regexes: Sequence[str] = (),
    reports_dir: Path = Path("reports"),
    run: str | None = None,
    timeout: float = 60.0,
    memory_limit: int = 4 << 30,
    progress: IO[str] | None = None,
    on_result: Callable[[str, EngineResult], None] | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    converter: str = "ours",
    batch: Mapping[str, Any] | None = None,
) -> CheckResult:
    """Check `specs` on `vocab` (a vocabulary reference) with `engines_` (default every
    available engine but the reference). `on_result(spec_id, result)` is told each bench
    cell as it finishes; progress lines go to `progress` (default stderr). `executor`
    and `scheduler`: where the cells run (here, or a Dask cluster whose workers offer
    `bench=1`). `converter`: JSON schema to regex for the regex engines (ours or
    outlines-core). `batch`: batch steps to time too (`check --batch`): the bench
    `Options` fields `batch`, `threads`, `batch_steps`, `batch_mix`, `step_budget_ms`.
    Ctrl-C or SIGTERM in either half stops the check (KeyboardInterrupt), its session
    recorded as interrupted and `check --resume --run NAME` printed."""
    err = progress or sys.stderr
    entries = resolve_specs(specs, regexes)
    chosen, skipped = _available(engines_ or DEFAULT_ENGINES, err)
    options = Options(
        engines=tuple(chosen),
        vocabs=(vocab,),
        sets=(),
        timeout=timeout,
        memory_limit=memory_limit,
        converter=converter,
        executor=executor,
        scheduler=scheduler,
        **(batch or {}),
    )
    name = run or time.strftime(f"{PREFIX}%Y%m%d-%H%M%S")
    result = _run(reports_dir, name, entries, options, err, on_result, resume=False)
    result.unavailable = skipped
    return result


def resume(
    reports_dir: Path,
    run: str | None = None,
    *,
    progress: IO[str] | None = None,
    on_result: Callable[[str, EngineResult], None] | None = None,
    executor: str = "local",
    scheduler: str | None = None,
) -> CheckResult:
    """Continue check run `run` (default: the latest bench run named `check-...`) where
    it stopped, with its stored specs and options: the bench half's missing cells, then
    the diff half, resumed where it was begun. `executor`/`scheduler` may change."""
    with opened(reports_dir, resuming=True) as store:
        if run is None:
            runs_ = [r.name for r in store.runs(RunKind.BENCH) if r.name.startswith(PREFIX)]
            if not runs_:
                raise BadInput(f"--resume: no check run recorded in {store.path}; name one")
            run = runs_[-1]
        found = store.find_run(run, RunKind.BENCH)
        if found is None:
            raise BadInput(f"--resume: no check run {run!r} in {store.path}")
        meta = RunMeta.from_json(found.meta)
    stored = Options.from_json(meta.options)
    options = replace(stored, executor=executor, scheduler=scheduler)
    entries = user.from_json(meta.user_entries)
    err = progress or sys.stderr
    return _run(reports_dir, run, entries, options, err, on_result, resume=True)


def _run(
    reports_dir: Path,
    name: str,
    entries: tuple[corpora.Entry, ...],
    options: Options,
    err: IO[str],
    on_result: Callable[[str, EngineResult], None] | None,
    *,
    resume: bool,
) -> CheckResult:
    """Both halves under run `name`, then the result from what the store holds."""
    _bench(reports_dir, name, entries, options, err, on_result, resume)
    with opened(reports_dir) as store:
        diff_begun = store.find_run(name, RunKind.DIFF) is not None
    diff_options = DiffOptions(
        vocabs=options.vocabs,
        engines=options.engines,
        sets=(),
        paths=2,
        walks=4,
        cover=100,
        timeout=max(options.timeout, 120.0),
        converter=options.converter,
    )
    diff = runs.diff(
        reports_dir,
        name,
        diff_options,
        resume=resume and diff_begun,
        user_entries=entries,
        executor=options.executor,
        scheduler=options.scheduler,
        quiet=True,
        log=lambda line: print(line, file=err, flush=True),
        command="check",
    )
    with Store(reports_dir / "results.sqlite") as store:
        stored = store.cells(name)
        versions = dict(store.run(name).meta.get("versions", {}))
    cells = [c for c in stored if c.study == "main"]
    vocab, chosen = options.vocabs[0], list(options.engines)
    result = _result(vocab, name, reports_dir, entries, chosen, cells, diff, versions)
    result.batches = batch_rows(stored)
    result.step_budget_ms = options.step_budget_ms
    return result


def _available(names: Sequence[str], err: IO[str]) -> tuple[list[str], dict[str, str]]:
    """(the engines that can run, the others -> why not: for an engine whose package is
    not installed, with the command that installs it), each skipped one said on `err`."""
    out, skipped = [], {}
    for name in names:
        engines.check(name)
        ok, why = engines.get(name).available()
        if ok:
            out.append(name)
        else:
            skipped[name] = why
            print(f"check: engine {name} skipped: {why}", file=err)
    if not out:
        raise BadInput("check: no engine available")
    return out, skipped


def _bench(
    reports_dir: Path,
    name: str,
    entries: tuple[corpora.Entry, ...],
    options: Options,
    err: IO[str],
    on_result: Callable[[str, EngineResult], None] | None,
    resume: bool,
) -> None:
    """The bench half, each cell told to `on_result` as it is stored."""

    def told(cell: CellPlan, result: CellResult) -> None:
        if on_result is not None:
            on_result(
                cell.spec_id,
                _engine_result(cell.engine, result.status.value, result.message, result.metrics),
            )

    code = runs.bench(
        reports_dir,
        name,
        options,
        resume=resume,
        user_entries=entries,
        quiet=True,
        on_result=told,
        err=err,
        command="check",
    )
    if code:  # interrupted: recorded, and the way to continue printed; stop here
        raise KeyboardInterrupt


def _engine_result(engine: str, status: str, message: str | None, metrics: Any) -> EngineResult:
    memory, kind = metrics.memory
    return EngineResult(
        engine=engine,
        status=status,
        message=message,
        compile_ns=metrics.compile_ns,
        ttfm_ns=metrics.ttfm_ns,
        mask_p50_ns=metrics.fill.get("p50"),
        mask_p99_ns=metrics.fill.get("p99"),
        memory_bytes=memory,
        memory_kind=kind,
    )


def _result(
    vocab: str,
    name: str,
    reports_dir: Path,
    entries: tuple[corpora.Entry, ...],
    chosen: list[str],
    cells: list[Cell],
    diff: dict[str, Any],
    versions: dict[str, str],
) -> CheckResult:
    by_cell = {(c.spec_id, c.engine): c for c in cells}
    result = CheckResult(vocab, name, str(reports_dir))
    for entry in entries:
        spec = SpecResult(entry.spec.id, entry.spec.kind, entry.source)
        for engine in chosen:
            cell = by_cell.get((entry.spec.id, engine))
            if cell is None:
                continue
            r = _engine_result(engine, cell.status, cell.message, cell.metrics)
            r.version = versions.get(engine)
            _add_diff(r, entry.spec.id, diff, reports_dir / name)
            spec.engines.append(r)
        subject = _subject_result(entry.spec.id, diff, reports_dir / name)
        if subject is not None:
            spec.engines.append(subject)
        result.specs.append(spec)
    return result


def _subject_result(spec_id: str, diff: dict[str, Any], out_dir: Path) -> EngineResult | None:
    """outlines-core's own converter, where the diff judged it on this spec's instances
    (`--converter ours` with outlines-core among the engines): a row of its own, untimed."""
    if _tally(diff, spec_id, SUBJECT) is None:
        return None
    r = EngineResult(SUBJECT, "ok", "outlines-core's schema converter, judged on instances")
    r.version = converter.version(converter.OUTLINES)
    _add_diff(r, spec_id, diff, out_dir)
    return r


def _add_diff(r: EngineResult, spec_id: str, diff: dict[str, Any], out_dir: Path) -> None:
    """The diff's verdicts on this (spec, engine): compared states, policy and bug states,
    findings with their repros, instance checks. `diff` is the diff's diff.json dict,
    its cells and findings read as the differ's records."""
    cells = map(CellRow.from_json, diff["cells"])
    row = next((c for c in cells if c.spec == spec_id), None)
    if row is None or row.counts is None:
        detail = None if row is None else (row.failure or row.note)
        r.diff_note = "not compared: " + (detail or "no diff cell")
    else:
        r.states = int(row.counts.states.get(r.engine, 0))
        counts = row.counts.by_engine.get(r.engine, {})
        r.policy_states, r.bug_states = counts.get("policy", 0), counts.get("bug", 0)
        r.diff_note = row.counts.skipped.get(r.engine)
    for f in map(FindingRecord.from_json, diff["findings"]):
        if f.engine == r.engine and spec_id in f.specs:
            repro = str(out_dir / "findings" / f.repro) if f.repro else None
            r.findings.append(Finding(f.id, f.signature, f.explanation, repro, f.reproduces))
    # regex engines: the converter's language (the naive index's), unless the engine was
    # judged itself (tokensdfa-lazy, where the schema has no regex text to compare with)
    own = _tally(diff, spec_id, r.engine)
    r.instances = own if own is not None or _native(r.engine) else _tally(diff, spec_id, "naive")


def _native(engine: str) -> bool:
    return engines.get(engine).capabilities.json_schema == "native"


def _tally(diff: dict[str, Any], spec_id: str, engine: str) -> InstanceTally | None:
    """The instance checks of (spec, engine); None where there were none (a regex)."""
    rows = [c for c in diff["instance_checks"] if c["spec_id"] == spec_id and c["engine"] == engine]
    if not rows:
        return None
    keys = (
        "valid",
        "invalid",
        "samples",
        "false_rejections",
        "false_acceptances",
        "invalid_outputs",
    )
    return InstanceTally(**{k: sum(int(row.get(k, 0)) for row in rows) for k in keys})
