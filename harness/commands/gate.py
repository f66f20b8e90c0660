"""`tokensieve gate`: the CI regression gate on side-by-side ratios (see harness.gate)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness import vocab as vocabularies
from harness.commands import options as opt
from harness.gate import DEFAULT_SPECS, DEFAULT_THRESHOLDS, load_thresholds, run_gate


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
    thresholds = load_thresholds(args.thresholds)
    vocab = vocabularies.load(args.vocab)
    started = time.perf_counter()
    checks, measured = run_gate(
        vocab,
        opt.listed(args.specs, DEFAULT_SPECS),
        thresholds,
        rounds=args.rounds,
        reps=args.reps,
        log=lambda line: print(f"  {line}", flush=True),
    )
    out = opt.reports_dir(args) / "gate"
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "vocab": args.vocab,
        "specs": ",".join(opt.listed(args.specs, DEFAULT_SPECS)),
        "seconds": round(time.perf_counter() - started, 1),
        "checks": [
            {
                "name": c.name,
                "ratio": c.ratio,
                "kind": c.threshold.kind,
                "limit": c.threshold.limit,
                "ok": c.ok,
            }
            for c in checks
        ],
        **measured.record(),
    }
    path = out / time.strftime("gate-%Y%m%d-%H%M%S.json")
    path.write_text(json.dumps(record, indent=1))
    for c in checks:
        print(c.line())
    failed = [c for c in checks if not c.ok]
    if failed:
        print(
            f"gate: {len(failed)} of {len(checks)} ratios past their thresholds "
            f"({args.thresholds}); record: {path}",
            file=sys.stderr,
        )
        return 1
    print(f"gate: all {len(checks)} ratios within thresholds; record: {path}")
    return 0
