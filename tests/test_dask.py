"""Bench cells on a Dask cluster: a LocalCluster of two single-threaded worker processes
started here gives the same cells and statuses as a local run, and a Dask worker killed
mid-run costs no cell and stores none twice."""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.bench.controller import Runner
from harness.bench.options import Options
from harness.store import Store

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
VOCAB = "synthetic-1000-0"


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    saved = dict(os.environ)
    os.environ["TOKENSIEVE_EXTRA_ENGINES"] = "slow=test_runner:SlowEngine"
    os.environ["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT)])
    local = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        resources={"bench": 1},
        dashboard_address=None,
        silence_logs=50,
    )
    try:
        yield local
    finally:
        local.close()
        os.environ.clear()
        os.environ.update(saved)


def bench(store: Store, run: str, engines: tuple[str, ...], **extra: object) -> None:
    options = Options(
        engines=engines, vocabs=(VOCAB,), sets=("outlines-bench",), timeout=30.0, **extra
    )  # type: ignore[arg-type]
    Runner(store, run, options, stream=io.StringIO()).run()


def summary(store: Store, run: str) -> dict[tuple[str, str], tuple[str, int | None]]:
    return {(c.engine, c.spec_id): (c.status, c.metrics.num_states) for c in store.cells(run)}


def test_dask_gives_the_cells_of_a_local_run(cluster: object, tmp_path: Path) -> None:
    address = cluster.scheduler_address  # type: ignore[attr-defined]
    with Store(tmp_path / "results.sqlite") as store:
        bench(store, "local", ("naive", "tokensdfa"))
        bench(store, "dask", ("naive", "tokensdfa"), executor="dask", scheduler=address)
        assert summary(store, "dask") == summary(store, "local")
        hosts = {c.metrics.host for c in store.cells("dask")}
        assert len(hosts) == 1 and None not in hosts
        calibration = store.cells("dask")[0].metrics.calibration
        assert calibration["bitset_copy_ns"] > 0 and calibration["trie_walk_ns"] > 0


def test_a_killed_dask_worker_costs_no_cell(cluster: object, tmp_path: Path) -> None:
    address = cluster.scheduler_address  # type: ignore[attr-defined]
    client = distributed.Client(address)
    pids = list(client.run(os.getpid).values())
    client.close()

    def kill_one() -> None:
        time.sleep(1.5)  # a few cells in: the slow engine takes 0.3 s a compile
        os.kill(pids[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_one)
    killer.start()
    with Store(tmp_path / "results.sqlite") as store:
        bench(store, "k", ("slow", "naive"), executor="dask", scheduler=address)
        killer.join()
        stored = len(store.cells("k"))
        if stored < 18:  # a batch lost on every retry: --resume measures what is missing
            Runner(
                store, "k", Options(engines=(), vocabs=()), resume=True, stream=io.StringIO()
            ).run()
        keys = [c.key for c in store.cells("k")]
    assert len(keys) == len(set(keys)) == 18
    client = distributed.Client(address)
    assert pids[0] not in client.run(os.getpid).values()  # the nanny started a new one
    client.close()
