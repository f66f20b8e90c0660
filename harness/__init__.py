"""tokensieve: benchmarking and differential testing of constrained-decoding engines.

The map, bottom layer first. A module imports only from layers below its own, never
above (`.importlinter`, checked by `make lint`); each subpackage owns one noun and opens
with its contract.

- leaves: `errors`, `figures` (clock, percentiles, formatting), `cache` (the on-disk
  cache), `embed` (how data enters generated artifacts), `spec` (what an engine
  compiles), `project` (where the project's files are);
- `results`: what every layer above records of a unit of work: `Status`, the typed
  metrics of a bench cell, a run's provenance;
- `process`: the one isolation mechanism (a worker process per unit of work);
- `vocab`: vocabularies (token id -> bytes, special ids, EOS, real encoder);
- `language`: what a spec means: the one schema-to-regex converter, the one builder of
  the reference (the naive index), the regex-syntax scanner and tree;
- `corpora`: the specs by set, a user's own specs, MaskBench, deterministic texts and
  token paths;
- `engines`: one adapter per engine behind one interface, each owning its policies and
  repro code;
- `store`: the SQLite results store, run kinds, typed run metadata and the one run
  lifecycle (`RunSession`: lock, create or resume, sessions and how they ended);
- `cluster`: batches of cells on one vocabulary's worker, here or on Dask;
- the controllers, which run cells and store them: `bench` (plan, executors, worker
  service, measurement), `diff` (the differential test in stages: run, findings,
  shrink, walk, judge), `jumpforward` (forced-token shares);
- `report`: every page and table tokensieve writes;
- `runs`: a whole run of each kind (session + controller + report), what commands call;
- `check`: a user's specs through bench and diff, one verdict per spec, for CI;
- `gate`: the CI regression gate on side-by-side ratios;
- `commands` and `cli`: the `tokensieve` command line (argument parsing only).

The path of one bench cell: `corpora.load_set` gives a `Spec` (a schema converted once by
`language.converter`); `bench.plan` makes it a cell (engine x spec x vocabulary) in a
group per (engine, vocabulary); `bench.executor` sends it to a `process.Worker` running
`bench.service`, which compiles and walks it (`bench.measure`) and answers a
`results.CellResult`; the controller (`bench.controller`, inside `runs.bench`'s
`store.RunSession`) stores it as a row of the store's `cells` table; `report` reads the
rows back and writes `reports/RUN/index.html`.
"""

__version__ = "0.1.0"
