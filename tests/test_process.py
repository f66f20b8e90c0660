"""The one isolation mechanism: every way a unit of work can end, as a `Worker` reports it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from harness.process import Service, Worker
from harness.results import Status

TESTS = Path(__file__).resolve().parent
SERVICE = "process_services:Toy"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    return env


@pytest.fixture
def worker() -> Worker:
    w = Worker(SERVICE, {"n": 1}, memory_limit=512 << 20, env=_env())
    started = w.start(60)
    assert started.ok and started.value["setup"] == {"n": 1}
    yield w
    w.stop()


def test_answers_and_lives_on_after_service_errors(worker: Worker) -> None:
    assert worker.ask({"op": "echo", "value": [1, "é"]}, 10).value == [1, "é"]
    failed = worker.ask({"op": "fail"}, 10)
    assert failed.status is Status.ERROR and "bad spec" in str(failed.message)
    unsupported = worker.ask({"op": "unsupported"}, 10)
    assert unsupported.status is Status.UNSUPPORTED
    assert worker.ask({"op": "oom"}, 10).status is Status.OOM
    assert worker.ask({"op": "print"}, 10).value == "still fine"
    assert worker.alive and worker.ask({"op": "echo", "value": 2}, 10).value == 2


def test_a_long_reply_streams_whole(worker: Worker) -> None:
    """A reply of tens of megabytes (a large schema's regex) arrives whole, followed by
    the next one. It used to crawl in at one pipe buffer per 50 ms poll with a quadratic
    rescan (26 s for 48 MB, quadratic past that); 96 MB now take about 2.5 s."""
    chars = 96 << 20
    reply = worker.ask({"op": "big", "chars": chars}, 30)
    assert reply.ok, reply.message
    assert reply.seconds < 30  # (the old loop read on past the timeout: 87 s)
    assert len(reply.value) == chars and set(reply.value) == {"x"}
    assert worker.ask({"op": "echo", "value": 3}, 10).value == 3


def test_timeout_kills_the_worker(worker: Worker) -> None:
    reply = worker.ask({"op": "sleep", "seconds": 30}, 0.5)
    assert reply.status is Status.TIMEOUT and not worker.alive


def test_a_dying_worker_is_a_crash(worker: Worker) -> None:
    reply = worker.ask({"op": "die"}, 10)
    assert reply.status is Status.CRASH and "exited with code 3" in str(reply.message)
    assert worker.ask({"op": "echo", "value": 1}, 10).status is Status.CRASH


def test_memory_limit_kills_the_worker(worker: Worker) -> None:
    reply = worker.ask({"op": "grow", "bytes": 1 << 30}, 60)
    assert reply.status is Status.OOM and reply.peak_rss > 512 << 20
    assert not worker.alive


def test_a_service_that_cannot_be_built() -> None:
    w = Worker(SERVICE, "refuse", env=_env())
    reply = w.start(60)
    assert reply.status is Status.UNSUPPORTED and "refused at setup" in str(reply.message)
    assert not w.alive


def test_cancel_stops_a_request_at_once(worker: Worker) -> None:
    cancel = threading.Event()
    worker.cancel = cancel
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    reply = worker.ask({"op": "sleep", "seconds": 30}, 60)
    assert reply.status is Status.ERROR and time.monotonic() - started < 5


def test_service_restarts_after_a_failure() -> None:
    service = Service(SERVICE, None, env=_env())
    try:
        first = service.ask({"op": "echo", "value": 1}, 10)
        assert service.ask({"op": "die"}, 10).status is Status.CRASH
        assert service.ask({"op": "echo", "value": 2}, 10).value == 2
        assert first.value == 1
    finally:
        service.stop()
