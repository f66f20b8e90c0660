"""The `tokensieve` command line: one module per command, each with `register` (its
argument parser) and `run` (which parses nothing further and calls the one function of
the harness that does the work). `options` defines every shared option once, with its
checks, so the same option has the same name and syntax everywhere; `harness.cli`
registers the commands and dispatches.

Commands: `bench`, `diff`, `check`, `jumpforward`, `report`, `compare`, `corpora`,
`engines`, `vocab`, `findings` (recheck), `gate`.
"""
