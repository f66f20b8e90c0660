"""The figures the report derives across cells: the states axis shared by every engine,
the vocabulary-scaling points, TokensDFA's speedups over its baselines, and the MaskBench
comparison.

Engines are looked up by name in two places only: the speedup (`SPEEDUP_ENGINE` against
`SPEEDUP_BASELINES`) and the MaskBench comparison, whose published figures are per engine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.figures import geometric_mean, summarize
from harness.report.data import RunData, fills, known, load, ok, p
from harness.store import Store

# MaskBench's published figures (README of ../shared/corpora: Llama-3.1 tokenizer, single
# thread, 2025-03-27 run), in microseconds.
MASKBENCH_PUBLISHED: dict[str, dict[str, float]] = {
    "llguidance": {"mask_mean": 64, "mask_p50": 46, "mask_p99": 533, "ttfm_p50": 1_037},
    "xgrammar": {"mask_mean": 728, "mask_p50": 9, "mask_p99": 5_687, "ttfm_p50": 919_459},
    "outlines-core": {
        "mask_mean": 1_858,
        "mask_p50": 34,
        "mask_p99": 7_184,
        "ttfm_p50": 587_900,
    },
}
MASKBENCH_FIGURES = ("mask_mean", "mask_p50", "mask_p99", "ttfm_p50")
MASKBENCH_VOCAB = "llama3"
MASKBENCH_PREFIX = "maskbench/"
SPEEDUP_ENGINE = "tokensdfa"
SPEEDUP_BASELINES = ("naive", "outlines-core")


# --- states ------------------------------------------------------------------------------


def reference_states(data: RunData) -> dict[tuple[str, str], float]:
    """(spec, vocab) -> states, from the first engine (run order) that reports them."""
    out: dict[tuple[str, str], float] = {}
    rank = {e: i for i, e in enumerate(data.engines)}
    best: dict[tuple[str, str], int] = {}
    for c in data.cells:
        states = c.metrics.num_states
        if c.status != "ok" or states is None:
            continue
        key = (c.spec_id, c.vocab)
        if key not in best or rank[c.engine] < best[key]:
            best[key] = rank[c.engine]
            out[key] = float(states)
    return out


def state_source(data: RunData) -> str | None:
    """The first engine (run order) that counted states for some cell."""
    for engine in data.engines:
        if any(c.engine == engine and c.metrics.num_states for c in data.cells):
            return engine
    return None


# --- vocabulary scaling ------------------------------------------------------------------


def scaling_base(data: RunData) -> str | None:
    """The vocabulary the scaling study cut subsets of (`gpt2` of `gpt2[:8192]`)."""
    return data.scaling[0].vocab.split("[:", 1)[0] if data.scaling else None


def scaling_points(data: RunData) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(engine, spec) -> [(vocabulary size, compile ns)], sorted, the full vocabulary's
    point taken from the main cells of the base vocabulary."""
    base = scaling_base(data)
    if base is None:
        return {}
    specs = {c.spec_id for c in data.scaling}
    full = [c for c in ok(data.main) if c.vocab == base and c.spec_id in specs]
    out: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for c in ok(data.scaling) + full:
        size, compile_ns = c.metrics.vocab_size, c.metrics.compile_ns
        if size is not None and compile_ns is not None:
            out[(c.engine, c.spec_id)].append((size, compile_ns))
    return {k: sorted(v) for k, v in out.items()}


# --- speedup -----------------------------------------------------------------------------


@dataclass
class Speedup:
    """SPEEDUP_ENGINE against one baseline on one (spec, vocabulary) it compiled."""

    spec_id: str
    vocab: str
    ours_ns: float
    baseline: str
    theirs_ns: float | None  # None: the baseline did not finish
    theirs_status: str
    mask_ratio: float | None  # baseline mask p50 / ours

    @property
    def ratio(self) -> float | None:
        return None if self.theirs_ns is None else self.theirs_ns / self.ours_ns


