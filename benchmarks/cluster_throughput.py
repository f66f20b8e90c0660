"""Diff throughput on a Dask cluster of 1 and of 2 workers: cells per hour, per core.

    .venv/bin/python -m benchmarks.cluster_throughput [--specs 16] [--sweeps 1]
        [--vocab llama3] [--engines outlines-core,llguidance,xgrammar,tokensdfa]

Each sweep starts a `LocalCluster` of N single-threaded worker processes for each N in
(1, 2), interleaved, and runs the same MaskBench slice through `tokensieve diff
--executor dask` into a scratch store; the best sweep per N is reported (the machine is
noisy). It is a benchmark, not a test: it prints the figures docs/results.md ("Cluster
throughput") quotes, and what the whole of MaskBench would take on M machines of
C cores at the rate measured per core. asv does not collect it (no `time_` names).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from harness.diff.run.controller import DiffOptions, DiffRun
from harness.results.provenance import machine
from harness.store import Store

MASKBENCH_SCHEMAS = 5646  # the schemas of our MaskBench corpus (`tokensieve corpora`)
ENGINES_WHOLE = 6
VOCABS_WHOLE = 2


def one_run(workers: int, options: DiffOptions) -> tuple[int, float]:
    """(cells, seconds) of one diff of `options` on a fresh cluster of `workers`."""
    from distributed import LocalCluster

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        tempfile.TemporaryDirectory() as tmp,
    ):
        with Store(Path(tmp) / "results.sqlite") as store:
            run = DiffRun(
                store,
                "throughput",
                options,
                Path(tmp) / "out",
                log=lambda _: None,
                quiet=True,
                executor="dask",
                scheduler=cluster.scheduler_address,
            )
            started = time.perf_counter()
            run.run()
            seconds = time.perf_counter() - started
            return len(store.diff_cells("throughput")), seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--specs", type=int, default=16, help="MaskBench schemas (spread) per run")
    p.add_argument("--sweeps", type=int, default=1)
    p.add_argument("--vocab", default="llama3")
    p.add_argument("--engines", default="outlines-core,llguidance,xgrammar,tokensdfa")
    p.add_argument("--machines", type=int, default=10, help="for the estimate")
    p.add_argument("--cores", type=int, default=16, help="per machine, for the estimate")
    args = p.parse_args()
    options = DiffOptions(
        vocabs=(args.vocab,),
        engines=tuple(args.engines.split(",")),
        sets=("maskbench",),
        limit_specs=args.specs,
        minimize=False,
        timeout=120.0,
    )
    best: dict[int, tuple[int, float]] = {}
    for sweep in range(args.sweeps):
        for workers in (1, 2):
            cells, seconds = one_run(workers, options)
            print(f"sweep {sweep + 1}: {workers} worker(s): {cells} cells in {seconds:.0f} s")
            if workers not in best or seconds < best[workers][1]:
                best[workers] = (cells, seconds)
    info = machine()
    print(f"\nmachine: {info.get('cpu')}, {os.cpu_count()} cores; engines {args.engines}")
    for workers, (cells, seconds) in sorted(best.items()):
        per_hour = cells / seconds * 3600
        print(
            f"{workers} worker(s): {per_hour:.0f} cells/hour, "
            f"{per_hour / workers:.0f} per core-hour"
        )
    cells, seconds = best[max(best)]
    per_core_hour = cells / seconds * 3600 / max(best)
    whole = MASKBENCH_SCHEMAS * VOCABS_WHOLE
    engine_share = ENGINES_WHOLE / len(options.engines)
    core_hours = whole / per_core_hour * engine_share
    print(
        f"whole MaskBench corpus ({MASKBENCH_SCHEMAS} schemas x {VOCABS_WHOLE} vocabularies x "
        f"{ENGINES_WHOLE} engines, scaling cell cost by engines): {core_hours:.0f} core-hours; "
        f"on {args.machines} machines of {args.cores} cores: "
        f"{core_hours / (args.machines * args.cores):.1f} hours"
    )


if __name__ == "__main__":
    main()
