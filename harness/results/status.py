"""How one unit of isolated work ended: the one status vocabulary of bench cells, diff
cells, jump-forward cells, schema conversions and hypothesis draws alike."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    OK = "ok"
    UNSUPPORTED = "unsupported"  # a valid spec the engine does not implement
    ERROR = "error"  # the engine (or the spec) failed with a message
    TIMEOUT = "timeout"  # killed at its time limit
    OOM = "oom"  # killed at its memory limit, or it reported running out
    CRASH = "crash"  # the process died on its own (signal, abort, exit)

    @property
    def failed(self) -> bool:
        return self in FAILED


FAILED = frozenset({Status.ERROR, Status.TIMEOUT, Status.OOM, Status.CRASH})
STATUSES: tuple[str, ...] = tuple(s.value for s in Status)
