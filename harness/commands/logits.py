"""`tokensieve logits`: the mask on the logits. Times applying a token bitmask to a
batch of logits two ways side by side, xgrammar's `apply_token_bitmask_inplace` and the
torch fallback vLLM uses (unpack to bool, `masked_fill_`), for each vocabulary size x
batch size x dtype, and checks both against a numpy reference in every layout (padded
vocabularies, strided rows, column slices, `indices=`). `harness.logits` does the work;
this module only parses the arguments.

Prints a table (p50 and min in µs per method, the ratio xgrammar/torch) and one line per
finding, and writes `logits.csv` and `logits.json` into `--out`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import logits, vocab
from harness.commands import options as opt

MAX_BATCH = 4096


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "logits",
        help="time applying a token bitmask to logits (xgrammar's kernel beside a torch "
        "fallback), each checked against a reference",
    )
    p.add_argument(
        "--vocab-sizes",
        type=opt.counts(1, vocab.MAX_IDS),
        default=logits.DEFAULT_VOCABS,
        metavar="SIZES",
        help="tokenizer sizes (ids), comma-separated "
        f"(default {','.join(map(str, logits.DEFAULT_VOCABS))})",
    )
    p.add_argument(
        "--batch",
        type=opt.counts(1, MAX_BATCH),
        default=logits.DEFAULT_BATCHES,
        metavar="SIZES",
        help="batch sizes (rows of logits), comma-separated "
        f"(default {','.join(map(str, logits.DEFAULT_BATCHES))})",
    )
    p.add_argument(
        "--dtype",
        action=opt.ListAction,
        item=_dtype,
        metavar="DTYPES",
        help=f"logits dtypes: {', '.join(logits.DTYPES)}; comma-separated or repeated "
        "(default float32)",
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    p.add_argument("--reps", type=opt.count(1), default=20, help="timed calls per method (20)")
    p.add_argument(
        "--warmup", type=opt.count(0), default=3, help="untimed calls per method first (3)"
    )
    p.add_argument(
        "--padding",
        type=opt.count(0, vocab.MAX_IDS),
        default=logits.DEFAULT_PADDING,
        metavar="N",
        help="logit columns past the tokenizer in the padded layouts, which must come out "
        "-inf; 0 leaves those layouts out (default 64)",
    )
    p.add_argument(
        "--allowed",
        type=opt.fraction,
        default=0.5,
        metavar="FRACTION",
        help="share of the tokenizer's ids the random bitmasks allow (default 0.5)",
    )
    p.add_argument(
        "--threads",
        type=opt.count(1, 4096),
        metavar="N",
        help="torch's intra-op threads (default: torch's, one per core); xgrammar's CPU "
        "kernel uses one whatever this says",
    )
    p.add_argument("--seed", type=opt.count(0), default=0, help="logits and bitmasks (0)")
    p.add_argument(
        "--out",
        type=Path,
        default=logits.DEFAULT_OUT,
        metavar="DIR",
        help="folder of logits.csv and logits.json, made if absent (default reports/logits)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return logits.run(
        logits.LogitsOptions(
            vocabs=args.vocab_sizes,
            batches=args.batch,
            dtypes=tuple(opt.listed(args.dtype, ("float32",))),
            device=args.device,
            reps=args.reps,
            warmup=args.warmup,
            padding=args.padding,
            allowed=args.allowed,
            seed=args.seed,
            out=args.out,
            threads=args.threads,
        )
    )


def _dtype(text: str) -> str:
    if text not in logits.DTYPES:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(logits.DTYPES)}")
    return text
