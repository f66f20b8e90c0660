"""The kinds of run the store keeps, as one enum: the only way a caller says which runs it
means. Each kind has its own tables (`harness.store.sqlite.TABLES`), its own run names
(a bench run and a diff run may share one, as `check` does) and its own lock and
sessions; a table name never passes through the store's API, so no caller can steer
its SQL."""

from __future__ import annotations

from enum import StrEnum


class RunKind(StrEnum):
    """A kind of run, named as the command that makes it (`tokensieve bench`, `diff`,
    `jumpforward`); the value is also the `kind` of its sessions and the prefix of its
    lock file, as stored since sessions had their table."""

    BENCH = "bench"
    DIFF = "diff"
    JUMPFORWARD = "jumpforward"

    @property
    def label(self) -> str:
        """How messages name a run of this kind ("run 'r' already exists ...")."""
        return "run" if self is RunKind.BENCH else f"{self.value} run"

    @property
    def prefix(self) -> str:
        """The start of a new run's default name, before the local time."""
        return "" if self is RunKind.BENCH else f"{self.value}-"
