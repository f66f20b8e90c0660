"""`tokensieve corpora`: the regex and schema sets, one spec with its token paths, and the
MaskBench download (`harness.corpora.listing` does the work)."""

from __future__ import annotations

import argparse

from harness.commands import options as opt
from harness.corpora import listing, maskbench, paths
from harness.language import converter


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "corpora",
        help="list the corpus sets; show a spec with its token paths; download MaskBench",
        description="Without an action: every set with its spec count, source, regex "
        "features, and how many schemas the converter (--converter) turns into a regex (once, "
        "then cached). With --vocab, also the token paths per set.",
    )
    parser.add_argument("--corpus-dir", help="directory holding MaskBench's *.json files")
    parser.add_argument(
        "--vocab", type=opt.vocab_name, help="also count token paths for this vocabulary"
    )
    parser.add_argument("--seed", type=int, default=0, help="path seed (default 0)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="with --vocab: walk every path through the reference naive index (slow)",
    )
    parser.add_argument("--no-convert", action="store_true", help="skip the schema-to-regex column")
    opt.add_converter(parser)
    parser.set_defaults(func=listing.list_sets)
    actions = parser.add_subparsers(dest="action")

    show = actions.add_parser("show", help="print one spec (SET/NAME) with its token paths")
    show.add_argument("spec_id", metavar="SET/NAME")
    show.add_argument(
        "--vocab",
        type=opt.vocab_name,
        default=argparse.SUPPRESS,
        help="tokenize with this vocabulary",
    )
    show.add_argument("--seed", type=int, default=argparse.SUPPRESS, help="path seed")
    show.add_argument("--n", type=opt.count(1), help="number of paths (default 8 regex, 4 schema)")
    show.add_argument("--layout", choices=paths.SCHEMA_LAYOUTS, default="compact")
    show.add_argument(
        "--check",
        action="store_true",
        default=argparse.SUPPRESS,
        help="walk each path through the reference naive index (can be slow: it is built "
        "by brute force over the whole vocabulary)",
    )
    show.add_argument("--full", action="store_true", help="print the whole pattern/schema")
    show.add_argument("--converter", choices=converter.NAMES, default=argparse.SUPPRESS)
    show.add_argument(
        "--corpus-dir", default=argparse.SUPPRESS, help="directory holding MaskBench's *.json"
    )
    show.set_defaults(func=listing.show_spec)

    download = actions.add_parser("download", help="download a public corpus (maskbench)")
    download.add_argument("what", metavar="NAME", help="maskbench")
    download.add_argument("--dest", help="target directory (default: the cache)")
    download.add_argument("--url", default=maskbench.MASKBENCH_URL, help="archive URL")
    download.set_defaults(func=listing.download)
