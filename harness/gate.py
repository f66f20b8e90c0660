"""The CI regression gate: ratios measured side by side in one process, against thresholds
kept in the repository (`benchmarks/thresholds.toml`).

On a noisy 2-core machine an absolute time says little; a ratio of two measurements
interleaved in the same process (A, B, A, B, ...) cancels most of the noise, because both
sides see the same load. Eight ratios gate:
- `compile_speedup_over_naive`: naive compile time / TokensDFA compile time, geometric
  mean over the selected specs (must be at least the threshold);
- `compile_speedup_over_outlines_core`: the same against outlines-core;
- `fill_over_numpy_copy_p50` and `_p99`: TokensDFA's fill_mask time / the time of
  `np.copyto` of one bitset of the same size; each state along the specs' token paths
  is timed `reps` times, interleaved, in three sweeps; it contributes the ratio of its
  two medians from its best sweep, and the gate takes the p50 and p99 of those ratios
  over states;
- `lazy_ttfm_over_llguidance`: tokensdfa-lazy's time to first mask (for a schema,
  converting it with the converter in use, then compile, then the start state's mask) /
  llguidance's (which compiles the schema itself), interleaved, geometric mean over the
  specs (must be at most the threshold);
- `lazy_revisit_fill_over_numpy_copy_p99`: the fill ratio above for tokensdfa-lazy's
  memoized states (every state is visited once before the sweeps);
- `pushdown_ttfm_over_llguidance`: tokensdfa-pushdown's time to first mask / llguidance's
  on a few grammars (`PUSHDOWN_GRAMMARS`), geometric mean (at most the threshold);
- `pushdown_schema_ttfm_over_lazy`: tokensdfa-pushdown's time to first mask /
  tokensdfa-lazy's on schemas with unconstrained values (`PUSHDOWN_SCHEMAS`), which the
  pushdown mode reads as grammars and the lazy index as a bounded regex.
Absolute times are written to the result file for the record, never compared.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness import corpora, engines
from harness import vocab as vocabularies
from harness.corpora import paths
from harness.engines.base import Compiled, Engine
from harness.errors import MissingData, TokensieveError
from harness.figures import percentile
from harness.frames import geometric_mean
from harness.frames import percentile as frame_percentile
from harness.language import converter
from harness.spec import Spec
from harness.vocab import Vocabulary

DEFAULT_THRESHOLDS = Path(__file__).resolve().parent.parent / "benchmarks" / "thresholds.toml"
DEFAULT_SPECS = (
    "outlines-bench/email",
    "outlines-bench/date",
    "outlines-bench/ip",
    "outlines-bench/ssn",
    "handwritten/chat-reply",
)
# The pushdown mode's ratios are measured on their own specs: grammars (against
# llguidance) and schemas with unconstrained values, the ones it reads as grammars
# (against the lazy index, whose bounded regex is the same schema's other reading).
PUSHDOWN_GRAMMARS = (
    "grammars/gbnf-json",
    "grammars/lark-syncode-json",
    "grammars/edge-tool-call",
    "grammars/gbnf-arithmetic",
)
PUSHDOWN_SCHEMAS = ("schemastore/github-actions", "schemastore/readthedocs")
KINDS = ("min", "max")


@dataclass(frozen=True)
class Threshold:
    name: str
    kind: str  # "min": the ratio must be >= limit; "max": <= limit
    limit: float
    why: str = ""


@dataclass(frozen=True)
class Check:
    name: str
    ratio: float
    threshold: Threshold

    @property
    def ok(self) -> bool:
        if self.threshold.kind == "min":
            return self.ratio >= self.threshold.limit
        return self.ratio <= self.threshold.limit

    def line(self) -> str:
        op = ">=" if self.threshold.kind == "min" else "<="
        verdict = "ok" if self.ok else "FAIL"
        return (
            f"{verdict:<4} {self.name}: ratio {self.ratio:.2f}, threshold {op} "
            f"{self.threshold.limit:g}"
        )


def load_thresholds(path: Path) -> dict[str, Threshold]:
    """Parse the thresholds file; a bad one is a one-line error naming the file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MissingData(f"thresholds file {path} not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise TokensieveError(f"thresholds file {path}: {exc}") from None
    out = {}
    for name, entry in data.items():
        if not isinstance(entry, dict):
            raise TokensieveError(f"thresholds file {path}: [{name}] must be a table")
        kinds = [k for k in KINDS if k in entry]
        if len(kinds) != 1 or not isinstance(entry[kinds[0]], int | float):
            raise TokensieveError(
                f"thresholds file {path}: [{name}] needs exactly one number, min or max"
            )
        out[name] = Threshold(name, kinds[0], float(entry[kinds[0]]), str(entry.get("why", "")))
    return out


@dataclass
class Measurements:
    """Interleaved samples in nanoseconds, keyed by what was measured."""

    compile_ns: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    ttfm_ns: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    fill_ns: list[int] = field(default_factory=list)
    copy_ns: list[int] = field(default_factory=list)
    lazy_fill_ns: list[int] = field(default_factory=list)
    lazy_copy_ns: list[int] = field(default_factory=list)

    def compile_ratio(self, slow: str, fast: str) -> float | None:
        return _geomean_ratio(self.compile_ns, slow, fast)

    def ttfm_ratio(self, num: str, den: str) -> float | None:
        return _geomean_ratio(self.ttfm_ns, num, den)

    def record(self) -> dict[str, Any]:
        return {
            "compile_median_ns": {
                f"{e} {s}": statistics.median(v) for (e, s), v in self.compile_ns.items()
            },
            "ttfm_median_ns": {
                f"{e} {s}": statistics.median(v) for (e, s), v in self.ttfm_ns.items()
            },
            "fill_ns": {"p50": _p(self.fill_ns, 0.5), "p99": _p(self.fill_ns, 0.99)},
            "numpy_copy_ns": {"p50": _p(self.copy_ns, 0.5), "p99": _p(self.copy_ns, 0.99)},
            "fill_samples": len(self.fill_ns),
            "lazy_fill_ns": {"p50": _p(self.lazy_fill_ns, 0.5), "p99": _p(self.lazy_fill_ns, 0.99)},
        }


def _geomean_ratio(samples: dict[tuple[str, str], list[int]], num: str, den: str) -> float | None:
    """Geometric mean over specs of median(num) / median(den), grouped as a frame (the
    medians of each engine's samples per spec, `harness.frames.geometric_mean`)."""
    frame = pd.DataFrame(
        [(engine, spec, ns) for (engine, spec), values in samples.items() for ns in values],
        columns=["engine", "spec", "ns"],
    )
    medians = frame.groupby(["spec", "engine"])["ns"].median().unstack("engine")
    if num not in medians or den not in medians:
        return None
    both = medians[[num, den]].dropna()
    return geometric_mean(both[num] / both[den].clip(lower=1))


def _p(values: Sequence[int], q: float) -> float | None:
    return percentile(values, q) if values else None


def _timed(work: Callable[[], Any]) -> tuple[int, Any]:
    start = time.perf_counter_ns()
    value = work()
    return time.perf_counter_ns() - start, value


def _interleave(
    pair: Sequence[Engine],
    specs: Sequence[Spec],
    rounds: int,
    work: Callable[[Engine, Spec], Compiled],
    samples: dict[tuple[str, str], list[int]],
) -> dict[tuple[str, str], Compiled]:
    """Time `work(engine, spec)` for each spec with each engine of `pair`, alternating,
    `rounds` times, into `samples`; returns the last compiled index per (engine, spec)."""
    last: dict[tuple[str, str], Compiled] = {}
    for spec in specs:
        for _ in range(rounds):
            for engine in pair:
                ns, compiled = _timed(lambda e=engine, s=spec: work(e, s))  # type: ignore[misc]
                samples.setdefault((engine.name, spec.id), []).append(ns)
                last[(engine.name, spec.id)] = compiled
    return last


def measure_compile(
    pair: Sequence[Engine],
    prepared: dict[str, Any],
    specs: Sequence[Spec],
    rounds: int,
    into: Measurements,
) -> dict[str, Compiled]:
    """Compile each spec with each engine of `pair`, alternating, `rounds` times. Returns
    the last compiled TokensDFA index per spec (for the fill measurement)."""
    last = _interleave(
        pair, specs, rounds, lambda e, s: e.compile(prepared[e.name], s), into.compile_ns
    )
    return {spec: c for (name, spec), c in last.items() if name == "tokensdfa"}


def measure_ttfm(
    pair: Sequence[Engine],
    prepared: dict[str, Any],
    words: int,
    specs: Sequence[Spec],
    rounds: int,
    into: Measurements,
) -> dict[str, Compiled]:
    """Time to first mask (compile, then the start state's mask into a fresh buffer) of
    each spec with each engine of `pair`, alternating, `rounds` times. Returns the last
    compiled index per spec of the pair's second engine."""

    def first_mask(engine: Engine, spec: Spec) -> Compiled:
        via_regex = engine.capabilities.json_schema == "via-regex"
        if spec.kind == "json_schema" and via_regex and not engine.compiles_schemas_itself():
            # a regex engine's first mask starts from the schema too
            spec = dataclasses.replace(spec, converted=converter.convert_now(spec.text))
        compiled = engine.compile(prepared[engine.name], spec)
        out = np.zeros(words, dtype=np.int32)
        compiled.matcher().fill_mask(out)
        return compiled

    last = _interleave(pair, specs, rounds, first_mask, into.ttfm_ns)
    return {spec: c for (name, spec), c in last.items() if name == pair[1].name}


def _fill_sweep(
    compiled: dict[str, Compiled], vocab: Vocabulary, specs: Sequence[Spec], reps: int
) -> list[tuple[int, int]]:
    """(median fill, median copy) per state along each spec's first token paths, the two
    interleaved `reps` times."""
    out = np.zeros(vocab.mask_words, dtype=np.int32)
    src, dst = _copy_pair(vocab.mask_words)
    clock = time.perf_counter_ns
    found = []
    for spec in specs:
        if spec.id not in compiled:
            continue
        for path in paths.paths_for(spec, vocab, n=2):
            matcher = compiled[spec.id].matcher()
            for token in [*path.ids, None]:
                fills, copies = [], []
                for _ in range(reps):
                    t0 = clock()
                    matcher.fill_mask(out)
                    t1 = clock()
                    np.copyto(dst, src)
                    t2 = clock()
                    fills.append(t1 - t0)
                    copies.append(t2 - t1)
                # a preempted sample must not pass for a slow state
                found.append((int(statistics.median(fills)), int(statistics.median(copies))))
                if token is None or not matcher.advance(token):
                    break
    return found


def _copy_pair(words: int) -> tuple[np.ndarray, np.ndarray]:
    """Source and destination bitsets for the copy baseline, cut from one buffer 2 KiB
    apart modulo 4096. Two separate arrays could land with the destination 1 to 31 bytes
    past the source modulo 4096, where `memcpy`'s `rep movsb` runs some 25 times slower
    on AMD Zen: every copy of the run would be slow and every fill ratio flattered."""
    page_words = 1024
    gap = -(-words // page_words) * page_words + page_words // 2
    buf = np.empty(gap + words, dtype=np.int32)
    src, dst = buf[:words], buf[gap:]
    src.fill(-1)
    dst.fill(0)
    return src, dst


def measure_fill(
    compiled: dict[str, Compiled],
    vocab: Vocabulary,
    specs: Sequence[Spec],
    reps: int,
    into: tuple[list[int], list[int]],
    sweeps: int = 3,
) -> None:
    """TokensDFA fill_mask against np.copyto of one bitset at every state, in `sweeps`
    sweeps spread over time; each state keeps its best sweep (lowest fill/copy). Load
    from another process can slow one state's window on a 2-core machine; a state that
    is slow in every sweep is slow."""
    best: list[tuple[int, int]] = []
    for _ in range(sweeps):
        found = _fill_sweep(compiled, vocab, specs, reps)
        if not best:
            best = found
            continue
        best = [
            min(a, b, key=lambda fc: fc[0] / max(1, fc[1]))
            for a, b in zip(best, found, strict=True)
        ]
    into[0].extend(f for f, _ in best)
    into[1].extend(c for _, c in best)


def run_gate(
    vocab: Vocabulary,
    spec_ids: Sequence[str],
    thresholds: dict[str, Threshold],
    rounds: int = 3,
    reps: int = 20,
    engine_factory: Callable[[str], Engine] = engines.get,
    log: Callable[[str], None] = lambda _: None,
) -> tuple[list[Check], Measurements]:
    """Measure and compare. `engine_factory` lets a test hand in a slowed TokensDFA."""
    specs = [converter.with_regex(corpora.get(s)) for s in spec_ids]
    tdfa = engine_factory("tokensdfa")
    names = ("naive", "outlines-core", "llguidance", "tokensdfa-lazy", "tokensdfa-pushdown")
    others = {n: engine_factory(n) for n in names}
    prepared = {e.name: e.prepare(vocab) for e in [tdfa, *others.values()]}
    m = Measurements()
    log(f"compile: tokensdfa vs naive, {len(specs)} specs x {rounds} rounds")
    compiled = measure_compile([others["naive"], tdfa], prepared, specs, rounds, m)
    log("compile: tokensdfa vs outlines-core")
    measure_compile([others["outlines-core"], tdfa], prepared, specs, rounds, m)
    log("time to first mask: tokensdfa-lazy vs llguidance")
    lazy = measure_ttfm(
        [others["llguidance"], others["tokensdfa-lazy"]],
        prepared,
        vocab.mask_words,
        specs,
        rounds,
        m,
    )
    measure_pushdown(others, prepared, vocab.mask_words, rounds, m, log)
    log("fill_mask vs np.copyto: tokensdfa, tokensdfa-lazy revisits")
    measure_fill(compiled, vocab, specs, reps, (m.fill_ns, m.copy_ns))
    # one sweep visits (and memoizes) every state, so the measured sweeps are revisits
    _fill_sweep(lazy, vocab, specs, 1)
    measure_fill(lazy, vocab, specs, reps, (m.lazy_fill_ns, m.lazy_copy_ns))
    ratios = {
        "compile_speedup_over_naive": m.compile_ratio("naive", "tokensdfa"),
        "compile_speedup_over_outlines_core": m.compile_ratio("outlines-core", "tokensdfa"),
        "fill_over_numpy_copy_p50": _state_ratio(m.fill_ns, m.copy_ns, 0.5),
        "fill_over_numpy_copy_p99": _state_ratio(m.fill_ns, m.copy_ns, 0.99),
        "lazy_ttfm_over_llguidance": m.ttfm_ratio("tokensdfa-lazy", "llguidance"),
        "lazy_revisit_fill_over_numpy_copy_p99": _state_ratio(m.lazy_fill_ns, m.lazy_copy_ns, 0.99),
        "pushdown_ttfm_over_llguidance": m.ttfm_ratio("tokensdfa-pushdown", "llguidance"),
        "pushdown_schema_ttfm_over_lazy": m.ttfm_ratio("tokensdfa-pushdown", "tokensdfa-lazy"),
    }
    checks = []
    for name, threshold in thresholds.items():
        if name not in ratios:
            raise TokensieveError(
                f"thresholds: unknown benchmark {name!r} (known: {', '.join(ratios)})"
            )
        ratio = ratios[name]
        if ratio is None:
            raise TokensieveError(f"gate: nothing measured for {name}")
        checks.append(Check(name, ratio, threshold))
    return checks, m


def measure_pushdown(
    others: dict[str, Engine],
    prepared: dict[str, Any],
    words: int,
    rounds: int,
    into: Measurements,
    log: Callable[[str], None],
) -> None:
    """The pushdown mode's times to first mask: on `PUSHDOWN_GRAMMARS` beside
    llguidance's, on `PUSHDOWN_SCHEMAS` beside the lazy index's (interleaved)."""
    push = others["tokensdfa-pushdown"]
    grammars = [corpora.get(s) for s in PUSHDOWN_GRAMMARS]
    schemas = [corpora.get(s) for s in PUSHDOWN_SCHEMAS]
    log("time to first mask: tokensdfa-pushdown vs llguidance (grammars)")
    measure_ttfm([others["llguidance"], push], prepared, words, grammars, rounds, into)
    log("time to first mask: tokensdfa-pushdown vs tokensdfa-lazy (open schemas)")
    measure_ttfm([others["tokensdfa-lazy"], push], prepared, words, schemas, rounds, into)


def _state_ratio(fills: Sequence[int], copies: Sequence[int], q: float) -> float | None:
    """Quantile `q` over states of (fill / copy) measured in the same window: load that
    slows one state's window slows its copies as much, and cancels out. Nearest rank,
    as every figure (`harness.frames.percentile`)."""
    if not fills or not copies:
        return None
    states = pd.DataFrame({"fill": fills, "copy": copies})
    return frame_percentile(states["fill"] / states["copy"].clip(lower=1), q)


def gate(
    vocab_name: str,
    spec_ids: list[str],
    thresholds_path: Path,
    rounds: int,
    reps: int,
    reports_dir: Path,
) -> int:
    """`tokensieve gate`: measure, write `reports_dir/gate/gate-*.json`, print one line per
    ratio; 1 when a ratio is past its threshold, else 0."""
    thresholds = load_thresholds(thresholds_path)
    vocab = vocabularies.load(vocab_name)
    started = time.perf_counter()
    checks, measured = run_gate(
        vocab,
        spec_ids,
        thresholds,
        rounds=rounds,
        reps=reps,
        log=lambda line: print(f"  {line}", flush=True),
    )
    out = reports_dir / "gate"
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "vocab": vocab_name,
        "specs": ",".join(spec_ids),
        "seconds": round(time.perf_counter() - started, 1),
        "checks": [
            {
                "name": c.name,
                "ratio": c.ratio,
                "kind": c.threshold.kind,
                "limit": c.threshold.limit,
                "ok": c.ok,
            }
            for c in checks
        ],
        **measured.record(),
    }
    path = out / time.strftime("gate-%Y%m%d-%H%M%S.json")
    path.write_text(json.dumps(record, indent=1))
    for c in checks:
        print(c.line())
    failed = [c for c in checks if not c.ok]
    if failed:
        print(
            f"gate: {len(failed)} of {len(checks)} ratios past their thresholds "
            f"({thresholds_path}); record: {path}",
            file=sys.stderr,
        )
        return 1
    print(f"gate: all {len(checks)} ratios within thresholds; record: {path}")
    return 0
