"""What a bench run's batch cells (`harness.bench.batch`) say, read from the store: one
`BatchRow` per (engine, vocabulary, threads, batch size) with the step's p50, p99 and
max; per (engine, vocabulary, threads) the largest batch whose step p99 fits a step
budget (`served`); and the sentence that says it ("at 10 ms per step, tokensdfa serves
256 sequences, llguidance 64": `verdict`). The report's batch section and `check`'s
batch table both read them.

A batch measured only up to a size says nothing of larger ones: "serves N" is the
largest size measured within the budget, and an engine whose smallest batch is over it
serves none of the sizes measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.bench.batch import STUDY
from harness.store.rows import Cell


@dataclass(frozen=True)
class BatchRow:
    engine: str
    vocab: str
    threads: int
    size: int
    status: str
    p50_ns: float | None
    p99_ns: float | None
    max_ns: float | None
    steps: int | None
    sequence_bytes: int | None
    specs: int | None
    refused: int | None


def rows(cells: Sequence[Cell]) -> list[BatchRow]:
    """One row per batch cell, by engine, vocabulary, threads and size."""
    found = []
    for c in cells:
        if c.study != STUDY:
            continue
        m = c.metrics
        found.append(
            BatchRow(
                engine=c.engine,
                vocab=c.vocab,
                threads=m.threads or 0,
                size=m.batch_size or 0,
                status=c.status,
                p50_ns=m.step.get("p50"),
                p99_ns=m.step.get("p99"),
                max_ns=m.step.get("max"),
                steps=len(m.step_ns) or None,
                sequence_bytes=m.sequence_bytes,
                specs=m.batch_specs,
                refused=m.batch_refused,
            )
        )
    return sorted(found, key=lambda r: (r.vocab, r.engine, r.threads, r.size))


def served(found: Sequence[BatchRow], budget_ns: float) -> dict[tuple[str, str, int], int]:
    """(engine, vocabulary, threads) -> the largest batch size measured whose step p99 is
    within `budget_ns` (0 when none is)."""
    out: dict[tuple[str, str, int], int] = {}
    for r in found:
        key = (r.engine, r.vocab, r.threads)
        fits = r.status == "ok" and r.p99_ns is not None and r.p99_ns <= budget_ns
        out[key] = max(out.get(key, 0), r.size if fits else 0)
    return out


def verdict(found: Sequence[BatchRow], budget_ms: float) -> str:
    """One sentence per vocabulary: how many sequences each engine serves within the
    budget at its best thread count."""
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for (engine, vocab, threads), size in served(found, budget_ms * 1e6).items():
        if (engine, vocab) not in best or size > best[(engine, vocab)][0]:
            best[(engine, vocab)] = (size, threads)
    sentences = []
    for vocab in sorted({v for _, v in best}):
        ranked = sorted(
            ((e, s, t) for (e, v), (s, t) in best.items() if v == vocab), key=lambda x: -x[1]
        )
        said = ", ".join(
            f"{e} serves {s} sequences ({t} thread{'s' if t > 1 else ''})"
            if s
            else f"{e} none of the sizes measured"
            for e, s, t in ranked
        )
        sentences.append(f"On {vocab}, at {budget_ms:g} ms per step (p99): {said}.")
    return " ".join(sentences)
