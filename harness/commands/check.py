"""`tokensieve check SPEC_OR_PATH... --vocab NAME_OR_PATH`: the user's specs through every
engine, timed and cross-checked, with an exit code for CI (`harness.check` does the
work)."""

from __future__ import annotations

import argparse
import functools
import sys
from typing import IO

from harness.check import check, model, output, resume
from harness.check.model import EngineResult
from harness.check.run import DEFAULT_ENGINES
from harness.commands import options as opt
from harness.errors import BadInput
from harness.figures import fmt_ns
from harness.language import converter

FORMATS = ("table", "markdown", "json")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check",
        help="check your specs with your tokenizer on every engine; exit 1 on what you fail on",
        description="For each spec and engine: status, compile time, time to first mask, "
        "mask p50/p99, memory; mask disagreements with the reference (policy or bug, with "
        "a minimized repro); instance results when the spec has labelled instances; one "
        "verdict per spec naming the fastest correct engine. A spec is a corpus id "
        "(SET/NAME), a spec file or directory (also as --spec), or --regex. A check is a "
        "bench run and a diff run under one name; --resume continues an interrupted one.",
    )
    p.add_argument("specs", nargs="*", metavar="SPEC_OR_PATH")
    opt.add_specs(p)
    opt.add_vocab(p, ("llama3",))
    opt.add_engines(p, DEFAULT_ENGINES)
    opt.add_converter(p)
    p.add_argument(
        "--fail-on",
        action=opt.ListAction,
        item=outcome,
        metavar="OUTCOMES",
        help=f"outcomes that make the exit code 1 (default {','.join(model.DEFAULT_FAIL_ON)};"
        f" of {','.join(model.OUTCOMES)})",
    )
    p.add_argument("--format", choices=FORMATS, default="table", help="stdout format")
    p.add_argument(
        "--junit-xml",
        type=opt.output_file,
        metavar="FILE",
        help="also write a JUnit XML report (its directory must exist)",
    )
    opt.add_batch(p)
    opt.add_timeout(p, 60.0, "one cell")
    opt.add_memory_limit(p, "4G", "a worker")
    opt.add_executor(p)
    opt.add_run(p, prefix=None)
    opt.add_resume(p, "check run")
    opt.add_reports_dir(p)
    p.set_defaults(func=run)


def outcome(text: str) -> str:
    if text not in model.OUTCOMES:
        raise argparse.ArgumentTypeError(
            f"unknown outcome {text!r} (known: {', '.join(model.OUTCOMES)})"
        )
    return text


def run(args: argparse.Namespace) -> int:
    progress = sys.stdout if args.format == "table" else sys.stderr
    told = functools.partial(_progress, out=progress)
    if args.resume:
        _refuse_with_resume(args)
        result = resume(
            opt.reports_dir(args),
            args.run,
            on_result=told,
            executor=args.executor,
            scheduler=args.scheduler,
        )
    else:
        vocabs = opt.vocab_refs(args, ("llama3",))
        if len(vocabs) != 1:
            raise BadInput(f"--vocab: check takes one vocabulary, got {len(vocabs)}")
        result = check(
            [*args.specs, *(args.spec or ())],
            vocabs[0],
            engines_=opt.listed(args.engines, DEFAULT_ENGINES),
            regexes=args.regex or (),
            reports_dir=opt.reports_dir(args),
            run=args.run,
            timeout=args.timeout,
            memory_limit=args.memory_limit,
            on_result=told,
            executor=args.executor,
            scheduler=args.scheduler,
            converter=args.converter or converter.DEFAULT,
            batch=opt.batch_options(args),
        )
    shown = {"table": output.table, "markdown": output.markdown, "json": output.as_json}
    print(shown[args.format](result))
    fail_on = tuple(opt.listed(args.fail_on, model.DEFAULT_FAIL_ON))
    if args.junit_xml:
        output.junit(result, fail_on, args.junit_xml)
    return 1 if result.failing(fail_on) else 0


# What a resumed check takes from its stored run; given again, they are refused.
STORED = (
    "specs",
    "spec",
    "regex",
    "vocab",
    "engines",
    "converter",
    *opt.BATCH_FIELDS,
)


def _refuse_with_resume(args: argparse.Namespace) -> None:
    given = [name for name in STORED if getattr(args, name)]
    if given:
        flag = given[0] if given[0] == "specs" else "--" + given[0].replace("_", "-")
        raise BadInput(f"--resume: the check's specs and options are stored with it; drop {flag}")


def _progress(spec_id: str, r: EngineResult, *, out: IO[str]) -> None:
    print(
        f"  {spec_id} {r.engine}: {r.status}, compile {fmt_ns(r.compile_ns)}, TTFM "
        f"{fmt_ns(r.ttfm_ns)}, mask p50 {fmt_ns(r.mask_p50_ns)}",
        file=out,
        flush=True,
    )
