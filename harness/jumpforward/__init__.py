"""Jump-forward: how much of each output the grammar forces, per engine and vocabulary,
with forced texts compared across engines state by state.

- `analysis`: forced tokens and forced texts along one token path (`analyze_path`);
- `service`: the worker side (every engine prepared once per vocabulary);
- `cell`: one spec's unit asked of a worker, here or on a Dask worker;
- `controller`: a run's units, their rows and the cross-checks;
- `tables`: the tables a run reports (shares per set, engine, vocabulary; MaskBench).
"""
