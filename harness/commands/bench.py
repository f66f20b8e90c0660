"""`tokensieve bench`: measure engines x corpus specs x vocabularies into the results
database, then write the run's report and print its summary table."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness import engines
from harness.bench.controller import DEFAULT_SETS, Options, Runner
from harness.errors import TokensieveError
from harness.figures import fmt_bytes, fmt_seconds, parse_bytes
from harness.store.db import REPORTS_DIR, Store

DEFAULT_VOCAB = "llama3"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="measure compile, time to first mask, mask and advance latency, memory",
        description="Measure every (engine, spec, vocabulary) cell in a worker process "
        "apart from this controller (one per engine and vocabulary, which prepares the "
        "vocabulary once; replaced after a failure), so a crash, hang or memory blow-up "
        "costs only its cell: statuses ok, unsupported, error, timeout, oom, crash. "
        "Results land in "
        "REPORTS_DIR/results.sqlite as each cell finishes; --resume continues an "
        "interrupted run. Ends by writing REPORTS_DIR/RUN/index.html and printing a "
        "summary table.",
    )
    parser.add_argument(
        "--vocab",
        action="append",
        metavar="NAME",
        help=f"vocabulary name(s), repeatable or comma-separated (default {DEFAULT_VOCAB})",
    )
    parser.add_argument(
        "--engines",
        metavar="LIST",
        help="comma-separated engine names (default: every registered engine)",
    )
    parser.add_argument(
        "--corpus",
        action="append",
        metavar="SET",
        help=f"corpus set(s), repeatable or comma-separated (default {','.join(DEFAULT_SETS)})",
    )
    parser.add_argument("--corpus-dir", metavar="DIR", help="where the MaskBench data lives")
    parser.add_argument("--run", metavar="NAME", help="run name (default: a timestamp)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue run NAME (default: the latest run) with its stored options",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="cells measured at once, each in its own worker (default 1: clean timings)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds one cell (compile + walks) may take before it is killed (default 60)",
    )
    parser.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="resident memory a worker may reach before it is killed, e.g. 4G (default 4G)",
    )
    parser.add_argument(
        "--paths", type=int, metavar="N", help="token paths walked per spec (default 2)"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        metavar="N",
        help="steps timed per path at most (default 200)",
    )
    parser.add_argument(
        "--limit-specs",
        type=int,
        metavar="N",
        help="at most N specs per corpus set, evenly spaced over the set (default: all)",
    )
    parser.add_argument(
        "--scaling",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also compile a few specs against subsets (8k, 16k, 32k, 64k ids) of the first "
        "vocabulary (default off)",
    )
    parser.add_argument(
        "--reports-dir",
        metavar="DIR",
        default=str(REPORTS_DIR),
        help="where results.sqlite and the RUN/ report folders live (default reports/)",
    )
    parser.add_argument(
        "--no-report", action="store_true", help="do not write the HTML report at the end"
    )
    parser.set_defaults(func=run)


# Options that decide the cells of a run; on --resume they must match the stored ones.
CELL_OPTIONS = {
    "vocab": "vocabs",
    "engines": "engines",
    "corpus": "sets",
    "corpus_dir": "corpus_dir",
    "timeout": "timeout",
    "memory_limit": "memory_limit",
    "paths": "paths",
    "max_steps": "max_steps",
    "limit_specs": "limit_specs",
    "scaling": "scaling",
}


def split(values: list[str] | str | None) -> list[str]:
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def options_from(args: argparse.Namespace) -> Options:
    memory = parse_memory(args.memory_limit) if args.memory_limit else 4 << 30
    return Options(
        engines=tuple(split(args.engines) or engines.ENGINE_NAMES),
        vocabs=tuple(split(args.vocab) or [DEFAULT_VOCAB]),
        sets=tuple(split(args.corpus) or DEFAULT_SETS),
        corpus_dir=args.corpus_dir,
        paths=2 if args.paths is None else args.paths,
        max_steps=200 if args.max_steps is None else args.max_steps,
        timeout=60.0 if args.timeout is None else args.timeout,
        memory_limit=memory,
        limit_specs=args.limit_specs,
        scaling=bool(args.scaling),
        jobs=args.jobs,
    )


def parse_memory(text: str) -> int:
    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise TokensieveError(f"--memory-limit: {exc}") from None


def check_resume_options(args: argparse.Namespace, stored: Options) -> None:
    """On --resume, a cell option given again must equal the stored one."""
    given = options_from(args)
    for arg, attr in CELL_OPTIONS.items():
        if getattr(args, arg) is None:
            continue
        if getattr(given, attr) != getattr(stored, attr):
            flag = "--" + arg.replace("_", "-")
            raise TokensieveError(
                f"--resume: {flag} differs from the run's stored value "
                f"{getattr(stored, attr)!r}; drop it, or start a new run"
            )


def run(args: argparse.Namespace) -> int:
    from harness.report import bench_page as report

    reports_dir = Path(args.reports_dir)
    with Store(reports_dir / "results.sqlite") as store:
        name = args.run
        if args.resume:
            if name is None:
                runs = store.runs()
                if not runs:
                    raise TokensieveError(f"--resume: no run recorded in {store.path}")
                name = runs[-1].name
            stored = Options.from_json(store.run(name).meta["options"])
            check_resume_options(args, stored)
        name = name or time.strftime("%Y%m%d-%H%M%S")
        options = options_from(args)
        runner = Runner(store, name, options, resume=args.resume)
        opts = runner.options
        print(
            f"run {name}: {len(opts.engines)} engines x {len(runner.specs)} specs x "
            f"{len(opts.vocabs)} vocabularies"
            + (f" + vocabulary-size scaling on {len(runner.scaling)} specs" if opts.scaling else "")
            + f"; jobs {opts.jobs}, timeout {opts.timeout:g} s, memory limit "
            f"{fmt_bytes(opts.memory_limit)}; results in {store.path}",
            file=sys.stderr,
            flush=True,
        )
        result = runner.run()
        print(
            f"{result.measured} cells measured in {fmt_seconds(result.wall_s)} "
            f"({', '.join(f'{k} {v}' for k, v in sorted(result.counts.items())) or 'none'})",
            file=sys.stderr,
        )
        if result.interrupted:
            return 130
        print(report.summary_text(store, name))
        if not args.no_report:
            index = report.write(store, name, reports_dir / name)
            print(f"report: {index}")
    return 0
