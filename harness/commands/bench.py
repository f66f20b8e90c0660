"""`tokensieve bench`: measure engines x corpus specs x vocabularies into the results
database, then write the run's report and print its summary table."""

from __future__ import annotations

import argparse

from harness import engines, runs
from harness.bench.options import DEFAULT_SETS, Options
from harness.commands import options as opt
from harness.errors import BadInput
from harness.language import converter

DEFAULT_VOCABS = ("llama3",)
DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY = 4 << 30


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="measure compile, time to first mask, mask and advance latency, memory",
        description="Measure every (engine, spec, vocabulary) cell in a worker process "
        "apart from this controller (one per engine and vocabulary, which prepares the "
        "vocabulary once; replaced after a failure), so a crash, hang or memory blow-up "
        "costs only its cell: statuses ok, unsupported, error, timeout, oom, crash. "
        "Results land in REPORTS_DIR/results.sqlite as each cell finishes; --resume "
        "continues an interrupted or failed run. Ends by writing REPORTS_DIR/RUN/index.html "
        "and printing a summary table.",
    )
    opt.add_vocab(p, DEFAULT_VOCABS)
    opt.add_engines(p, engines.ENGINE_NAMES)
    opt.add_corpus(p, DEFAULT_SETS)
    opt.add_run(p, prefix=None)
    opt.add_resume(p, "run")
    p.add_argument(
        "--jobs",
        type=opt.count(1),
        default=1,
        metavar="N",
        help="cells measured at once, each in its own worker (default 1: clean timings)",
    )
    opt.add_timeout(p, None, "one cell (compile + walks) (default 60)")
    opt.add_memory_limit(p, None, "a worker (default 4G)")
    p.add_argument(
        "--paths", type=opt.count(0), metavar="N", help="token paths walked per spec (default 2)"
    )
    p.add_argument(
        "--max-steps",
        type=opt.count(0),
        metavar="N",
        help="steps timed per path at most (default 200)",
    )
    p.add_argument(
        "--scaling",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also compile a few specs against subsets (8k, 16k, 32k, 64k ids) of the first "
        "vocabulary (default off)",
    )
    opt.add_batch(p)
    opt.add_executor(p)
    opt.add_reports_dir(p)
    p.add_argument(
        "--no-report", action="store_true", help="do not write the HTML report at the end"
    )
    p.set_defaults(func=run)


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
    "converter": "converter",
    "batch": "batch",
    "threads": "threads",
    "batch_steps": "batch_steps",
    "batch_mix": "batch_mix",
}


def options_from(args: argparse.Namespace, sets: list[str]) -> Options:
    return Options(
        engines=tuple(opt.listed(args.engines, engines.ENGINE_NAMES)),
        vocabs=tuple(opt.vocab_refs(args, DEFAULT_VOCABS)),
        sets=tuple(sets),
        corpus_dir=args.corpus_dir,
        paths=2 if args.paths is None else args.paths,
        max_steps=200 if args.max_steps is None else args.max_steps,
        timeout=DEFAULT_TIMEOUT if args.timeout is None else args.timeout,
        memory_limit=DEFAULT_MEMORY if args.memory_limit is None else args.memory_limit,
        limit_specs=args.limit_specs,
        scaling=bool(args.scaling),
        jobs=args.jobs,
        strict_corpus=args.strict_corpus,
        executor=args.executor,
        scheduler=args.scheduler,
        converter=args.converter or converter.DEFAULT,
        **opt.batch_options(args),
    )


def check_resume_options(args: argparse.Namespace, stored: Options) -> None:
    """On --resume, a cell option given again must equal the stored one."""
    given = options_from(args, opt.listed(args.corpus, stored.sets))
    for arg, attr in CELL_OPTIONS.items():
        if getattr(args, arg) is None:
            continue
        if getattr(given, attr) != getattr(stored, attr):
            flag = "--" + arg.replace("_", "-")
            raise BadInput(
                f"--resume: {flag} differs from the run's stored value "
                f"{getattr(stored, attr)!r}; drop it, or start a new run"
            )


def run(args: argparse.Namespace) -> int:
    if args.resume and (args.spec or args.regex):
        raise BadInput("--resume: the run's specs are stored with it; drop --spec/--regex")
    sets, entries = opt.specs_from(args, DEFAULT_SETS)
    return runs.bench(
        opt.reports_dir(args),
        args.run,
        options_from(args, sets),
        resume=args.resume,
        user_entries=entries,
        check_resumed=lambda stored: check_resume_options(args, stored),
        write_report=not args.no_report,
    )
