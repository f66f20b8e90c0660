"""What a `tokensieve logits` run prints and writes: the table (one row per case, printed
as the case ends), the findings (one line per method, layout and outcome that is not a
clean pass, with one example case), `logits.csv` (one row per case) and `logits.json`
(the machine, the versions, the options, every timing sample and every check).

Times are in microseconds; the ratio is xgrammar's over torch's (below 1: xgrammar is
faster), of the p50s in the table and of both p50s and minimums in the files.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.figures import percentile
from harness.logits.layouts import Case, Check
from harness.logits.options import METHODS
from harness.logits.timing import Timings

COLUMNS = (
    ("vocab", 7),
    ("batch", 5),
    ("dtype", 8),
    ("xgrammar p50 µs", 15),
    ("min µs", 9),
    ("torch p50 µs", 12),
    ("min µs", 9),
    ("xgrammar/torch", 14),
)
CSV_NAME = "logits.csv"
JSON_NAME = "logits.json"


@dataclass
class CaseResult:
    """A case's timings, its checks in every layout, and `note` when it could not run to
    the end (out of memory)."""

    case: Case
    timings: Timings
    checks: list[Check] = field(default_factory=list)
    note: str = ""


def stat(samples: Sequence[int], what: str) -> float | None:
    """ "p50", "p90", "min", "max" or "mean" of nanosecond samples; None when none."""
    if not samples:
        return None
    if what == "mean":
        return sum(samples) / len(samples)
    q = {"min": 0.0, "p50": 0.5, "p90": 0.9, "max": 1.0}[what]
    return float(percentile(samples, q))


def ratio(result: CaseResult, what: str) -> float | None:
    """xgrammar's `what` over torch's; None when either has no samples."""
    mine, theirs = (stat(result.timings.samples.get(m, []), what) for m in METHODS)
    return mine / theirs if mine is not None and theirs else None


def us(ns: float | None) -> str:
    if ns is None:
        return "-"
    value = ns / 1e3
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def header(meta: dict[str, Any]) -> list[str]:
    """The lines before the table: what ran where, then the column names."""
    o = meta["options"]
    lines = [
        f"device: {meta['device']} ({meta['device_name']}), torch {meta['torch']} "
        f"({meta['threads']} thread{'' if meta['threads'] == 1 else 's'}), "
        f"xgrammar {meta['xgrammar']}",
        f"{o['reps']} timed calls per method after {o['warmup']} warm-up, interleaved; "
        f"{o['allowed']:.0%} of the tokenizer's ids allowed; checked in each layout with "
        f"padding {o['padding']}",
    ]
    return [*lines, "  ".join(f"{name:>{width}}" for name, width in COLUMNS) + "  checks"]


def row(result: CaseResult) -> str:
    c = result.case
    cells: list[str] = [str(c.tokens), str(c.batch), c.dtype]
    for method in METHODS:
        samples = result.timings.samples.get(method, [])
        cells += [us(stat(samples, "p50")), us(stat(samples, "min"))]
    r = ratio(result, "p50")
    cells.append("-" if r is None else f"{r:.2f}")
    text = "  ".join(f"{cell:>{width}}" for cell, (_, width) in zip(cells, COLUMNS, strict=True))
    return f"{text}  {result.note or _checks_cell(result)}"


def _checks_cell(result: CaseResult) -> str:
    """ "ok", or per method how many of its layouts came out wrong or raised, and whether
    its timing raised."""
    parts = []
    for method in METHODS:
        mine = [ch for ch in result.checks if ch.method == method]
        counts = {s: sum(1 for ch in mine if ch.status == s) for s in ("wrong", "error")}
        bad = [f"{n} wrong" if s == "wrong" else f"{n} raised" for s, n in counts.items() if n]
        if bad:
            parts.append(f"{method}: {', '.join(bad)} of {len(mine)}")
        if method in result.timings.errors:
            parts.append(f"{method}: raised when timed")
    return "; ".join(parts) or "ok"


def findings(results: Sequence[CaseResult]) -> list[str]:
    """One line per (outcome, method, layout) other than a silent pass, with the number
    of cases and the first case's details; then timing errors and cases cut short."""
    groups: dict[tuple[str, str, str], list[Check]] = {}
    for result in results:
        for ch in result.checks:
            if ch.status != "ok" or ch.detail:
                key = ("note" if ch.status == "ok" else ch.status, ch.method, ch.layout)
                groups.setdefault(key, []).append(ch)
    checked = sum(1 for r in results if r.checks)
    lines = [
        f"{status}: {method} on {layout}: {len(chs)} of {checked} cases, e.g. "
        f"{chs[0].case.label()}: {chs[0].detail}"
        for (status, method, layout), chs in groups.items()
    ]
    for result in results:
        for method, why in result.timings.errors.items():
            lines.append(f"error: {method} timing on {result.case.label()}: {why}")
        if result.note:
            lines.append(f"skipped: {result.case.label()}: {result.note}")
    return lines


def summary(results: Sequence[CaseResult]) -> str:
    checks = [ch for r in results for ch in r.checks]
    counts = {s: sum(1 for ch in checks if ch.status == s) for s in ("ok", "wrong", "error")}
    return (
        f"checks: {len(checks)} ({len(results)} cases x layouts x methods): "
        f"{counts['ok']} ok, {counts['wrong']} wrong, {counts['error']} raised"
    )


def write(out: Path, meta: dict[str, Any], results: Sequence[CaseResult]) -> list[Path]:
    """Write logits.csv and logits.json into the existing folder `out`; their paths."""
    csv_path, json_path = out / CSV_NAME, out / JSON_NAME
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        rows = [_csv_row(meta, r) for r in results]
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["device"])
        writer.writeheader()
        writer.writerows(rows)
    document = {
        **meta,
        "cases": [_json_case(r) for r in results],
        "findings": findings(results),
        "summary": summary(results),
    }
    json_path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return [csv_path, json_path]


def _csv_row(meta: dict[str, Any], result: CaseResult) -> dict[str, Any]:
    c = result.case
    out: dict[str, Any] = {
        "device": meta["device"],
        "device_name": meta["device_name"],
        "dtype": c.dtype,
        "vocab": c.tokens,
        "batch": c.batch,
    }
    for method in METHODS:
        samples = result.timings.samples.get(method, [])
        out[f"{method}_n"] = len(samples)
        for what in ("p50", "min", "p90", "max"):
            value = stat(samples, what)
            out[f"{method}_{what}_us"] = None if value is None else round(value / 1e3, 3)
    for what in ("p50", "min"):
        r = ratio(result, what)
        out[f"xgrammar_over_torch_{what}"] = None if r is None else round(r, 4)
    out["checks"] = result.note or _checks_cell(result)
    return out


def _json_case(result: CaseResult) -> dict[str, Any]:
    c = result.case
    timings = {
        method: {
            "samples_ns": samples,
            **{f"{w}_ns": stat(samples, w) for w in ("min", "p50", "p90", "max", "mean")},
        }
        for method, samples in result.timings.samples.items()
    }
    return {
        "vocab": c.tokens,
        "batch": c.batch,
        "dtype": c.dtype,
        "timings": timings,
        "timing_errors": result.timings.errors,
        "xgrammar_over_torch_p50": ratio(result, "p50"),
        "xgrammar_over_torch_min": ratio(result, "min"),
        "checks": [
            {"layout": ch.layout, "method": ch.method, "status": ch.status, "detail": ch.detail}
            for ch in result.checks
        ],
        "note": result.note,
    }
