"""What a bench cell and a worker's vocabulary preparation record: typed, and written and
read by the same code (`to_json` / `from_json`), so the worker, the store, the report and
`compare` cannot drift apart on a key.

Durations are integer nanoseconds; memory is bytes. A field is None when it was not
measured (a failed cell has none of the timings; an engine with no figure of its own has
no `engine_memory_bytes`); `to_json` leaves such fields out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from harness.results.status import Status


@dataclass
class CellMetrics:
    # compile: the median of the samples (see harness.bench.measure), the first, and all
    compile_ns: int | None = None
    compile_first_ns: int | None = None
    compile_samples_ns: list[int] = field(default_factory=list)
    # the one converter's time for a schema given to a regex-only engine (cached verdict)
    convert_ns: int | None = None
    # time to first mask: (conversion +) compile + first matcher + its first fill
    ttfm_ns: int | None = None
    matcher_ns: int | None = None
    first_fill_ns: int | None = None
    # one fill and one advance per step, pooled over the cell's paths, and their summaries
    # (n, mean, p50, p90, p99, max; harness.figures.summarize)
    fill_ns: list[int] = field(default_factory=list)
    advance_ns: list[int] = field(default_factory=list)
    fill: dict[str, float] = field(default_factory=dict)
    advance: dict[str, float] = field(default_factory=dict)
    paths: int | None = None  # token paths walked
    refused_paths: int | None = None  # paths the engine's mask or advance refused
    note: str | None = None  # why the first refused path was refused
    truncated: bool | None = None  # the walk stopped at half the cell timeout
    path_note: str | None = None  # why the cell has fewer token paths than asked
    # memory: the worker's resident-set growth over compile and walk, the engine's own
    # figure for the compiled spec, the worker tree's peak while the cell ran
    rss_growth_bytes: int | None = None
    engine_memory_bytes: int | None = None
    peak_rss_bytes: int | None = None
    vocab_size: int | None = None
    cell_s: float | None = None  # wall time the cell held its worker
    # states, counted after the timings (`states_error` when counting failed)
    num_states: int | None = None
    states_ns: int | None = None
    states_error: str | None = None
    # where it ran: the host, and its worker's calibration (a fixed bitset copy and a fixed
    # trie walk, ns), so absolute times from different machines are never mixed unsaid
    host: str | None = None
    calibration: dict[str, int] = field(default_factory=dict)
    # a batch cell (`harness.bench.batch`): its shape, each step's time (all masks of
    # the batch, then one token each) and their summary, the specs it mixed and those
    # it left out, the tokens refused, the resident-set growth per sequence
    batch_size: int | None = None
    threads: int | None = None
    step_ns: list[int] = field(default_factory=list)
    step: dict[str, float] = field(default_factory=dict)
    batch_specs: int | None = None
    batch_left_out: int | None = None
    batch_refused: int | None = None
    sequence_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v != [] and v != {}}

    @staticmethod
    def from_json(data: dict[str, Any]) -> CellMetrics:
        known = {f.name for f in fields(CellMetrics)}
        return CellMetrics(**{k: v for k, v in data.items() if k in known})

    @property
    def memory(self) -> tuple[float | None, str]:
        """(bytes, "engine" or "rss"): the engine's own figure for the compiled spec where
        it has one, else the growth of the worker's resident set (never negative)."""
        if self.engine_memory_bytes is not None:
            return float(self.engine_memory_bytes), "engine"
        if self.rss_growth_bytes is None:
            return None, "rss"
        return float(max(0, self.rss_growth_bytes)), "rss"


@dataclass
class CellResult:
    """How one cell ended, as a worker reports it and the store keeps it."""

    status: Status
    message: str | None = None
    metrics: CellMetrics = field(default_factory=CellMetrics)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "message": self.message,
            "metrics": self.metrics.to_json(),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> CellResult:
        return CellResult(
            Status(data["status"]), data.get("message"), CellMetrics.from_json(data["metrics"])
        )


@dataclass
class PrepareMetrics:
    """A worker's preparation of one vocabulary for one engine (once per worker)."""

    prepare_ns: int | None = None
    rss_before: int | None = None
    rss_growth_bytes: int | None = None
    vocab_size: int | None = None
    startup_s: float | None = None  # process start to ready
    pid: int | None = None
    peak_rss_bytes: int | None = None
    version: str | None = None
    host: str | None = None
    calibration: dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @staticmethod
    def from_json(data: dict[str, Any]) -> PrepareMetrics:
        known = {f.name for f in fields(PrepareMetrics)}
        return PrepareMetrics(**{k: v for k, v in data.items() if k in known})
