"""The verdict: which engine to use, per corpus set and vocabulary, computed from a run's
`ok` cells (`verdicts`, on the cells and steps frames of `harness.frames`, with its
nearest-rank percentile) and said in sentences at the top of the report (`section`).

For each group of cells (one corpus set, the part of a spec id before its first `/`, on
one vocabulary; and all sets together on each vocabulary when the run has several):

- **Ranked engines** are those `ok` on at least half the group's specs; an engine below
  that is named with its failure counts and left out, so a fast engine that failed the
  hard specs cannot win on the easy ones. Were no spec `ok` for every ranked engine, the
  one with the fewest `ok` specs is left out too, until one is.
- **Compared specs** are the specs every ranked engine ran `ok`: every figure of the group
  pools exactly those cells.
- **Claims** (`Claim`): the fastest time to first mask (median over the compared specs),
  the fastest mask at p99 (nearest rank over every timed fill of those cells), and the
  smallest compiled spec (median memory over those specs). Memory ranks only engines
  that report their own size for every compared spec ("engine"); the worker's resident
  set growth ("rss", which can read 0 when freed pages are reused) is ranked only when no
  engine reports its own. Each claim names the runner-up and the ratio to it, or says
  the two tie (below).
- **Bugs** (`EngineBugs`): from the differential test of the same run name (`diff.json`
  in the run directory): every bug with a witness (spec, vocabulary) in the group, and
  every instance failure of the group that is a bug (not a declared policy).

**Ties** (`Claim.tie`, `decided`): a claim says the best engine is better than the
runner-up only when the difference is beyond the spread of the cells the figures pool;
otherwise the two tie ("within the spread of their cells"), as they do when their figures
print the same. The two engines are compared spec by spec on the compared specs (paired:
each spec's cell of either engine; a cell's figure is its time to first mask, the p99 of
its own fills, its memory). The claim needs both:

1. **Margin**: the pooled ratio (runner-up / best) is at least `MIN_RATIO` (1.10). Each
   engine's cells run one after another in its own worker, at other moments than the
   other engine's, so a slower spell of the machine (clock, scheduler, a neighbour) can
   shift all of one engine's cells together, which the spec-by-spec comparison cannot
   see: a difference under 10% is never claimed.
2. **Consistency**: the best engine's cell is ahead of the runner-up's by `CLEAR_RATIO`
   (1.25x, `tokensieve compare`'s default noise threshold for one cell's figure) on
   every compared spec, so that each spec alone is beyond one cell's noise; or it is
   ahead (strictly smaller) on so many of the `n` compared specs that a one-sided sign
   test rejects chance at `SIGN_LEVEL` (5%): P(X >= ahead) <= 0.05 for X ~ Binomial(n,
   1/2), i.e. were each spec a coin toss between the two engines, so many wins would
   come at most once in 20 runs. A spec where the two cells are equal is no win.

The sign test assumes nothing about how per-spec differences are distributed (cell
figures are heavy-tailed, and one spec's outlier must not decide), and it is exact and
deterministic (no resampling, which over 3 specs is degenerate). It needs 5 specs (5
wins of 5: 1/32), so with 1 to 4 compared specs only 1.25x on every spec can claim: a
small ratio there is always a tie, while a consistent 2x on 3 specs is a claim, each
spec's cells being 2x apart, well beyond one cell's noise. The counts the rule reads are in the
claim and its CSV row (`specs_paired`, `specs_ahead`, `specs_ahead_1.25x`, `tie`).

`VERDICT` is the CSV of the claims (`verdict.csv`), so every figure the sentences show is
in a CSV. The sentences are built with `harness.report.html.markup` from escaped pieces.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from harness.diff.findings.records import CellRow, FailureRow, bugs_of
from harness.frames import cells_of, percentile, steps_of
from harness.report.columns import Column, ms, us, write_csv
from harness.report.data import RunData
from harness.results.status import FAILED, STATUSES
from harness.store import Cell

TTFM = "time to first mask"
MASK_P99 = "mask p99"
MEMORY = "memory"
ALL_SETS = "all sets"
# The instance failures that are bugs in diff.json (harness.diff.findings.collector.INSTANCE_BUGS,
# kept equal by tests/test_report.py; the report reads the JSON without the differ).
INSTANCE_BUGS = ("false-rejection", "false-acceptance", "invalid-output")
# The tie rule (see the module's doc): the pooled margin, the margin of one spec's cells,
# the sign test's level.
MIN_RATIO = 1.10
CLEAR_RATIO = 1.25
SIGN_LEVEL = 0.05


@dataclass(frozen=True)
class Figure:
    """One engine's figure in a group: `value` (ns, or bytes for memory) pooling `n`
    specs (masks, for the p99); `kind` says where a memory figure comes from."""

    engine: str
    value: float
    n: int
    kind: str = ""


@dataclass(frozen=True)
class Paired:
    """The best engine's cells against the runner-up's, spec by spec: how many compared
    specs both have the figure for, on how many the best's cell is smaller, and on how
    many smaller by `CLEAR_RATIO` or more."""

    specs: int = 0
    ahead: int = 0
    clear: int = 0


def sign_p(ahead: int, specs: int) -> float:
    """One-sided sign test: P(X >= ahead) for X ~ Binomial(specs, 1/2)."""
    return sum(math.comb(specs, k) for k in range(ahead, specs + 1)) / 2**specs


def decided(ratio: float, paired: Paired) -> bool:
    """Whether a pooled `ratio` (runner-up / best) with these paired specs is a claim,
    not a tie: the module's rule."""
    if ratio < MIN_RATIO or paired.specs == 0:
        return False
    return paired.clear == paired.specs or sign_p(paired.ahead, paired.specs) <= SIGN_LEVEL


