"""The life of one run, the same for every kind (bench, diff, jump-forward, and check,
which is a bench run and a diff run): `RunSession`.

A controller claims its run before it does anything else: the run's lock first (one
controller per run; a second is refused with the holder's PID, and the kernel drops the
lock when its holder dies, so a stale lock never blocks `--resume`), then the run itself,
resumed with its stored metadata (it must exist) or new (its name must be free; the
controller creates it with its `RunMeta` while still holding the lock). Work happens in
sessions: each is recorded as it starts and as it ends, `complete`, `interrupted`
(Ctrl-C, or SIGTERM, which raises KeyboardInterrupt while a session runs) with the way
to continue printed, or `failed` with the reason; never `complete` when it was not.
Whatever a session stored before it ended stays stored: cells are committed one by one.

Messages name the run by its kind (`RunKind.label`: "run 'r' already exists ...",
"diff run 'r' ..."), the same for every command.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType

from harness import vocab
from harness.errors import BadInput
from harness.store.db import Store, check_run_name
from harness.store.kinds import RunKind
from harness.store.meta import RunMeta

# The least time between two heartbeats of a session (`RunSession.touch`).
TOUCH_S = 10.0


def pick_name(store: Store, kind: RunKind, given: str | None, *, resume: bool) -> str:
    """The run a command works on: the name given; on `--resume` without one, the latest
    run of `kind` (BadInput when there is none); else a new name, the kind's prefix and
    the local time."""
    if given is not None:
        return check_run_name(given)
    if resume:
        runs = store.runs(kind)
        if not runs:
            raise BadInput(f"--resume: no {kind.label} recorded in {store.path}")
        return runs[-1].name
    return time.strftime(f"{kind.prefix}%Y%m%d-%H%M%S")


class RunSession:
    """One controller's hold on run `name` of `kind`, from `claim` to `release` (also a
    context manager that releases). `log` takes the lines it prints (the way to continue
    an interrupted run); `command`, the command that continues it (default the kind's
    own: `check` continues its bench and diff runs)."""

    def __init__(
        self,
        store: Store,
        kind: RunKind,
        name: str,
        log: Callable[[str], None],
        command: str | None = None,
    ) -> None:
        self.store = store
        self.kind = RunKind(kind)
        self.command = command or self.kind.value
        self.name = check_run_name(name)
        self.log = log
        self.number: int | None = None  # the session at work, while one is
        self._lock = store.lock(name, self.kind)
        self._meta: RunMeta | None = None
        self._touched = 0.0

    def claim(self, resume: bool) -> RunMeta | None:
        """Take the run's lock, then find the run: resumed, its stored metadata (BadInput
        when there is no such run); new, None (BadInput when the name is taken), and the
        caller then `create`s it. The lock is released again if this fails."""
        self._lock.acquire()
        try:
            found = self.store.find_run(self.name, self.kind)
            if resume:
                if found is None:
                    known = [r.name for r in self.store.runs(self.kind)]
                    raise BadInput(
                        f"no {self.kind.label} {self.name!r} to resume in {self.store.path}"
                        + (f"; recorded runs: {', '.join(known)}" if known else "")
                    )
                self._meta = RunMeta.from_json(found.meta)
                changed = vocab.changed_files(self._meta.vocab_files)
                if changed:
                    raise BadInput(
                        f"--resume: {changed[0]} changed since {self.kind.label} {self.name!r} "
                        "began (its content differs); resuming would mix cells of two "
                        "vocabularies: start a new run"
                    )
                return self._meta
            if found is not None:
                raise BadInput(
                    f"{self.kind.label} {self.name!r} already exists in {self.store.path}; "
                    "pass --resume to continue it or choose another --run name"
                )
            return None
        except BaseException:
            self._lock.release()
            raise

    def create(self, meta: RunMeta) -> None:
        """Store the new run with `meta` (after a `claim` that found none), with the
        fingerprints of its tokenizer files."""
        meta.vocab_files = vocab.fingerprints(meta.options.get("vocabs") or ())
        self.store.create_run(self.name, meta, self.kind)
        self._meta = meta

    @property
    def meta(self) -> RunMeta:
        """The run's metadata, as stored (after `claim` resumed it or `create` made it)."""
        if self._meta is None:
            raise RuntimeError(f"{self.kind.label} {self.name}: claimed but not created")
        return self._meta

    def record_versions(self, versions: Mapping[str, str]) -> None:
        """Engine releases the run's workers imported, into the stored metadata (written
        only when one is new or changed)."""
        changed = {k: v for k, v in versions.items() if v and self.meta.versions.get(k) != v}
        if changed:
            self.meta.versions.update(changed)
            self.store.update_meta(self.name, self.meta, self.kind)

    @contextmanager
    def session(self, jobs: int = 1) -> Iterator[int]:
        """One session of work on the claimed run; yields its number, which every cell it
        stores carries. How it ended is recorded whatever happens: `complete`;
        `interrupted` on KeyboardInterrupt (SIGTERM raises one meanwhile), with the way to
        continue logged; `failed` with the exception's text. The exception goes on."""
        number = self.store.start_session(self.name, self.kind, jobs, os.getpid())
        self.number, self._touched = number, time.monotonic()
        status, reason = "complete", None
        try:
            with _sigterm_interrupts():
                yield number
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        except BaseException as exc:
            status, reason = "failed", " ".join(str(exc).split()) or type(exc).__name__
            raise
        finally:
            self.number = None
            self._finish(number, status, reason)
            if status == "interrupted":
                self._continue_with(number)

    def touch(self) -> None:
        """The session's heartbeat, written at most every TOUCH_S seconds."""
        if self.number is not None and time.monotonic() - self._touched > TOUCH_S:
            self.store.touch_session(self.name, self.kind, self.number)
            self._touched = time.monotonic()

    def release(self) -> None:
        """Drop the run's lock (safe to call twice)."""
        self._lock.release()

    def __enter__(self) -> RunSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _finish(self, number: int, status: str, reason: str | None) -> None:
        """Record how the session ended; on a full disk that may fail too, and the reason
        is then only on the terminal."""
        try:
            self.store.finish_session(self.name, self.kind, number, status, reason)
        except Exception as exc:
            self.log(f"tokensieve: could not record the session's end: {exc}")

    def _continue_with(self, number: int) -> None:
        try:
            stored = self.store.stored_in_session(self.name, self.kind, number)
        except Exception:  # the store itself is what failed: say what matters anyway
            stored = 0
        self.log(
            f"\ninterrupted: {stored} cells recorded this session; continue with: "
            f"tokensieve {self.command} --resume --run {self.name}"
        )


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so a terminated session ends
    `interrupted` and its workers are stopped. Only the main thread can set a handler;
    elsewhere SIGTERM keeps its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
