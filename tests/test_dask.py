"""Bench and diff cells on a Dask cluster: a LocalCluster of two single-threaded worker
processes started here gives the same cells, statuses and comparison counts as a local
run, and a Dask worker killed mid-run costs no cell and stores none twice."""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.bench.controller import Runner
from harness.bench.options import Options
from harness.diff.run import controller as diff_controller
from harness.diff.run.controller import DiffOptions, DiffRun
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


def diff(store: Store, run: str, engines: tuple[str, ...], out: Path, **extra: object) -> None:
    options = DiffOptions(
        vocabs=(VOCAB,),
        engines=engines,
        sets=("outlines-bench",),
        walks=2,
        cover=60,
        timeout=60.0,
        instances=0,
        samples=0,
        minimize=False,
    )
    run_ = DiffRun(
        store,
        run,
        options,
        out / run,
        log=lambda _: None,
        quiet=True,
        **extra,  # type: ignore[arg-type]
    )
    run_.run()


def diff_summary(store: Store, run: str) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Per cell: its status, the states compared per engine and the disagreements."""
    return {
        (c.spec_id, c.vocab): (
            c.status,
            c.outcome["row"].get("states"),
            c.outcome["row"].get("disagreements"),
        )
        for c in store.diff_cells(run)
    }


def test_dask_diff_gives_the_cells_of_a_local_run(cluster: object, tmp_path: Path) -> None:
    address = cluster.scheduler_address  # type: ignore[attr-defined]
    engines = ("outlines-core", "tokensdfa")
    with Store(tmp_path / "results.sqlite") as store:
        diff(store, "local", engines, tmp_path)
        diff(store, "dask", engines, tmp_path, executor="dask", scheduler=address)
        local = diff_summary(store, "local")
        assert len(local) == 9 and diff_summary(store, "dask") == local
        # outlines-core's finish-and-continue bug shows on this set: compared, not empty
        assert any(disagreements for _, _, disagreements in local.values())
        hosts = {c.outcome["row"]["host"] for c in store.diff_cells("dask")}
        assert len(hosts) == 1


def test_a_killed_dask_worker_costs_no_diff_cell(
    cluster: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = cluster.scheduler_address  # type: ignore[attr-defined]
    monkeypatch.setattr(diff_controller, "DASK_BATCH", 2)  # five tasks for nine specs
    client = distributed.Client(address)
    pids = list(client.run(os.getpid).values())
    client.close()

    def kill_one() -> None:
        time.sleep(2.0)  # a few cells in: the slow engine takes 0.3 s a compile
        os.kill(pids[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_one)
    killer.start()
    with Store(tmp_path / "results.sqlite") as store:
        started = time.monotonic()
        diff(store, "k", ("slow",), tmp_path, executor="dask", scheduler=address)
        assert time.monotonic() - started > 2.0  # the kill came while the run went on
        killer.join()
        if len(store.diff_cells("k")) < 9:  # a batch lost on every retry: --resume
            resumed = DiffRun(
                store,
                "k",
                DiffOptions(vocabs=(), engines=(), sets=()),
                tmp_path / "k",
                resume=True,
                log=lambda _: None,
                quiet=True,
            )
            resumed.run()
        keys = [(c.spec_id, c.vocab) for c in store.diff_cells("k")]
        statuses = {c.status for c in store.diff_cells("k")}
    assert len(keys) == len(set(keys)) == 9 and statuses == {"ok"}
    client = distributed.Client(address)
    assert pids[0] not in client.run(os.getpid).values()  # killed while the run went on
    client.close()
