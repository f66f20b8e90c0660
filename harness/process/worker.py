"""The parent side of the one isolation mechanism: a `Worker` is a child process serving
one service (`harness.process.serve`), asked one request at a time under a time and a
memory limit, so whatever an engine does costs at most the request in flight:

- a request running past its timeout: the child's process group is killed, `timeout`;
- the child and its descendants growing past `memory_limit` resident bytes (polled every
  50 ms from here, not capped with RLIMIT_AS, which breaks engines that reserve large
  virtual ranges): killed, `oom`;
- the child dying on its own: `crash`, with the signal or exit code and the tail of its
  stderr (an allocation-failure message there makes it `oom`);
- the service raising: `unsupported`, `error` or `oom`, as `serve` classifies it; the
  child lives on.

After a timeout, oom or crash the worker is dead (`alive` is False); the caller starts a
new one if it has more to do. The child is a fresh interpreter (not a fork), so a service
rebuilds what it needs from its JSON `setup`: that is what lets bench, diff and
jump-forward all share it, and what will let a cell run on another machine.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import IO, Any

from harness.figures import fmt_bytes
from harness.process.memory import tree_rss
from harness.results.status import Status

POLL_S = 0.05
STDERR_TAIL = 1500
# Words in a dying child's stderr that mean it ran out of memory, not that it crashed.
OOM_WORDS = ("memory allocation of", "std::bad_alloc", "MemoryError", "Cannot allocate memory")


@dataclass(frozen=True)
class Reply:
    """How one request ended: the service's answer (`value`) when `status` is OK, else a
    one-line `message`. `peak_rss` is the child tree's largest resident size seen while
    the request ran; `seconds` its wall time."""

    status: Status
    value: Any = None
    message: str | None = None
    peak_rss: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


class Worker:
    """One child process serving `service` ("module:factory") built from `setup`."""

    def __init__(
        self,
        service: str,
        setup: Any = None,
        *,
        memory_limit: int | None = None,
        address_space: int | None = None,
        cancel: threading.Event | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.service = service
        self.setup = setup
        self.memory_limit = memory_limit
        self.address_space = address_space
        self.cancel = cancel
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready: Any = None  # the service's answer to being built
        self._stderr: IO[bytes] | None = None
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer known to hold no newline
        self._eof = False  # the child closed its stdout

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def start(self, timeout: float) -> Reply:
        """Start the child and build the service; OK with the service's `ready` value."""
        self.stop()
        self._stderr = tempfile.TemporaryFile()
        self._buffer = bytearray()
        self._scanned = 0
        self._eof = False
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.process.serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=self.env,
            start_new_session=True,  # Ctrl-C in the terminal reaches the parent only
        )
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        header = {
            "service": self.service,
            "setup": self.setup,
            "parent": os.getpid(),
            "address_space": self.address_space,
        }
        reply = self._exchange(header, timeout)
        if reply.ok:
            self.ready = reply.value
        elif self.alive:  # the service could not be built: the child exits by itself
            self.stop()
        return reply

    def ask(self, request: Any, timeout: float) -> Reply:
        """Send one request and wait for its answer under `timeout` and the memory limit."""
        if not self.alive:
            return Reply(Status.CRASH, message="the worker is not running")
        return self._exchange(request, timeout)

    def stop(self) -> None:
        """End the child (politely: close its input; then kill) and free its files."""
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # --- one exchange ----------------------------------------------------------------

    def _exchange(self, message: Any, timeout: float) -> Reply:
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        started = time.monotonic()
        try:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
        except OSError:
            pass  # the child is gone; waiting below reports how it ended
        return self._wait(started, timeout)

    def _wait(self, started: float, timeout: float) -> Reply:
        """Read the reply as it streams (a reply can be a regex of many megabytes: each
        wake-up drains the pipe, and waits only while it is empty); the memory, the time
        and the cancel flag are checked every POLL_S."""
        assert self.proc is not None and self.proc.stdout is not None
        peak = 0
        checked = 0.0
        while True:
            line = self._line()
            elapsed = time.monotonic() - started
            if line is not None:
                return _reply(line, peak, elapsed)
            if self.proc.poll() is not None:
                line = self._line()  # written just before exiting
                if line is not None:
                    return _reply(line, peak, elapsed)
                return self._died(peak, elapsed)
            if elapsed - checked >= POLL_S or checked == 0.0:
                checked = elapsed
                used = tree_rss(self.proc.pid) or 0
                peak = max(peak, used)
                if self.memory_limit is not None and used > self.memory_limit:
                    limit = fmt_bytes(self.memory_limit)
                    return self._killed(
                        Status.OOM,
                        f"resident memory {fmt_bytes(used)} passed the limit of {limit}",
                        peak,
                        elapsed,
                    )
                if elapsed > timeout:
                    return self._killed(Status.TIMEOUT, f"ran over {timeout:g} s", peak, elapsed)
                if self.cancel is not None and self.cancel.is_set():
                    return self._killed(Status.ERROR, "cancelled", peak, elapsed)
            if self._eof:  # a closed pipe is always readable: wait for the exit
                time.sleep(POLL_S)
            else:
                select.select([self.proc.stdout], [], [], POLL_S)

    def _line(self) -> bytes | None:
        """The next complete line the child wrote, if any (never blocks). Each byte is
        scanned for the newline once, however many reads a long line takes."""
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            cut = self._buffer.find(b"\n", self._scanned)
            if cut >= 0:
                line = bytes(self._buffer[:cut])
                del self._buffer[: cut + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            try:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            except (BlockingIOError, OSError):
                return None
            if not chunk:
                self._eof = True
                return None
            self._buffer += chunk

    def _killed(self, status: Status, message: str, peak: int, elapsed: float) -> Reply:
        assert self.proc is not None
        _kill_group(self.proc)
        self.stop()
        return Reply(status, message=message, peak_rss=peak, seconds=elapsed)

    def _died(self, peak: int, elapsed: float) -> Reply:
        """The status of a child that exited on its own, without answering."""
        assert self.proc is not None
        code = self.proc.wait()
        if code < 0:
            try:
                how = f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        tail = self.stderr_tail()
        status = Status.OOM if any(w in tail for w in OOM_WORDS) else Status.CRASH
        self.stop()
        message = f"{how}; stderr: {tail}" if tail else how
        return Reply(status, message=message, peak_rss=peak, seconds=elapsed)

    def stderr_tail(self) -> str:
        """The last lines the child wrote to stderr, on one line."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - STDERR_TAIL))
        text = self._stderr.read().decode("utf-8", "replace")
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-12:])


def _reply(line: bytes, peak: int, elapsed: float) -> Reply:
    try:
        data = json.loads(line)
    except ValueError:
        return Reply(Status.CRASH, message=f"unreadable reply: {line[:200]!r}", peak_rss=peak)
    if "ok" in data:
        return Reply(Status.OK, value=data["ok"], peak_rss=peak, seconds=elapsed)
    error = data["error"]
    return Reply(Status(error["status"]), message=error["message"], peak_rss=peak, seconds=elapsed)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


class Service:
    """A worker that starts on first use and again after each failure: for long-lived
    helpers asked from the main thread (the schema converter, hypothesis draws).
    Requests are serialized with a lock (replies carry no id)."""

    def __init__(
        self, service: str, setup: Any = None, *, start_timeout: float = 120.0, **worker: Any
    ) -> None:
        self._worker = Worker(service, setup, **worker)
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        atexit.register(self.stop)

    @property
    def running(self) -> bool:
        return self._worker.alive

    def ask(self, request: Any, timeout: float) -> Reply:
        with self._lock:
            if not self._worker.alive:
                started = self._worker.start(self._start_timeout)
                if not started.ok:
                    return started
            return self._worker.ask(request, timeout)

    def stop(self) -> None:
        with self._lock:
            self._worker.stop()
