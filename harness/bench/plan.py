"""The plan of a bench run: which (engine, spec, vocabulary) cells it measures, grouped
per (engine, vocabulary) so a worker prepares each vocabulary once, and the token paths
each cell walks."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness import corpora
from harness.bench.batch import STUDY as BATCH_STUDY
from harness.bench.batch import batch_id
from harness.bench.options import Options
from harness.corpora import paths
from harness.errors import TokensieveError
from harness.spec import Spec

# Scaling cells only need compile time and time to first mask.
SCALING_PATHS = 1
SCALING_STEPS = 32


@dataclass(frozen=True)
class CellPlan:
    engine: str
    spec_id: str
    vocab: str
    study: str  # "main", "scaling" or "batch"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.engine, self.spec_id, self.vocab)


@dataclass
class Group:
    """Cells one worker measures after preparing `vocab` for `engine` once."""

    engine: str
    vocab: str
    study: str
    pending: deque[str] = field(default_factory=deque)  # spec ids

    @property
    def label(self) -> str:
        return f"{self.engine}/{self.vocab}"


def select_specs(options: Options) -> list[Spec]:
    out: list[Spec] = []
    for name in options.sets:
        found = corpora.load_set(name, options.corpus_dir, strict=options.strict_corpus)
        out += corpora.spread(found, options.limit_specs)
    return out


def scaling_selection(specs: Sequence[Spec], n: int) -> list[Spec]:
    """The first spec of each set, alternating kinds (regex, schema, regex, ...) so both
    are represented, at most `n` of them."""
    firsts: dict[str, Spec] = {}
    for spec in specs:
        firsts.setdefault(spec.id.split("/", 1)[0], spec)
    by_kind: dict[str, list[Spec]] = {}
    for spec in firsts.values():
        by_kind.setdefault(spec.kind, []).append(spec)
    ordered: list[Spec] = []
    queues = [deque(v) for v in by_kind.values()]
    while any(queues):
        for q in queues:
            if q:
                ordered.append(q.popleft())
    return ordered[:n]


def scaling_vocabs(base: str, sizes: Iterable[int], full_size: int) -> list[str]:
    return [f"{base}[:{n}]" for n in sizes if n < full_size]


def batch_mix(specs: Sequence[Spec], n: int) -> list[Spec]:
    """The specs a batch cell mixes: at most `n`, evenly spread over the run's."""
    return corpora.spread(list(specs), n)


def plan_cells(
    options: Options, specs: Sequence[Spec], scaling_specs: Sequence[Spec], full_size: int
) -> list[CellPlan]:
    cells = [
        CellPlan(engine, spec.id, vocab, "main")
        for vocab in options.vocabs
        for engine in options.engines
        for spec in specs
    ]
    cells += [
        CellPlan(engine, batch_id(size, threads), vocab, BATCH_STUDY)
        for vocab in options.vocabs
        for engine in options.engines
        for size in options.batch
        for threads in options.threads
    ]
    if options.scaling and scaling_specs:
        for vocab in scaling_vocabs(options.vocabs[0], options.scaling_sizes, full_size):
            cells += [
                CellPlan(engine, spec.id, vocab, "scaling")
                for engine in options.engines
                for spec in scaling_specs
            ]
    return cells


def group_cells(cells: Iterable[CellPlan]) -> list[Group]:
    """Cells by (engine, vocabulary); batch cells in groups of their own, which the
    controller runs alone after every other group."""
    groups: dict[tuple[str, str, bool], Group] = {}
    for cell in cells:
        key = (cell.engine, cell.vocab, cell.study == BATCH_STUDY)
        group = groups.setdefault(key, Group(cell.engine, cell.vocab, cell.study))
        group.pending.append(cell.spec_id)
    return list(groups.values())


def token_paths(spec: Spec, vocab: Any, n: int) -> tuple[list[list[int]], str | None]:
    """The first `n` token paths of `spec` (shared with the differ's cache), or none and
    why not."""
    if n == 0:
        return [], None
    try:
        found = paths.paths_for(spec, vocab)
    except (TokensieveError, ValueError) as exc:
        return [], f"no token paths: {exc}"
    return [list(p.ids) for p in found[:n]], None
