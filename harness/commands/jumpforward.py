"""`tokensieve jumpforward`: forced-token shares and jump-forward steps saved, per corpus
set, engine and vocabulary, with forced texts compared across engines state by state
(`harness.jumpforward.controller` does the work, `harness.runs.jumpforward` runs it).

Writes `REPORTS_DIR/RUN/jumpforward.json`, `jumpforward.csv` and `jumpforward.html`; the
bench report of the same run embeds the summary. On MaskBench it puts the forced-token
share per split beside MaskBench's published fast-forward share (Llama-3 tokenizer,
compact JSON). Each cell is stored in the results database as it finishes, so `--resume`
continues an interrupted run.
"""

from __future__ import annotations

import argparse
import sys

from harness import engines, runs
from harness.commands import options as opt
from harness.errors import BadInput
from harness.jumpforward.controller import JumpOptions
from harness.language import converter

DEFAULT_ENGINES = ("tokensdfa", "tokensdfa-lazy", "llguidance", "xgrammar")
DEFAULT_SETS = ("outlines-bench", "llm-formats", "literal-heavy", "handwritten")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "jumpforward", help="forced-token share and jump-forward steps saved per engine"
    )
    opt.add_vocab(p, ("llama3",))
    opt.add_engines(p, DEFAULT_ENGINES)
    opt.add_corpus(p, DEFAULT_SETS)
    p.add_argument("--paths", type=opt.count(0), default=3, help="token paths per spec (3)")
    opt.add_timeout(p, 120.0, "one engine and spec")
    opt.add_memory_limit(p, None, "the worker")
    opt.add_executor(p)
    opt.add_run(p, prefix=None)
    opt.add_resume(p, "jumpforward run")
    opt.add_reports_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    sets, entries = opt.specs_from(args, DEFAULT_SETS)
    options = JumpOptions(
        vocabs=tuple(opt.vocab_refs(args, ("llama3",))),
        engines=tuple(_jumping(opt.listed(args.engines, DEFAULT_ENGINES))),
        sets=tuple(sets),
        corpus_dir=args.corpus_dir,
        paths=args.paths,
        limit_specs=args.limit_specs,
        timeout=args.timeout,
        memory_limit=args.memory_limit,
        strict_corpus=args.strict_corpus,
        executor=args.executor,
        scheduler=args.scheduler,
        converter=args.converter or converter.DEFAULT,
    )
    runs.jumpforward(
        opt.reports_dir(args), args.run, options, resume=args.resume, user_entries=entries
    )
    return 0


def _jumping(names: list[str]) -> list[str]:
    """The engines of `names` that have jump-forward (forced text); the others are named
    on stderr as skipped, and BadInput when none is left."""
    kept = [n for n in names if engines.get(n).jump_forward]
    left_out = [n for n in names if n not in kept]
    having = [n for n in engines.ENGINE_NAMES if engines.get(n).jump_forward]
    if not kept:
        raise BadInput(
            f"--engines: no jump-forward (forced text) in {', '.join(left_out)}; "
            f"engines that have it: {', '.join(having)}"
        )
    if left_out:
        print(
            f"tokensieve jumpforward: skipping {', '.join(left_out)}: no jump-forward "
            "(forced text)",
            file=sys.stderr,
        )
    return kept
