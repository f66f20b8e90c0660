"""A run from start to finish, one function per kind: the store opened, the run named (on
`--resume` without a name, the latest of its kind), its controller run under the store's
`RunSession` (lock, created or resumed, sessions and how they ended), then what the
command prints and the pages the report writes.

This is the layer that composes: the controllers (`bench`, `diff`, `jumpforward`) run
cells and store them, and know nothing of pages; `report` reads what they stored; the
commands parse their arguments and call one function here, and `check` calls `bench`
and `diff` for its two halves. It sits above `report` and below `check` in the layers
of `.importlinter`.

Exit codes and interruptions: `bench` returns 0, or 130 when Ctrl-C or SIGTERM stopped
it (the run can be resumed); `diff` and `jumpforward` let the KeyboardInterrupt go on,
and the command line turns it into 130. Either way the session is recorded as
interrupted, with the way to continue printed, and every finished cell is kept.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from harness import cluster, corpora, report
from harness.bench.controller import Runner
from harness.bench.options import Options
from harness.bench.plan import CellPlan
from harness.diff.run.controller import DiffOptions, DiffRun
from harness.errors import BadInput, UnknownName
from harness.figures import fmt_bytes, fmt_seconds
from harness.jumpforward.controller import JumpOptions, JumpRun, console, write
from harness.results.metrics import CellResult
from harness.store import RunKind, Store, opened, pick_name

INTERRUPTED = 130


def bench(
    reports_dir: Path,
    run: str | None,
    options: Options,
    *,
    resume: bool = False,
    user_entries: tuple[corpora.Entry, ...] = (),
    check_resumed: Callable[[Options], None] | None = None,
    write_report: bool = True,
    quiet: bool = False,
    on_result: Callable[[CellPlan, CellResult], None] | None = None,
    err: IO[str] | None = None,
    out: IO[str] | None = None,
    command: str | None = None,
) -> int:
    """`tokensieve bench`: announce the run, measure it, print its summary and write its
    report `reports_dir/RUN/index.html` (on the current standard streams unless given).
    `run`: its name (None: a new timestamp, or with `resume` the latest bench run).
    `check_resumed(stored)`: told the stored options before a resumed run is claimed
    (the command refuses a cell option given again with another value). `quiet`: only
    measure (check's bench half): no announcement, summary or report. `on_result` is told
    each cell as it is stored; `command`, the one that continues the run after an
    interruption (default bench). Returns 0, or 130 when interrupted."""
    err, out = err or sys.stderr, out or sys.stdout
    _check_executor(options.executor, options.scheduler)
    with opened(reports_dir, resuming=resume) as store:
        name = pick_name(store, RunKind.BENCH, run, resume=resume)
        if resume and check_resumed is not None:
            check_resumed(Options.from_json(store.run(name).meta["options"]))
        runner = Runner(
            store,
            name,
            options,
            resume=resume,
            user_entries=user_entries,
            stream=err,
            on_result=on_result,
            command=command,
        )
        if not quiet:
            print(_announce(runner, store), file=err, flush=True)
        result = runner.run()
        if quiet:
            return INTERRUPTED if result.interrupted else 0
        counts = ", ".join(f"{k} {v}" for k, v in sorted(result.counts.items())) or "none"
        took = fmt_seconds(result.wall_s)
        print(f"{result.measured} cells measured in {took} ({counts})", file=err)
        if result.interrupted:
            return INTERRUPTED
        print(report.summary_text(store, name), file=out)
        if write_report:
            print(f"report: {report.write(store, name, reports_dir / name)}", file=out)
        return 0


def _announce(runner: Runner, store: Store) -> str:
    """The line a bench run starts with: its shape, limits and where results go."""
    o = runner.options
    problems = runner.meta.corpus_problems or []
    return (
        f"run {runner.run_name}: {len(o.engines)} engines x {len(runner.specs)} specs x "
        f"{len(o.vocabs)} vocabularies"
        + (f" + vocabulary-size scaling on {len(runner.scaling)} specs" if o.scaling else "")
        + f"; jobs {runner.parallel(runner.plan())}, timeout {o.timeout:g} s, memory limit "
        f"{fmt_bytes(o.memory_limit)}; results in {store.path}"
        + (f"; {len(problems)} malformed corpus file(s) skipped" if problems else "")
    )


def diff(
    reports_dir: Path,
    run: str | None,
    options: DiffOptions,
    *,
    resume: bool = False,
    user_entries: tuple[corpora.Entry, ...] = (),
    executor: str = "local",
    scheduler: str | None = None,
    quiet: bool = False,
    log: Callable[[str], None] | None = None,
    command: str | None = None,
) -> dict[str, Any]:
    """`tokensieve diff`: diff the run's cells not stored yet, then write `diff.json`,
    `findings/` (repros) and the report's `diff.html` under `reports_dir/RUN/`, and print
    the summary unless `quiet`. `run`: its name (None: a new timestamp, or with `resume`
    the latest diff run); a resumed run keeps its stored options, but runs its cells
    where `executor`/`scheduler` say. `log` takes the progress lines (default standard
    output); `command`, the one that continues the run after an interruption (default
    diff). Returns what `diff.json` holds."""
    _check_executor(executor, scheduler)
    with opened(reports_dir, resuming=resume) as store:
        name = pick_name(store, RunKind.DIFF, run, resume=resume)
        differ = DiffRun(
            store,
            name,
            options,
            reports_dir / name,
            resume=resume,
            user_entries=user_entries,
            log=log,
            quiet=quiet,
            executor=executor,
            scheduler=scheduler,
            page=report.diff_page,
            command=command,
        )
        differ.run()
        return differ.data(final=True)


def jumpforward(
    reports_dir: Path,
    run: str | None,
    options: JumpOptions,
    *,
    resume: bool = False,
    user_entries: tuple[corpora.Entry, ...] = (),
    out: IO[str] | None = None,
) -> dict[str, Any]:
    """`tokensieve jumpforward`: measure the run's cells not stored yet, then write
    `jumpforward.json`, `.csv` and the report's `jumpforward.html` under
    `reports_dir/RUN/`, and print the summary (on `out`, default standard output).
    `run`: its name (None: a new timestamp, or with `resume` the latest jump-forward
    run); a resumed run keeps its stored options, but runs its cells where
    `options.executor`/`scheduler` say. Returns what `jumpforward.json` holds."""
    out = out or sys.stdout
    _check_executor(options.executor, options.scheduler)
    with opened(reports_dir, resuming=resume) as store:
        name = pick_name(store, RunKind.JUMPFORWARD, run, resume=resume)
        runner = JumpRun(store, name, options, resume=resume, user_entries=user_entries)
        data = runner.run()
    out_dir = reports_dir / name
    write(out_dir, data)
    (out_dir / "jumpforward.html").write_text(report.jumpforward_page(data), encoding="utf-8")
    print(console(data, out_dir), file=out)
    return data


def _check_executor(executor: str, scheduler: str | None) -> None:
    """A Dask scheduler's address checked before any work (BadInput naming it)."""
    if executor == "dask":
        cluster.scheduler_address(scheduler)


def report_run(reports_dir: Path, run: str | None, out: Path | None = None) -> int:
    """`tokensieve report`: a bench run's report (its summary printed, `index.html`
    written under `out`, default `reports_dir/RUN`); for a run that is only a diff or a
    jump-forward run, its page rewritten from the JSON its command stored beside it.
    `run` None: the latest bench run. The store is only read."""
    with opened(reports_dir, readonly=True) as store:
        name = run or _latest(store)
        if run is None or store.find_run(name, RunKind.BENCH) is not None:
            store.run(name)
            print(report.summary_text(store, name))
            print(f"report: {report.write(store, name, out or reports_dir / name)}")
            return 0
        kinds = [k for k in (RunKind.DIFF, RunKind.JUMPFORWARD) if store.find_run(name, k)]
        if not kinds:
            known = sorted({r.name for k in RunKind for r in store.runs(k)})
            raise UnknownName(f"run (in {store.path})", name, known)
    for kind in kinds:
        print(f"{kind.label} {name}: {_page_of(kind, reports_dir / name, name, out)}")
    return 0


def _page_of(kind: RunKind, run_dir: Path, name: str, out: Path | None) -> Path:
    """The page of a diff or jump-forward run, from its stored JSON."""
    stem = "diff" if kind is RunKind.DIFF else "jumpforward"
    source = run_dir / f"{stem}.json"
    if not source.is_file():
        raise BadInput(
            f"{kind.label} {name}: no {source}; run `tokensieve {kind.value} --resume --run {name}`"
        )
    data = json.loads(source.read_text(encoding="utf-8"))
    page = report.diff_page(data, name) if kind is RunKind.DIFF else report.jumpforward_page(data)
    target = (out or run_dir) / f"{stem}.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target


def _latest(store: Store) -> str:
    found = store.runs()
    if not found:
        raise BadInput(f"no run recorded in {store.path}; run `tokensieve bench` first")
    return found[-1].name