@dataclass(frozen=True)
class Claim:
    """The best engine at one measure in a group, and the runner-up (None when only one
    engine has the figure), with their cells compared spec by spec."""

    corpus: str
    vocab: str
    measure: str
    best: Figure
    runner_up: Figure | None
    paired: Paired = Paired()

    @property
    def ratio(self) -> float | None:
        """runner-up / best (how many times faster or smaller), None without either."""
        if self.runner_up is None or self.best.value <= 0:
            return None
        return self.runner_up.value / self.best.value

    @property
    def tie(self) -> bool:
        """Whether the best and the runner-up tie: the difference is not beyond the spread
        of their cells (the module's rule). False without a runner-up."""
        if self.runner_up is None:
            return False
        ratio = self.ratio
        if ratio is None:  # the best's figure is 0: a tie unless the runner-up's is above
            return self.runner_up.value <= 0 or not decided(math.inf, self.paired)
        return not decided(ratio, self.paired)


@dataclass(frozen=True)
class Standing:
    """An engine's cells in a group: how many specs, and how many ended in each status."""

    engine: str
    specs: int
    counts: dict[str, int]

    @property
    def ok(self) -> int:
        return self.counts.get("ok", 0)

    @property
    def failed(self) -> int:
        return sum(self.counts.get(s, 0) for s in FAILED)

    def outcomes(self, failed_only: bool = False) -> str:
        """The statuses other than ok with their counts: "2 timeout, 1 unsupported"."""
        shown = [
            f"{self.counts[s]} {s}"
            for s in STATUSES
            if s != "ok" and self.counts.get(s) and (not failed_only or s in FAILED)
        ]
        return ", ".join(shown)


@dataclass(frozen=True)
class EngineBugs:
    """What the differential test found wrong with one engine in a group: its bugs'
    signatures (one entry per bug) and its instance failures that are bugs, by kind."""

    engine: str
    signatures: list[str]
    instances: dict[str, int]


@dataclass
class Group:
    """The verdict of one corpus set (or `ALL_SETS`) on one vocabulary. `bugs` is None
    when the run has no differential test covering the group."""

    corpus: str
    vocab: str
    specs: int
    standings: list[Standing]
    ranked: list[str]
    compared: list[str]
    claims: list[Claim] = field(default_factory=list)
    unranked_memory: list[str] = field(default_factory=list)
    bugs: list[EngineBugs] | None = None


def corpus_of(spec_id: str) -> str:
    """The corpus set of a spec id (`SET/NAME`)."""
    return spec_id.split("/", 1)[0]


def _ranked(ok_specs: dict[str, set[str]], total: int) -> tuple[list[str], list[str]]:
    """(ranked engines in the given order, the specs all of them ran ok); see the
    module's rule."""
    ranked = [e for e, found in ok_specs.items() if found and 2 * len(found) >= total]
    while ranked:
        common = set.intersection(*(ok_specs[e] for e in ranked))
        if common:
            return ranked, sorted(common)
        ranked.remove(min(ranked, key=lambda e: len(ok_specs[e])))
    return [], []


def _best(figures: list[Figure]) -> tuple[Figure, Figure | None] | None:
    """The smallest figure and the next one (ties keep run order)."""
    if not figures:
        return None
    order = sorted(figures, key=lambda f: f.value)
    return order[0], (order[1] if len(order) > 1 else None)


