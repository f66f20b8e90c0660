"""Timing the methods side by side: interleaved, so a change in the machine's load (the
other jobs of a shared machine, a GPU's clock) falls on both alike.

Each method works on its own copy of the logits, applied again and again in place:
applying a mask twice leaves what applying it once left, and the work of a call does
not depend on the values it finds (the refused logits are written whatever they hold),
so every timed call does the work of the first. After `warmup` untimed calls each
(xgrammar's Triton kernel compiles on its first CUDA call), each of `reps` rounds times
one call of every method, in an order that alternates round by round. On CUDA the
device is synchronized before and after each timed call, so a time is the kernel's
work and launch, not a queued launch alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from harness.figures import clock
from harness.logits.methods import Apply, Call


@dataclass
class Timings:
    """Per method, the nanoseconds of each timed call (`samples`), or why it stopped
    (`errors`: a method that raised is timed no further)."""

    samples: dict[str, list[int]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def time_methods(
    methods: dict[str, Apply],
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    call: Call,
    rounds: tuple[int, int],
    sync: Callable[[], None],
) -> tuple[Timings, dict[str, torch.Tensor]]:
    """Time every method on its own copy of `logits` (`rounds`: warm-up calls, timed
    calls); returns the timings and each method's copy after its last call (the caller
    holds it to the checked result)."""
    warmup, reps = rounds
    work = {name: logits.clone() for name in methods}
    out = Timings(samples={name: [] for name in methods})
    for round_ in range(warmup + reps):
        order = list(methods) if round_ % 2 == 0 else list(reversed(methods))
        for name in order:
            if name in out.errors:
                continue
            try:
                took = _timed(methods[name], work[name], bitmask, call, sync)
            except Exception as exc:  # reported beside the others' timings
                out.errors[name] = f"raised {type(exc).__name__}: {' '.join(str(exc).split())}"
                continue
            if round_ >= warmup:
                out.samples[name].append(took)
    return out, work


def _timed(
    apply: Apply,
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    call: Call,
    sync: Callable[[], None],
) -> int:
    """Nanoseconds of one call, the device idle before and after."""
    sync()
    start = clock()
    apply(logits, bitmask, call)
    sync()
    return clock() - start
