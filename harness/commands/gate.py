"""`tokensieve gate`: the CI regression gate on side-by-side ratios (see harness.gate)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands import options as opt
from harness.gate import DEFAULT_SPECS, DEFAULT_THRESHOLDS, gate


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "gate",
        help="fail when TokensDFA's side-by-side speed ratios cross the repo's thresholds",
        description="Measure, interleaved in one process, TokensDFA's compile time against "
        "the naive index and outlines-core, and its fill_mask against a numpy copy of one "
        "bitset; compare each ratio with benchmarks/thresholds.toml. Exit 1 naming every "
        "ratio past its threshold. Absolute times go to the result file only.",
    )
    p.add_argument("--vocab", type=opt.vocab_name, default="llama3", help="vocabulary (llama3)")
    p.add_argument(
        "--specs",
        action=opt.ListAction,
        item=opt.spec_id,
        metavar="IDS",
        help=f"spec ids, comma-separated or repeated (default {','.join(DEFAULT_SPECS)})",
    )
    p.add_argument("--thresholds", type=Path, default=DEFAULT_THRESHOLDS, help="TOML file")
    p.add_argument(
        "--rounds", type=opt.count(1), default=3, help="compiles per engine and spec (3)"
    )
    p.add_argument("--reps", type=opt.count(1), default=20, help="fills per state (20)")
    opt.add_reports_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return gate(
        args.vocab,
        opt.listed(args.specs, DEFAULT_SPECS),
        args.thresholds,
        args.rounds,
        args.reps,
        opt.reports_dir(args),
    )
