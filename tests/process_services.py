"""Services for tests/test_process.py, built in worker processes (so importable by name:
the tests put this directory on the workers' PYTHONPATH)."""

from __future__ import annotations

import os
import time
from typing import Any

from harness.errors import SpecError, UnsupportedSpec


class Toy:
    """Answers {"op": ...}: echo, sleep, die, grow (touch memory), fail, unsupported,
    oom (raise MemoryError), big (a long answer), print (write to stdout, which must not
    break the protocol)."""

    def __init__(self, setup: Any) -> None:
        if setup == "refuse":
            raise UnsupportedSpec("toy", "setup", "refused at setup")
        self.ready = {"pid": os.getpid(), "setup": setup}

    def handle(self, request: dict[str, Any]) -> Any:
        op = request["op"]
        if op == "echo":
            return request["value"]
        if op == "sleep":
            time.sleep(request["seconds"])
            return None
        if op == "die":
            os._exit(3)
        if op == "grow":
            blob = bytearray(request["bytes"])
            for i in range(0, len(blob), 4096):
                blob[i] = 1
            time.sleep(30)
            return len(blob)
        if op == "fail":
            raise SpecError("toy", "s", "bad spec")
        if op == "unsupported":
            raise UnsupportedSpec("toy", "s", "not implemented")
        if op == "oom":
            raise MemoryError
        if op == "big":
            return "x" * request["chars"]
        if op == "print":
            print("noise on stdout", flush=True)
            return "still fine"
        raise ValueError(f"unknown op {op!r}")
