"""`tokensieve bench`: a first, simple benchmark over outlines-core's nine benchmark regexes.

For each vocabulary and engine: prepare the vocabulary once (timed on its own); then for
each regex compile it, create a fresh matcher, and walk the real tokenization of the
regex's first example, timing exactly one mask fill per step (the step after the last
token included, where EOS must be allowed), advancing after each fill. Nothing is shared
between regexes except the prepared vocabulary, and the garbage collector is paused
during the walk so that its pauses do not land in one engine's fills.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness import corpus, engines, vocab
from harness.engines import EngineError
from harness.engines.base import Engine
from harness.errors import SpecError, UnsupportedSpec
from harness.spec import Spec
from harness.vocab import Vocabulary

BENCH_SET = "outlines-bench"
DEFAULT_VOCAB = "llama3"
STATUS_WIDTH = 100


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="time compile and mask fills on outlines-core's benchmark regexes",
        description="Compile each of outlines-core's benchmark regexes with each engine and "
        "time one mask fill per step along the tokenization of a matching example. "
        "Memory is the engine's own figure where it has one, else the process's RSS "
        "growth over compile and walk (marked 'rss').",
    )
    parser.add_argument(
        "--vocab",
        action="append",
        metavar="NAME",
        help=f"vocabulary name(s), repeatable or comma-separated (default {DEFAULT_VOCAB})",
    )
    parser.add_argument(
        "--engines",
        metavar="LIST",
        help="comma-separated engine names (default: every available engine)",
    )
    parser.set_defaults(func=run)


@dataclass
class Cell:
    spec: str
    status: str = "ok"
    compile_ms: float | None = None
    fills_ns: list[int] | None = None
    memory: str = "-"
    states: int | None = None


def run(args: argparse.Namespace) -> int:
    vocab_names = _split(args.vocab) or [DEFAULT_VOCAB]
    chosen = _choose_engines(args.engines)
    specs = corpus.load_set(BENCH_SET)
    for vocab_name in vocab_names:
        voc = vocab.load(vocab_name)
        paths = {spec.id: _example_path(voc, spec) for spec in specs}
        print(f"\nvocabulary {voc.name}: {voc.size:,} ids, set {BENCH_SET} ({len(specs)} regexes)")
        WIDTHS[1] = max(len(HEADER[1]), *(len(_short(spec)) for spec in specs))
        _print_row(HEADER)
        for engine in chosen:
            ok, why = engine.available()
            if not ok:
                _print_row([engine.name, "-", *["-"] * 6, f"unavailable: {why}"])
                continue
            started = time.perf_counter_ns()
            prepared = engine.prepare(voc)
            prepare_ms = (time.perf_counter_ns() - started) / 1e6
            _print_row([engine.name, "(prepare)", f"{prepare_ms:.1f}", *["-"] * 5, "ok"])
            for spec in specs:
                cell = bench_cell(engine, prepared, voc, spec, paths[spec.id])
                _print_row(_cells(engine.name, cell))
    print(
        "\nmask: one fill per step, p50/p99 by nearest rank over the steps of one path; "
        "compile: llguidance defers its work to the first fills, so its compile time is "
        "small and its first masks are slow; memory 'rss': growth of the process's resident "
        "set over compile and walk (freed pages are reused, so it can read 0)."
    )
    return 0


def bench_cell(
    engine: Engine, prepared: Any, voc: Vocabulary, spec: Spec, path: list[int] | None
) -> Cell:
    """Compile `spec`, walk `path` with a fresh matcher; errors become the cell's status."""
    name = _short(spec)
    if path is None:
        return Cell(name, status="no example to walk")
    gc.collect()
    rss_before = _rss()
    try:
        started = time.perf_counter_ns()
        compiled = engine.compile(prepared, spec)
        compile_ms = (time.perf_counter_ns() - started) / 1e6
        fills, status = _walk(compiled.matcher(), voc, path)
    except (SpecError, UnsupportedSpec) as exc:
        kind = "unsupported" if isinstance(exc, UnsupportedSpec) else "bad spec"
        return Cell(name, status=f"{kind}: {exc.message}")
    except EngineError as exc:
        return Cell(name, status=f"engine error: {exc.message}")
    rss_after = _rss()
    engine_bytes = compiled.memory_bytes()
    if engine_bytes is not None:
        memory = _size(engine_bytes)
    elif rss_before is not None and rss_after is not None:
        memory = f"rss {_size(max(0, rss_after - rss_before))}"
    else:
        memory = "-"
    return Cell(name, status, compile_ms, fills, memory, compiled.num_states())


def _walk(matcher: Any, voc: Vocabulary, path: list[int]) -> tuple[list[int], str]:
    """One timed fill per step, then advance; checks that the engine allows the path."""
    mask = np.zeros(voc.mask_words, dtype=np.int32)
    fills: list[int] = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for step, token in enumerate(path):
            started = clock()
            matcher.fill_mask(mask)
            fills.append(clock() - started)
            if not _has(mask, token):
                return fills, f"mask refuses example token {step} (id {token})"
            if not matcher.advance(token):
                return fills, f"advance refuses example token {step} (id {token})"
        started = clock()
        matcher.fill_mask(mask)
        fills.append(clock() - started)
    finally:
        gc.enable()
    if not matcher.is_accepting() or not _has(mask, voc.eos_id):
        return fills, "example does not end in an accepting state"
    return fills, "ok"


def _short(spec: Spec) -> str:
    return spec.id.split("/", 1)[-1]


def _has(mask: np.ndarray, token: int) -> bool:
    return bool((int(mask[token >> 5]) >> (token & 31)) & 1)


def _example_path(voc: Vocabulary, spec: Spec) -> list[int] | None:
    return voc.encode(spec.examples[0]) if spec.examples else None


def _choose_engines(arg: str | None) -> list[Engine]:
    if arg:
        return [engines.get(name) for name in _split([arg])]
    every = engines.all_engines()
    for engine in every:
        ok, why = engine.available()
        if not ok:
            print(f"skipping {engine.name}: {why}", file=sys.stderr)
    return [engine for engine in every if engine.available()[0]]


def _split(values: list[str] | None) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _rss() -> int | None:
    try:
        import psutil
    except ImportError:
        return None
    return int(psutil.Process().memory_info().rss)


def _percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


HEADER = [
    "engine",
    "regex",
    "compile ms",
    "p50 us",
    "p99 us",
    "steps",
    "memory",
    "states",
    "status",
]
WIDTHS = [14, 16, 10, 9, 9, 6, 13, 8, 0]
ALIGN_RIGHT = {2, 3, 4, 5, 6, 7}


def _cells(engine: str, cell: Cell) -> list[str]:
    fills = cell.fills_ns or []
    status = cell.status if len(cell.status) <= STATUS_WIDTH else cell.status[:STATUS_WIDTH]
    return [
        engine,
        cell.spec,
        "-" if cell.compile_ms is None else f"{cell.compile_ms:.1f}",
        f"{_percentile(fills, 0.5) / 1e3:.1f}" if fills else "-",
        f"{_percentile(fills, 0.99) / 1e3:.1f}" if fills else "-",
        str(len(fills)) if fills else "-",
        cell.memory,
        "-" if cell.states is None else f"{cell.states:,}",
        status,
    ]


def _print_row(row: list[str]) -> None:
    parts = []
    for i, (text, width) in enumerate(zip(row, WIDTHS, strict=True)):
        parts.append(text.rjust(width) if i in ALIGN_RIGHT else text.ljust(width))
    print("  ".join(parts).rstrip(), flush=True)
