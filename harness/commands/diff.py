"""`tokensieve diff`: every engine's masks cross-checked against the reference, the
disagreements triaged (policy or bug), bugs minimized to standalone repros.

Each (spec, vocabulary) cell runs in a forked child with a time and memory budget, so a
hanging or crashing engine costs only that cell; its status is recorded and the run goes
on. Writes REPORTS/RUN/diff.json (machine-readable), diff.html, and
REPORTS/RUN/findings/<id>.py + <id>.md; the main report links diff.html when present.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from harness import corpus, engines, paths
from harness import vocab as vocabularies
from harness.bench.controller import DEFAULT_SETS
from harness.diff.differ import Differ, Disagreement, References, SpecDiff, WalkPlan
from harness.diff.findings import Collector, dump, table_html
from harness.diff.instances import InstanceCounts, check_instances
from harness.diff.minimize import Minimal, minimize
from harness.embed import html_text
from harness.engines.base import Engine
from harness.errors import (
    EngineUnavailable,
    SpecError,
    TokensieveError,
    UnknownName,
    UnsupportedSpec,
)
from harness.figures import fmt_seconds, parse_bytes
from harness.paths import POLICY_LAYOUTS, REFERENCE
from harness.process.isolation import OK, run_isolated
from harness.spec import Spec
from harness.vocab import Vocabulary

DEFAULT_VOCABS = "llama3,tekken"
DEFAULT_ENGINES = "outlines-core,llguidance,xgrammar,tokensdfa,tokensdfa-canonical"
# Bugs minimized per (engine, signature) in one cell; the rest count as occurrences.
MINIMIZE_PER_GROUP = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "diff",
        help="cross-check every engine's masks against the reference; triage, minimize, repro",
        description="Walk each spec's reference states (shortest paths, corpus token "
        "paths, seeded random walks) with every engine in lockstep, compare each full "
        "mask and accepting status with the naive reference and TokensDFA exact, triage "
        "every difference as a declared policy or a bug, and minimize each bug to a "
        "standalone repro script under REPORTS/RUN/findings/.",
    )
    p.add_argument("--vocab", default=DEFAULT_VOCABS, help=f"comma list ({DEFAULT_VOCABS})")
    p.add_argument("--engines", default=DEFAULT_ENGINES, help=f"comma list ({DEFAULT_ENGINES})")
    p.add_argument("--corpus", default=",".join(DEFAULT_SETS), help="comma list of corpus sets")
    p.add_argument("--corpus-dir", help="directory holding MaskBench's *.json files")
    p.add_argument("--limit-specs", type=int, help="at most this many specs per set, evenly spaced")
    p.add_argument("--paths", type=int, default=4, help="corpus token paths per spec (4)")
    p.add_argument("--walks", type=int, default=8, help="random walks per spec (8)")
    p.add_argument("--cover", type=int, default=200, help="reference states reached by BFS (200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per spec and vocab (180)")
    p.add_argument("--memory-limit", default="8G", help="per spec and vocab (8G)")
    p.add_argument(
        "--instances",
        type=int,
        default=8,
        help="labelled valid and invalid instances checked per schema, each (8)",
    )
    p.add_argument("--samples", type=int, default=4, help="completions sampled per schema (4)")
    p.add_argument("--no-minimize", action="store_true", help="skip minimization and repros")
    p.add_argument("--run", default=time.strftime("diff-%Y%m%d-%H%M%S"), help="run name")
    p.add_argument("--reports", default="reports", help="reports directory")
    p.set_defaults(func=run)


@dataclass
class CellOutcome:
    diff: SpecDiff
    minimal: dict[int, Minimal | None] = field(default_factory=dict)  # by disagreement index
    instances: list[InstanceCounts] = field(default_factory=list)


@dataclass(frozen=True)
class InstancePlan:
    valid: tuple[Any, ...]
    invalid: tuple[Any, ...]
    samples: int
    seed: int


def instance_checks(
    spec: Spec,
    vocab: Vocabulary,
    chosen: list[Engine],
    prepared: dict[str, Any],
    plan: InstancePlan,
    reference: Engine | None,
) -> list[InstanceCounts]:
    """Native JSON engines and the reference (the converter's language) on instances."""
    schema = json.loads(spec.text)
    out = []
    judged = [e for e in chosen if e.capabilities.json_schema == "native"]
    judged += [reference] if reference is not None else []
    for e in judged:
        try:
            compiled = e.compile(prepared[e.name], spec)
        except TokensieveError:
            continue  # the mask diff's compile already recorded why
        out.append(
            check_instances(
                e.name,
                compiled,
                schema,
                spec.id,
                vocab,
                plan.valid,
                plan.invalid,
                samples=plan.samples,
                seed=plan.seed,
                layouts=POLICY_LAYOUTS[e.policies.json_whitespace],
            )
        )
    return out


def _compile_all(
    chosen: list[Engine], prepared: dict[str, Any], spec: Spec, skipped: dict[str, str]
) -> dict[str, tuple[Engine, Any]]:
    compiled = {}
    for e in chosen:
        if spec.kind == "json_schema" and e.capabilities.json_schema != "via-regex":
            # its own JSON grammar: a different language than the converted regex
            skipped[e.name] = "native JSON grammar: checked on instances, not masks"
            continue
        try:
            compiled[e.name] = (e, e.compile(prepared[e.name], spec))
        except TokensieveError as exc:
            skipped[e.name] = f"{type(exc).__name__}: {exc}"
    return compiled


def diff_cell(
    spec: Spec,
    regex: str | None,
    vocab: Vocabulary,
    chosen: list[Engine],
    prepared: dict[str, Any],
    plan: WalkPlan,
    do_minimize: bool,
    instances: InstancePlan | None = None,
) -> CellOutcome:
    """Runs in the child: compile, walk, and minimize the first bug of each signature.
    `regex` is None for a schema the converter cannot turn into a regex: there is no
    reference language then, and only the native engines' instance checks run."""
    if regex is None:
        outcome = CellOutcome(SpecDiff(spec.id, vocab.name, ""))
        outcome.diff.skipped = {e.name: "no converted regex: instances only" for e in chosen}
        if instances is not None:
            native = [e for e in chosen if e.capabilities.json_schema == "native"]
            outcome.instances = instance_checks(spec, vocab, native, prepared, instances, None)
        return outcome
    skipped: dict[str, str] = {}
    try:
        refs = References(regex, vocab)
    except ValueError as exc:
        # the reference defines the language; where it has none, nothing can be compared
        message = " ".join(str(exc).split())
        if "unsupported" in message or "not supported" in message:
            raise UnsupportedSpec(REFERENCE, spec.id, message) from exc
        raise SpecError(REFERENCE, spec.id, message) from exc
    compiled = _compile_all(chosen, prepared, spec, skipped)
    result = Differ(spec.id, regex, vocab, compiled, refs).run(plan)
    result.skipped.update(skipped)
    outcome = CellOutcome(result)
    if instances is not None and spec.kind == "json_schema":
        reference = engines.get("naive")
        ref_prepared = {**prepared, "naive": prepared.get("naive") or reference.prepare(vocab)}
        outcome.instances = instance_checks(spec, vocab, chosen, ref_prepared, instances, reference)
    if not do_minimize:
        return outcome
    by_engine = {e.name: e for e in chosen}
    done: dict[tuple[str, str], int] = {}
    order = sorted(
        range(len(result.disagreements)),
        key=lambda i: len(result.disagreements[i].prefix_ids),
    )
    for i in order:
        d = result.disagreements[i]
        if d.verdict != "bug" or d.engine not in by_engine:
            continue
        group = (d.engine, d.rule)
        if done.get(group, 0) >= MINIMIZE_PER_GROUP:
            continue
        done[group] = done.get(group, 0) + 1
        outcome.minimal[i] = minimize(d, by_engine[d.engine], vocab)
    return outcome


def _group_minimal(outcome: CellOutcome) -> list[tuple[Disagreement, Minimal | None]]:
    """Each disagreement with the minimal form of its (engine, signature) group."""
    by_group: dict[tuple[str, str], Minimal | None] = {}
    for i, m in outcome.minimal.items():
        d = outcome.diff.disagreements[i]
        by_group[(d.engine, d.rule)] = m
    return [(d, by_group.get((d.engine, d.rule))) for d in outcome.diff.disagreements]


def spread(items: list[Spec], limit: int | None) -> list[Spec]:
    if limit is None or limit >= len(items):
        return items
    return [items[(i * len(items)) // limit] for i in range(limit)]


def run(args: argparse.Namespace) -> int:
    names = [n for n in args.engines.split(",") if n]
    chosen = [engines.get(n) for n in names]
    for e in chosen:
        ok, why = e.available()
        if not ok:
            raise EngineUnavailable(f"engine {e.name} unavailable: {why}")
    vocab_names = [v for v in args.vocab.split(",") if v]
    for v in vocab_names:
        if v not in vocabularies.names():
            raise UnknownName("vocabulary", v, vocabularies.names())
    set_names = [s for s in args.corpus.split(",") if s]
    specs = [
        s
        for name in set_names
        for s in spread(corpus.load_set(name, args.corpus_dir), args.limit_specs)
    ]
    memory_limit = parse_bytes(args.memory_limit)
    out_dir = Path(args.reports) / args.run
    out_dir.mkdir(parents=True, exist_ok=True)
    collector = Collector()
    cells: list[dict[str, Any]] = []
    started = time.perf_counter()
    for vname in vocab_names:
        vocab = vocabularies.load(vname)
        prepared = {e.name: e.prepare(vocab) for e in chosen}
        for spec in specs:
            cells.append(_one_cell(spec, vocab, chosen, prepared, args, memory_limit, collector))
            _write(out_dir, args, collector, cells, started, final=False)
    if not args.no_minimize:
        print("writing and running repros", flush=True)
        collector.write_repros(out_dir / "findings")
        collector.write_instance_repros(out_dir / "findings")
    _write(out_dir, args, collector, cells, started, final=True)
    _print(collector, cells, out_dir, time.perf_counter() - started)
    return 0


def _one_cell(
    spec: Spec,
    vocab: Vocabulary,
    chosen: list[Engine],
    prepared: dict[str, Any],
    args: argparse.Namespace,
    memory_limit: int,
    collector: Collector,
) -> dict[str, Any]:
    started = time.perf_counter()
    row: dict[str, Any] = {"spec": spec.id, "vocab": vocab.name}
    regex: str | None
    try:
        regex = corpus.schema_to_regex(spec)
    except TokensieveError as exc:
        if spec.kind != "json_schema":
            row.update(status="skipped", detail=str(exc))
            print(f"  {vocab.name} {spec.id}: skipped ({exc})", flush=True)
            return row
        # no reference language, but the native engines still face the instances
        regex = None
        row["detail"] = f"no mask diff: {exc}"
    try:
        found = paths.paths_for(spec, vocab, seed=args.seed, n=args.paths)
        token_paths = [p.ids for p in found if p.exact]
    except TokensieveError as exc:
        # the walks still cover the reference's states; only the corpus paths are missing
        token_paths = []
        row["paths"] = f"no corpus paths: {exc}"
    plan = WalkPlan(
        paths=tuple(tuple(p) for p in token_paths),
        random_walks=args.walks,
        cover_states=args.cover,
        seed=args.seed,
    )
    instances = None
    if spec.kind == "json_schema":
        entry = corpus.get_entry(spec.id, args.corpus_dir)
        instances = InstancePlan(
            valid=entry.valid[: args.instances],
            invalid=entry.invalid[: args.instances],
            samples=args.samples,
            seed=args.seed,
        )
    work = partial(
        diff_cell, spec, regex, vocab, chosen, prepared, plan, not args.no_minimize, instances
    )
    status, value = run_isolated(work, args.timeout, memory_limit)
    row["seconds"] = round(time.perf_counter() - started, 2)
    if status != OK:
        if status == "error" and "unsupported spec" in str(value):
            status = "unsupported"
        row.update(status=status, detail=str(value))
        print(f"  {vocab.name} {spec.id}: {status} {value}", flush=True)
        return row
    outcome: CellOutcome = value
    for d, m in _group_minimal(outcome):
        collector.add(d, m, vocab.tokens)
    for engine, n in outcome.diff.states.items():
        collector.states[(engine, vocab.name)] += n
    for counts in outcome.instances:
        collector.add_instances(counts, json.loads(spec.text))
    bugs = sum(1 for d in outcome.diff.disagreements if d.verdict == "bug")
    row.update(
        status="ok",
        states=outcome.diff.states,
        disagreements=len(outcome.diff.disagreements),
        bugs=bugs,
        skipped=outcome.diff.skipped,
    )
    print(
        f"  {vocab.name} {spec.id}: {len(outcome.diff.disagreements)} disagreeing states, "
        f"{bugs} bugs ({row['seconds']}s)",
        flush=True,
    )
    return row


def _write(
    out_dir: Path,
    args: argparse.Namespace,
    collector: Collector,
    cells: list[dict[str, Any]],
    started: float,
    final: bool,
) -> None:
    """diff.json after every cell (so an interrupted run keeps what it finished), and the
    HTML page at the end."""
    findings = [f.row() for f in collector.findings.values()]
    summary = collector.summary()
    dump(
        out_dir / "diff.json",
        {
            "options": {k: v for k, v in vars(args).items() if k != "func"},
            "complete": final,
            "seconds": round(time.perf_counter() - started, 1),
            "summary": summary,
            "policy_counts": [
                {"engine": e, "rule": r, "states": n}
                for (e, r), n in sorted(collector.policy_counts.items())
            ],
            "findings": findings,
            "instances": collector.instance_summary(),
            "instance_failures": [f.row() for f in collector.instance_failures],
            "instance_repros": collector.instance_repros,
            "cells": cells,
        },
    )
    if not final:
        return
    shown = [
        {
            "id": f["id"],
            "engine": f"{f['engine']} {f['version']}",
            "signature": f["signature"],
            "occurrences": f["occurrences"],
            "tokens": f["minimal_tokens"],
            "prefix": f["minimal_prefix"],
            "reproduces": f["reproduces"],
            "repro": f"findings/{f['repro']}" if f["repro"] else "",
            "explanation": f["explanation"],
        }
        for f in findings
    ]
    failed = [c for c in cells if c.get("status") != "ok"]
    run, vocabs, sets = html_text(args.run), html_text(args.vocab), html_text(args.corpus)
    page = f"""<!doctype html><meta charset="utf-8"><title>tokensieve diff {run}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px;vertical-align:top}}</style>
<h1>Differential test: {run}</h1>
<p>Vocabularies {vocabs}; corpus {sets}. Every engine's mask and accepting
status compared with the naive reference at each state reached; a state counts once per
engine. A difference is a <b>policy</b> when a declared rule of the engine explains all
of it, otherwise a <b>bug</b>; each bug is minimized to the fewest tokens and shortest
prefix that still show it, and its repro script (engine package and numpy only) was run on
its own: <i>reproduces</i> says whether it did.</p>
<h2>Per engine</h2>{table_html(summary)}
<h2>Findings</h2>{table_html(shown, link="repro")}
<h2>JSON schemas on instances (MaskBench's invalidation errors)</h2>
<p>Engines with their own JSON grammar, and the reference over outlines-core's converted
regex ("naive": its failures are the converter's). valid/invalid: labelled instances
checked (compact JSON, real encoder); samples: completions drawn from the engine's own
masks; disputed: labelled invalid but valid per jsonschema (not counted); policy:
json-escapes.</p>{table_html(collector.instance_summary())}
<h3>Repros (one per engine, kind and schema; text shrunk on a byte-level vocabulary)</h3>
{table_html(collector.instance_repros, link="repro")}
<h3>Failures</h3>{table_html([f.row() for f in collector.instance_failures[:300]])}
<h2>Cells not compared</h2>{table_html(failed)}
"""
    (out_dir / "diff.html").write_text(page, encoding="utf-8")


def _print(
    collector: Collector, cells: list[dict[str, Any]], out_dir: Path, elapsed: float
) -> None:
    print(f"\n{len(cells)} cells in {fmt_seconds(elapsed)}")
    print(f"{'engine':<20} {'states':>8} {'policy':>8} {'bug':>6} {'findings':>9}")
    for r in collector.summary():
        print(
            f"{r['engine']:<20} {r['states']:>8} {r['policy_states']:>8} {r['bug_states']:>6} "
            f"{r['findings']:>9}"
        )
    for f in collector.findings.values():
        mark = {True: "reproduces", False: "DOES NOT REPRODUCE", None: "no repro"}[f.reproduces]
        print(f"  {f.id}: {len(f.occurrences)} occurrences, {mark}")
    print(f"report: {out_dir / 'diff.html'}  data: {out_dir / 'diff.json'}")