def _memory_figures(pooled: pd.DataFrame, ranked: Sequence[str]) -> tuple[list[Figure], list[str]]:
    """(the memory figures ranked, the engines left out: without a size of their own
    for every compared spec while another engine has one; see the module's rule)."""
    own: list[Figure] = []
    rss: list[Figure] = []
    unmeasured: list[str] = []
    for engine in ranked:
        cells = pooled[pooled["engine"] == engine]
        measured = cells[cells["memory_bytes"].notna()]
        if len(measured) != len(cells) or measured.empty:
            unmeasured.append(engine)
            continue
        kinds = set(measured["memory_kind"])
        target = own if kinds == {"engine"} else rss
        value = percentile(measured["memory_bytes"], 0.5) or 0.0
        target.append(Figure(engine, value, len(measured), "/".join(sorted(kinds))))
    if own:
        return own, [f.engine for f in rss] + unmeasured
    return rss, unmeasured


# a cell's own figure at each measure, what the paired comparison reads: its time to
# first mask, the p99 of its own fills, its memory (columns of harness.frames cells)
_CELL_FIGURE = {TTFM: "ttfm_ns", MASK_P99: "mask_p99_ns", MEMORY: "memory_bytes"}


def _paired(measure: str, best: pd.DataFrame, runner_up: pd.DataFrame) -> Paired:
    """The best engine's cells against the runner-up's on the specs both have the figure
    for (see `Paired`)."""
    column = _CELL_FIGURE[measure]
    mine = best.dropna(subset=[column]).set_index("spec")[column]
    theirs = runner_up.dropna(subset=[column]).set_index("spec")[column]
    shared = pd.concat([mine, theirs], axis=1, join="inner", keys=["a", "b"]).astype(float)
    ahead = shared[shared["a"] < shared["b"]]
    clear = int((ahead["b"] >= CLEAR_RATIO * ahead["a"]).sum())
    return Paired(len(shared), len(ahead), clear)


def _in_order(cells: pd.DataFrame, engines: Sequence[str]) -> list[str]:
    """The engines that have cells: the run's order, then the others as they come."""
    present = list(dict.fromkeys(cells["engine"]))
    return [e for e in engines if e in present] + [e for e in present if e not in engines]


def _figures(
    pooled: pd.DataFrame, fills: pd.DataFrame, ranked: Sequence[str]
) -> dict[str, list[Figure]]:
    """The time to first mask (median) and mask p99 (pooled fills) of each ranked engine."""
    ttfm, masks = [], []
    for engine in ranked:
        values = pooled.loc[pooled["engine"] == engine, "ttfm_ns"].dropna()
        if len(values):
            ttfm.append(Figure(engine, percentile(values, 0.5) or 0.0, len(values)))
        steps = fills.loc[fills["engine"] == engine, "ns"]
        if len(steps):
            masks.append(Figure(engine, percentile(steps, 0.99) or 0.0, len(steps)))
    return {TTFM: ttfm, MASK_P99: masks}


def judge(corpus: str, vocab: str, cells: Sequence[Cell], engines: Sequence[str]) -> Group:
    """The verdict of one group from its cells (main study), engines in run order."""
    return judge_frames(corpus, vocab, cells_of(cells), steps_of(cells), engines)


def judge_frames(
    corpus: str, vocab: str, cells: pd.DataFrame, steps: pd.DataFrame, engines: Sequence[str]
) -> Group:
    """The verdict of one group from its cells and their steps (`harness.frames`, main
    study), engines in run order."""
    specs = sorted(set(cells["spec"]))
    order = _in_order(cells, engines)
    standings = [
        Standing(e, int((cells["engine"] == e).sum()), _counts(cells[cells["engine"] == e]))
        for e in order
    ]
    good = cells[cells["status"] == "ok"]
    ok_specs = {e: set(good.loc[good["engine"] == e, "spec"]) for e in order}
    ranked, compared = _ranked(ok_specs, len(specs))
    group = Group(corpus, vocab, len(specs), standings, ranked, compared)
    pooled = good[good["engine"].isin(ranked) & good["spec"].isin(compared)]
    keys = ["engine", "spec", "vocab"]
    fills = steps[steps["kind"] == "fill"].merge(pooled[keys], on=keys, how="inner")
    figures = _figures(pooled, fills, ranked)
    figures[MEMORY], group.unranked_memory = _memory_figures(pooled, ranked)
    for measure in (TTFM, MASK_P99, MEMORY):
        found = _best(figures[measure])
        if found is None:
            continue
        best, runner_up = found
        paired = Paired()
        if runner_up is not None:
            mine = pooled[pooled["engine"] == best.engine]
            paired = _paired(measure, mine, pooled[pooled["engine"] == runner_up.engine])
        group.claims.append(Claim(corpus, vocab, measure, best, runner_up, paired))
    return group


def _counts(cells: pd.DataFrame) -> dict[str, int]:
    """Cells by status, in the order the statuses first appear."""
    return {str(k): int(v) for k, v in cells["status"].value_counts(sort=False).items()}