def speedups(data: RunData) -> list[Speedup]:
    """Per (spec, vocabulary) SPEEDUP_ENGINE compiled, one per baseline that took the
    spec (was not `unsupported`), by spec and vocabulary."""
    by_key = {(c.engine, c.spec_id, c.vocab): c for c in data.main}
    out = []
    for (engine, spec, vocab), ours in sorted(by_key.items(), key=lambda kv: kv[0][1:]):
        if engine != SPEEDUP_ENGINE or ours.status != "ok" or ours.metrics.compile_ns is None:
            continue
        for baseline in SPEEDUP_BASELINES:
            theirs = by_key.get((baseline, spec, vocab))
            if theirs is None or theirs.status == "unsupported":
                continue
            finished = theirs.status == "ok"
            ours_p50, theirs_p50 = ours.metrics.fill.get("p50"), theirs.metrics.fill.get("p50")
            mask_ratio = theirs_p50 / ours_p50 if finished and ours_p50 and theirs_p50 else None
            theirs_ns = theirs.metrics.compile_ns if finished else None
            out.append(
                Speedup(
                    spec,
                    vocab,
                    ours.metrics.compile_ns,
                    baseline,
                    theirs_ns,
                    theirs.status,
                    mask_ratio,
                )
            )
    return out


@dataclass
class SpeedupMean:
    """The speedups of one vocabulary and baseline, by geometric mean."""

    vocab: str
    baseline: str
    specs: int  # where both finished
    compile_gm: float | None
    mask_gm: float | None
    unfinished: list[Speedup]  # SPEEDUP_ENGINE ok, the baseline failed


def speedup_means(data: RunData, items: Sequence[Speedup]) -> list[SpeedupMean]:
    """Per vocabulary (run order) and baseline that has speedups."""
    out = []
    for vocab in data.vocabs:
        for baseline in SPEEDUP_BASELINES:
            mine = [s for s in items if s.vocab == vocab and s.baseline == baseline]
            if not mine:
                continue
            out.append(
                SpeedupMean(
                    vocab,
                    baseline,
                    specs=sum(1 for s in mine if s.ratio is not None),
                    compile_gm=geometric_mean(s.ratio for s in mine if s.ratio is not None),
                    mask_gm=geometric_mean(s.mask_ratio for s in mine if s.mask_ratio is not None),
                    unfinished=[s for s in mine if s.ratio is None],
                )
            )
    return out


# --- MaskBench ---------------------------------------------------------------------------


@dataclass
class MaskBenchRow:
    """One engine's MaskBench figures in µs (MASKBENCH_FIGURES), ours and published."""

    engine: str
    specs: int
    ok: int
    ours: dict[str, float | None]
    published: dict[str, float | None]


@dataclass
class MaskBenchComparison:
    source: RunData  # the run the figures come from
    vocab: str
    rows: list[MaskBenchRow]


def maskbench_rows(data: RunData) -> MaskBenchComparison | None:
    """The comparison of the run's MaskBench cells (on MASKBENCH_VOCAB when it has it,
    else its first vocabulary by name), or None when it has none."""
    cells = [c for c in data.main if c.spec_id.startswith(MASKBENCH_PREFIX)]
    if not cells:
        return None
    vocabs = sorted({c.vocab for c in cells})
    vocab = MASKBENCH_VOCAB if MASKBENCH_VOCAB in vocabs else vocabs[0]
    rows = []
    for engine in data.engines:
        mine = [c for c in cells if c.engine == engine and c.vocab == vocab]
        if not mine:
            continue
        good = ok(mine)
        mask = summarize(fills(good))
        ours_ns = {
            "mask_mean": mask.get("mean"),
            "mask_p50": mask.get("p50"),
            "mask_p99": mask.get("p99"),
            "ttfm_p50": p(known(c.metrics.ttfm_ns for c in good), 0.5),
        }
        theirs = MASKBENCH_PUBLISHED.get(engine, {})
        rows.append(
            MaskBenchRow(
                engine,
                len(mine),
                len(good),
                {k: None if v is None else v / 1e3 for k, v in ours_ns.items()},
                {k: theirs.get(k) for k in MASKBENCH_FIGURES},
            )
        )
    return MaskBenchComparison(data, vocab, rows)


def find_maskbench(store: Store, data: RunData) -> MaskBenchComparison | None:
    """The MaskBench comparison of this run, else of the latest run that has one."""
    found = maskbench_rows(data)
    if found:
        return found
    for run in reversed(store.runs()):
        if "maskbench" in run.meta.get("options", {}).get("sets", []):
            found = maskbench_rows(load(store, run.name))
            if found:
                return found
    return None
