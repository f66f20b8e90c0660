"""How a check is shown: a plain table, Markdown for a pull request, JSON for machines, and
a JUnit XML report (one test case per spec x engine) that CI dashboards read.

The JUnit file follows the common schema CI tools accept (`testsuites` > `testsuite` >
`testcase`, with `failure` or `skipped`); every string in it is data, written through
ElementTree, which escapes it.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.bench.batch_summary import BatchRow
from harness.check.model import CheckResult, EngineResult, SpecResult
from harness.figures import fmt_bytes, fmt_ns
from harness.report.text import text_table

HEADER = (
    "engine",
    "outcome",
    "compile",
    "TTFM",
    "mask p50",
    "mask p99",
    "memory",
    "states",
    "policy",
    "bug",
    "instances",
    "repro",
)


def row(e: EngineResult) -> list[str]:
    inst = e.instances
    instances = (
        "-"
        if inst is None
        else (f"{inst.failures} wrong of {inst.valid + inst.invalid + inst.samples}")
    )
    repro = next((f.repro for f in e.findings if f.repro), None)
    memory = (
        "-"
        if e.memory_bytes is None
        else fmt_bytes(e.memory_bytes) + (" rss" if e.memory_kind == "rss" else "")
    )
    return [
        e.engine,
        e.outcome,
        fmt_ns(e.compile_ns),
        fmt_ns(e.ttfm_ns),
        fmt_ns(e.mask_p50_ns),
        fmt_ns(e.mask_p99_ns),
        memory,
        str(e.states) if e.states else "-",
        str(e.policy_states),
        str(e.bug_states),
        instances,
        repro or "-",
    ]


def _why(e: EngineResult) -> str | None:
    if e.status != "ok":
        return e.message
    if e.findings:
        return f"{e.findings[0].signature}: {e.findings[0].explanation}"
    if e.instances and e.instances.failures:
        return f"{e.instances.failures} instance check(s) failed"
    return None


def table(result: CheckResult) -> str:
    parts = [
        f"vocabulary {result.vocab}; run {result.run} in {result.reports_dir} (states: "
        "masks compared with the reference, of them policy and bug; on a schema, engines "
        "with their own JSON grammar are compared in the JSON dialect they declare, else "
        "checked on instances only)"
    ]
    for spec in result.specs:
        parts.append(f"\n{spec.spec_id} ({spec.kind}, {spec.source})")
        parts.append(text_table(HEADER, [row(e) for e in spec.engines], left=2))
        parts += [f"  {e.engine}: {why}" for e in spec.engines if (why := _why(e))]
        parts.append(spec.verdict)
    parts += [f"\nengine {name} unavailable: {why}" for name, why in result.unavailable.items()]
    if result.batches:
        parts.append("\nbatch steps (masks of every sequence, then one token each)")
        parts.append(text_table(BATCH_HEADER, [batch_row(r) for r in result.batches], left=1))
        parts.append(result.batch_verdict())
    return "\n".join(parts)


BATCH_HEADER = ["engine", "threads", "batch", "status", "step p50", "step p99", "step max"]


def batch_row(r: BatchRow) -> list[str]:
    return [
        r.engine,
        str(r.threads),
        str(r.size),
        r.status,
        fmt_ns(r.p50_ns),
        fmt_ns(r.p99_ns),
        fmt_ns(r.max_ns),
    ]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(result: CheckResult) -> str:
    lines = [f"### tokensieve check: vocabulary `{result.vocab}`", ""]
    for spec in result.specs:
        lines += [f"**{_md_cell(spec.spec_id)}** ({spec.kind})", ""]
        lines.append("| " + " | ".join(HEADER) + " |")
        lines.append("|" + "---|" * len(HEADER))
        lines += ["| " + " | ".join(_md_cell(c) for c in row(e)) + " |" for e in spec.engines]
        lines += ["", f"Verdict: {_md_cell(spec.verdict)}", ""]
    lines += [
        f"Engine {_md_cell(n)} unavailable: {_md_cell(w)}" for n, w in result.unavailable.items()
    ]
    if result.batches:
        lines += ["", "**Batch steps**", "", "| " + " | ".join(BATCH_HEADER) + " |"]
        lines.append("|" + "---|" * len(BATCH_HEADER))
        lines += ["| " + " | ".join(batch_row(r)) + " |" for r in result.batches]
        lines += ["", _md_cell(result.batch_verdict())]
    return "\n".join(lines)


def as_json(result: CheckResult) -> str:
    return json.dumps(result.to_json(), indent=1)


def junit(result: CheckResult, fail_on: tuple[str, ...], path: Path) -> None:
    """Write the JUnit XML report: a failure for each outcome in `fail_on`, skipped for
    unsupported specs."""
    suites = ET.Element("testsuites", name="tokensieve check")
    cases = [(s, e) for s in result.specs for e in s.engines]
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"tokensieve check {result.vocab}",
        tests=str(len(cases)),
        failures=str(sum(1 for _, e in cases if e.outcome in fail_on)),
        skipped=str(sum(1 for _, e in cases if e.outcome == "unsupported")),
    )
    for spec, e in cases:
        _case(suite, spec, e, fail_on)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def _case(suite: ET.Element, spec: SpecResult, e: EngineResult, fail_on: tuple[str, ...]) -> None:
    seconds = 0.0 if e.ttfm_ns is None else e.ttfm_ns / 1e9
    case = ET.SubElement(
        suite, "testcase", classname=spec.spec_id, name=e.engine, time=f"{seconds:.6f}"
    )
    why = _why(e) or ""
    if e.outcome in fail_on:
        failure = ET.SubElement(
            case, "failure", message=f"{e.outcome}: {why}"[:500], type=e.outcome
        )
        failure.text = why
    elif e.outcome == "unsupported":
        ET.SubElement(case, "skipped", message=why[:500])
