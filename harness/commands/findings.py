"""`tokensieve findings recheck RUN [--engines NAME@V1,NAME@V2]`: a diff run's repro scripts
against other releases of their engines (`harness.report.recheck_page` does the work)."""

from __future__ import annotations

import argparse

from harness.commands import options as opt
from harness.report import recheck_page


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "findings",
        help="re-run a diff run's repro scripts against other engine releases",
        description="recheck: run every repro script of REPORTS_DIR/RUN/findings against "
        "the pinned release of its engine and each --engines NAME@VERSION of the same "
        "engine (installed once into the cache): REPRODUCED, FIXED or cannot run, as a "
        "table, findings/recheck.json and findings/recheck.html.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    p = actions.add_parser("recheck", help="finding x release -> REPRODUCED / FIXED")
    p.add_argument("run", metavar="RUN", type=opt.run_name)
    p.add_argument(
        "--engines",
        action=opt.ListAction,
        item=opt.engine_name,
        metavar="RELEASES",
        help="releases to try, e.g. xgrammar@0.1.33,outlines-core@0.1.26",
    )
    opt.add_reports_dir(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(recheck_page.run(opt.reports_dir(args) / args.run, args.engines or []))
    return 0
