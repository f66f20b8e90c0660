"""The progress line of a run: a redrawn bar on a terminal, a line every 30 s otherwise."""

from __future__ import annotations

import os
import time
from collections import Counter
from typing import IO

from harness.figures import fmt_seconds


class Progress:
    """One redrawn line on a terminal (bar, counts, ETA); a line every 30 s otherwise."""

    def __init__(self, total: int, done: int, stream: IO[str]) -> None:
        self.total = total
        self.done_before = done
        self.done = done
        self.counts: Counter[str] = Counter()
        self.stream = stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.rate_started = self.started  # reset when measuring starts (after token paths)
        self._last = self.started
        self.running: list[str] = []

    def cell(self, status: str, instant: bool = False) -> None:
        """One more cell finished; `instant` ones (decided without a worker) do not count
        towards the rate the ETA extrapolates."""
        self.done += 1
        if instant:
            self.done_before += 1
        self.counts[status] += 1
        self.draw(force=self.done == self.total)

    def line(self) -> str:
        now = time.monotonic()
        elapsed = now - self.started
        measured = self.done - self.done_before
        remaining = self.total - self.done
        rate = (now - self.rate_started) / measured if measured else None
        eta = f"ETA {fmt_seconds(rate * remaining)}" if rate is not None else "ETA ?"
        share = self.done / self.total if self.total else 1.0
        width = 24
        bar = "#" * int(share * width) + "-" * (width - int(share * width))
        counts = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        running = ", ".join(self.running)
        return (
            f"[{bar}] {self.done}/{self.total} cells {share:4.0%} "
            f"{fmt_seconds(elapsed)} {eta}  {counts}  {running}"
        )

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if force or now - self._last >= 0.2:
                columns = max(40, os.get_terminal_size(self.stream.fileno()).columns - 1)
                self.stream.write("\r" + self.line()[:columns].ljust(columns))
                self.stream.flush()
                self._last = now
        elif force or now - self._last >= 30.0:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self._last = now

    def finish(self) -> None:
        if self.done != self.total or self.done == self.done_before:
            self.draw(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
