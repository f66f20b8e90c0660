"""tokensieve: benchmarking and differential testing of constrained-decoding engines.

The map (each subpackage owns one noun and opens with its contract):

- `vocab`: vocabularies (token id -> bytes, special ids, EOS, real encoder);
- `corpora`: the specs (regexes, JSON schemas) by set, the one schema-to-regex converter,
  the one regex-syntax scanner, deterministic texts and token paths;
- `engines`: one adapter per engine behind one interface, each owning its policies and
  repro code; the one builder of the reference (the naive index);
- `process`: the one isolation mechanism (a worker process per unit of work) and the one
  `Status` vocabulary;
- `store`: the SQLite results database and its per-run lock;
- `bench`: the benchmark (plan, executor threads, worker service, typed metrics);
- `diff`: the differential test (differ, triage, minimizer, instance checks, repros);
- `jumpforward`: forced-token shares and jump-forward simulation;
- `report`: every page and table tokensieve writes;
- `gate`: the CI regression gate on side-by-side ratios;
- `commands`: the `tokensieve` command line (argument parsing only; `cli` dispatches).
Shared leaves: `spec` (what an engine compiles), `errors`, `figures` (clock, percentiles,
formatting), `cache` (the on-disk cache), `embed` (how data enters generated artifacts).

The path of one bench cell: `corpora.load_set` gives a `Spec`; `bench.plan` makes it a
cell (engine x spec x vocabulary) in a group per (engine, vocabulary);
`bench.executor` sends it to a `process.Worker` running `bench.service`, which compiles
and walks it (`bench.measure`) and answers a `CellResult`; the controller
(`bench.controller`) stores it as a row of `store`'s `cells` table; `report` reads the
rows back and writes `reports/RUN/index.html`.
"""

__version__ = "0.1.0"