def verdicts(data: RunData, diff: dict[str, Any] | None = None) -> list[Group]:
    """Every group of the run's main study: per vocabulary (run order), all sets first
    when the run has several, then each set (sorted); bugs from `diff` (a `diff.json`
    dict) when given. The groups are the cells frame's (`harness.frames`)."""
    cells, steps = cells_of(data.main), steps_of(data.main)
    out: list[Group] = []
    for vocab in data.vocabs:
        mine = cells[cells["vocab"] == vocab]
        sets = sorted(set(mine["corpus"]))
        if len(sets) > 1:
            out.append(judge_frames(ALL_SETS, vocab, mine, steps, data.engines))
        for corpus in sets:
            one = mine[mine["corpus"] == corpus]
            out.append(judge_frames(corpus, vocab, one, steps, data.engines))
    if diff is not None:
        for group in out:
            group.bugs = bugs_in(diff, group.corpus, group.vocab)
    return out


def _in_group(spec: str, vocab: str | None, corpus: str, group_vocab: str) -> bool:
    """Whether a diff witness (spec, vocab; vocab None when unknown) lies in the group."""
    if vocab is not None and vocab != group_vocab:
        return False
    return corpus == ALL_SETS or corpus_of(spec) == corpus


def bugs_in(diff: dict[str, Any], corpus: str, vocab: str) -> list[EngineBugs] | None:
    """The engines with bugs in the group, by name; None when no cell of the diff ran
    in the group. `diff` is a diff.json dict, read as the differ's records
    (`harness.diff.findings.records`; one bug per finding in a diff.json from before
    bugs were grouped)."""
    cells = [CellRow.from_json(c) for c in diff.get("cells") or []]
    if not any(_in_group(c.spec, c.vocab, corpus, vocab) for c in cells):
        return None
    signatures: dict[str, list[str]] = defaultdict(list)
    for bug in bugs_of(diff) or []:
        if any(_in_group(w.spec, w.vocab, corpus, vocab) for w in bug.witnesses):
            signatures[bug.engine].append(bug.signature)
    instances: dict[str, Counter[str]] = defaultdict(Counter)
    for f in map(FailureRow.from_json, diff.get("instance_failures") or []):
        if f.kind in INSTANCE_BUGS and f.policy is None and f.spec_id is not None:
            if _in_group(f.spec_id, f.vocab, corpus, vocab):
                instances[f.engine][f.kind] += 1
    engines = sorted(set(signatures) | set(instances))
    return [EngineBugs(e, signatures.get(e, []), dict(instances.get(e, {}))) for e in engines]


def load_diff(out: Path) -> dict[str, Any] | None:
    """The run directory's `diff.json` (written by `tokensieve diff --run RUN`), if any."""
    source = out / "diff.json"
    return json.loads(source.read_text(encoding="utf-8")) if source.is_file() else None


# --- the CSV -----------------------------------------------------------------------------


def _value(claim: Claim, figure: Figure | None) -> float | None:
    """A figure in the CSV's unit for its measure: ms, µs or bytes."""
    if figure is None:
        return None
    if claim.measure == TTFM:
        return ms(figure.value)
    if claim.measure == MASK_P99:
        return us(figure.value)
    return figure.value


UNITS = {TTFM: "ms (median)", MASK_P99: "us (p99)", MEMORY: "bytes (median)"}

VERDICT: list[Column[Claim]] = [
    Column("corpus", lambda c: c.corpus),
    Column("vocab", lambda c: c.vocab),
    Column("measure", lambda c: c.measure),
    Column("engine", lambda c: c.best.engine),
    Column("value", lambda c: _value(c, c.best)),
    Column("unit", lambda c: UNITS[c.measure]),
    Column("pooled", lambda c: c.best.n),
    Column("memory_kind", lambda c: c.best.kind),
    Column("runner_up", lambda c: c.runner_up.engine if c.runner_up else None),
    Column("runner_up_value", lambda c: _value(c, c.runner_up)),
    Column("ratio", lambda c: None if c.ratio is None else round(c.ratio, 3)),
    Column("tie", lambda c: c.tie),
    Column("specs_paired", lambda c: c.paired.specs),
    Column("specs_ahead", lambda c: c.paired.ahead),
    Column(f"specs_ahead_{CLEAR_RATIO}x", lambda c: c.paired.clear),
]


def write_verdict_csv(groups: Sequence[Group], out: Path) -> str:
    """Every claim of `groups` as `out/verdict.csv`; returns the file name."""
    return write_csv(out / "verdict.csv", VERDICT, [c for g in groups for c in g.claims])
