"""`tokensieve diff`: every engine's masks cross-checked against the reference, the
disagreements triaged (policy or bug), bugs minimized to standalone repros
(`harness.diff.run.controller` does the work)."""

from __future__ import annotations

import argparse

from harness import runs
from harness.bench.options import DEFAULT_SETS
from harness.commands import options as opt
from harness.diff.run.controller import DiffOptions
from harness.language import converter

DEFAULT_VOCABS = ("llama3", "tekken")
DEFAULT_ENGINES = (
    "outlines-core",
    "llguidance",
    "xgrammar",
    "tokensdfa",
    "tokensdfa-canonical",
    "tokensdfa-lazy",
    "tokensdfa-pushdown",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "diff",
        help="cross-check every engine's masks against the reference; triage, minimize, repro",
        description="Walk each spec's reference states (shortest paths, corpus token "
        "paths, seeded random walks) with every engine in lockstep, compare each full "
        "mask and accepting status with the naive reference and TokensDFA exact, triage "
        "every difference as a declared policy or a bug, and minimize each bug to a "
        "standalone repro script under REPORTS_DIR/RUN/findings/. --resume continues an "
        "interrupted diff.",
    )
    opt.add_vocab(p, DEFAULT_VOCABS)
    opt.add_engines(p, DEFAULT_ENGINES)
    opt.add_corpus(p, DEFAULT_SETS)
    p.add_argument("--paths", type=opt.count(0), default=4, help="corpus token paths per spec (4)")
    p.add_argument("--walks", type=opt.count(0), default=8, help="random walks per spec (8)")
    p.add_argument(
        "--cover",
        type=opt.count(0),
        default=200,
        help="reference states each checked on a shortest token path, when the reference "
        "has more than 2048 states (smaller ones are covered whole) (200)",
    )
    p.add_argument(
        "--protocol-walks",
        type=opt.count(0),
        default=4,
        help="walks per engine and spec through the serving protocol (rollback, draft "
        "checks, forced tokens, reset, batch rows), each held to a new matcher; 0 turns "
        "them off (4)",
    )
    p.add_argument("--seed", type=int, default=0)
    opt.add_timeout(
        p, 180.0, "one engine on one spec and vocabulary (the reference's own checks too)"
    )
    opt.add_memory_limit(p, "8G", "one spec and vocabulary's worker")
    p.add_argument(
        "--instances",
        type=opt.count(0),
        default=8,
        help="labelled valid and invalid instances checked per schema, each (8)",
    )
    p.add_argument(
        "--samples", type=opt.count(0), default=4, help="completions sampled per schema (4)"
    )
    p.add_argument("--no-minimize", action="store_true", help="skip minimization and repros")
    opt.add_executor(p)
    opt.add_run(p, prefix=None)
    opt.add_resume(p, "diff run")
    opt.add_reports_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    sets, entries = opt.specs_from(args, DEFAULT_SETS)
    options = DiffOptions(
        vocabs=tuple(opt.vocab_refs(args, DEFAULT_VOCABS)),
        engines=tuple(opt.listed(args.engines, DEFAULT_ENGINES)),
        sets=tuple(sets),
        corpus_dir=args.corpus_dir,
        limit_specs=args.limit_specs,
        paths=args.paths,
        walks=args.walks,
        cover=args.cover,
        seed=args.seed,
        timeout=args.timeout,
        memory_limit=args.memory_limit,
        instances=args.instances,
        samples=args.samples,
        minimize=not args.no_minimize,
        strict_corpus=args.strict_corpus,
        converter=args.converter or converter.DEFAULT,
        protocol_walks=args.protocol_walks,
    )
    runs.diff(
        opt.reports_dir(args),
        args.run,
        options,
        resume=args.resume,
        user_entries=entries,
        executor=args.executor,
        scheduler=args.scheduler,
    )
    return 0
