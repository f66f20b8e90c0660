"""The benchmark: every (engine, spec, vocabulary) cell measured in a worker process, its
result typed end to end (`CellPlan` -> `harness.results.CellResult` -> `store.Cell`).

- `options`: `Options`, what decides a run's cells and how each is measured (stored with
  the run; `--resume` reuses it);
- `plan`: `CellPlan`s grouped per (engine, vocabulary), and each cell's token paths;
- `controller`: a run's cells planned, handed to executor threads, stored as they end;
- `executor`: executor threads running cell groups on worker processes (local);
- `dask_executor`: the same groups as Dask tasks (`--executor dask`);
- `service` and `measure`: the worker side (prepare the vocabulary once, then compile
  and walk each cell: compile, time to first mask, mask latency, memory);
- `progress`: the progress line.
"""
