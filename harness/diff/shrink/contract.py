"""The one contract every shrinker follows: `shrink(start, keeps, deadline) -> smaller`.

- `start`: a value on which the failure shows (the caller has checked `keeps(start)`);
- `keeps`: the predicate that must keep holding, asked of candidates (it compiles and
  walks engines, so each call is costly; callers cache where it pays);
- `deadline`: a `time.monotonic()` value; past it the shrinker asks `keeps` nothing
  more and returns what it holds (`start`, when it is past on entry).

It returns the smallest value it found on which `keeps` held, or `start` itself when
none did. Each shrinker says what "smaller" means for its values (fewer items, a lighter
regex, a shorter text). One that needs context besides (an engine, a vocabulary, the
schema an engine compiles) has it bound into `keeps`, or into the shrinker with
`functools.partial`, by its caller beforehand: the adapters `minimize.minimize`,
`stale.minimize_stale` and `harness.diff.findings.instance_repro.minimize_failure`
turn a finding into a start and a `keeps`, and a shrunk value back into a finding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")

# What must keep holding of every value a shrinker keeps.
Keeps = Callable[[T], bool]


class Shrinker(Protocol[T]):
    """`shrink(start, keeps, deadline)`: see the module."""

    def __call__(self, start: T, keeps: Callable[[T], bool], deadline: float, /) -> T: ...
