"""One controller per run: an exclusive `flock` on a file beside the database
(`.locks/<kind>-<run>.lock`), held for as long as the controller works on the run.

The kernel drops the lock when its holder dies, however it dies (`kill -9` included), so
a stale lock can never block a `--resume`. The holder writes its PID into the file, so a
second controller can say who has the run.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from harness.errors import BadInput, EnvironmentFailure


class RunLock:
    def __init__(self, path: Path, run: str) -> None:
        self.path = path
        self.run = run
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise BadInput naming the process that holds it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise EnvironmentFailure(
                f"cannot create the run lock {self.path}: {exc.strerror}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise BadInput(
                f"run {self.run} is being measured by process {holder or '(unknown)'}"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def held_by(self) -> int | None:
        """The PID of the live process holding the lock, or None when nobody does."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _read_pid(fd)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None
