"""tokensieve: benchmarking and differential testing of constrained-decoding engines.

The package is organised by noun: `vocab` (canonical vocabularies), `spec` (what an engine
compiles), `engines` (one adapter per engine behind `engines.base.Engine`), `errors`, and
`cli` (the `tokensieve` command).
"""

__version__ = "0.1.0"
