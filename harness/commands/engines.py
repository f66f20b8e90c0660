"""`tokensieve engines`: every registered engine, its version, and whether it can run."""

from __future__ import annotations

import argparse

from harness import engines
from harness.engines.base import Engine


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "engines",
        help="list engines, versions and availability",
        description="List every engine adapter (with any $TOKENSIEVE_EXTRA_ENGINES): "
        "version, availability (or why not: an engine whose package is not installed "
        "names the command that installs it), capabilities and declared policies. "
        "Imports each engine's package (xgrammar imports torch, which takes seconds).",
    )
    parser.set_defaults(func=run)


def describe(engine: Engine) -> list[str]:
    ok, why = engine.available()
    caps = engine.capabilities
    pol = engine.policies
    return [
        engine.name,
        engine.version() if ok else "-",
        caps.json_schema,
        ",".join(caps.grammars) or "-",
        "unicode" if pol.unicode_classes else "ascii",
        pol.json_whitespace,
        "canonical" if pol.canonical_forced else "any",
        "available" if ok else f"unavailable: {why}",
    ]


def run(args: argparse.Namespace) -> int:
    head = ["engine", "version", "json schema", "grammars", "\\d\\w\\s", "json ws", "forced text"]
    rows = [[*head, "status"]]
    rows += [describe(engines.get(name)) for name in engines.names()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return 0
