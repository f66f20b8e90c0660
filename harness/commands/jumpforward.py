"""`tokensieve jumpforward`: forced-token shares and jump-forward steps saved, per corpus
set, engine and vocabulary, with forced texts compared across engines state by state.

Writes `reports/RUN/jumpforward.json`, `jumpforward.csv` and `jumpforward.html`; the main
report links them when present. On MaskBench it puts the forced-token share per split
beside MaskBench's published fast-forward share (Llama-3 tokenizer, compact JSON).
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from harness import corpus, engines, paths
from harness import vocab as vocabularies
from harness.embed import csv_cell
from harness.engines.base import Engine
from harness.errors import TokensieveError
from harness.jumpforward.analysis import ForcedDisagreement, analyze_path, compare_forced
from harness.paths import TokenPath
from harness.process.isolation import run_isolated
from harness.spec import Spec
from harness.vocab import Vocabulary

DEFAULT_ENGINES = "tokensdfa,llguidance,xgrammar"
DEFAULT_SETS = "outlines-bench,llm-formats,literal-heavy,handwritten"

# Published by MaskBench (shared/corpora/README.md): share of tokens of valid instances
# the grammar forces, Llama-3 tokenizer, (regular JSON, compact JSON), in percent.
MASKBENCH_FF_SHARE: dict[str, tuple[int, int]] = {
    "Github_trivial": (3, 5),
    "Github_easy": (11, 14),
    "Github_medium": (11, 13),
    "Github_hard": (16, 19),
    "Github_ultra": (19, 21),
    "Glaiveai2K": (21, 25),
    "Kubernetes": (9, 10),
    "Snowplow": (9, 11),
    "WashingtonPost": (12, 14),
    "MCPspec": (20, 29),
    "JsonSchemaStore": (7, 7),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "jumpforward", help="forced-token share and jump-forward steps saved per engine"
    )
    p.add_argument("--vocab", default="llama3", help="comma list (default llama3)")
    p.add_argument("--engines", default=DEFAULT_ENGINES, help=f"default {DEFAULT_ENGINES}")
    p.add_argument("--corpus", default=DEFAULT_SETS, help=f"comma list of sets ({DEFAULT_SETS})")
    p.add_argument("--corpus-dir", help="directory holding MaskBench's *.json files")
    p.add_argument("--paths", type=int, default=3, help="token paths per spec (default 3)")
    p.add_argument("--limit-specs", type=int, help="at most this many specs per set, evenly spaced")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per engine and spec (120)")
    p.add_argument("--run", default=time.strftime("jumpforward-%Y%m%d-%H%M%S"))
    p.add_argument("--reports", default="reports", help="reports directory")
    p.set_defaults(func=run)


def _split_of(spec_id: str) -> str:
    name = spec_id.split("/", 1)[1]
    return name.split("---")[0] if "---" in name else name.rsplit("_", 1)[0]


@dataclass
class Cell:
    set_name: str
    spec: Spec
    vocab: Vocabulary
    prepared: dict[str, Any]
    token_paths: list[TokenPath]


def measure(cell: Cell, engine: Engine) -> list[dict[str, Any]]:
    """Jump-forward figures of every path of the cell's spec for one engine."""
    compiled = engine.compile(cell.prepared[engine.name], cell.spec)
    found = []
    for path in cell.token_paths:
        r = analyze_path(engine.name, compiled, cell.vocab, cell.spec.id, path.text, path.ids)
        if r is not None:
            found.append({"set": cell.set_name, **r.row()})
    return found


def cross_check(cell: Cell, chosen: list[Engine]) -> tuple[int, list[ForcedDisagreement]]:
    """Forced texts of every engine that exposes them, compared state by state."""
    reference = paths.reference_index(cell.spec, cell.vocab)
    compiled = {}
    for e in chosen:
        try:
            compiled[e.name] = e.compile(cell.prepared[e.name], cell.spec)
        except TokensieveError:
            continue
    n, found = 0, []
    for path in cell.token_paths:
        with_text = {
            name: c.matcher()
            for name, c in compiled.items()
            if c.matcher().forced_text() is not None
        }
        if len(with_text) > 1:
            k, f = compare_forced(with_text, reference, cell.vocab, cell.spec.id, path.ids)
            n += k
            found.extend(f)
    if cell.spec.kind == "json_schema":
        # the reference walks the converted regex; engines that compile the schema
        # themselves face the schema's own language, so only relative verdicts hold
        native = {e.name for e in chosen if e.capabilities.json_schema == "native"}
        for d in found:
            for name in native & set(d.verdicts):
                if d.verdicts[name] == "overreach":
                    d.verdicts[name] = "native-json-language"
    return n, found


def spread(items: list[Spec], limit: int | None) -> list[Spec]:
    """At most `limit` items, evenly spaced over the list (so every split is sampled)."""
    if limit is None or limit >= len(items):
        return items
    return [items[(i * len(items)) // limit] for i in range(limit)]


def _in_child(timeout: float, work: Callable[[], Any]) -> tuple[str, Any]:
    """Run `work` in a forked child (which inherits the prepared vocabularies); a hang or a
    crash costs only this cell."""
    return run_isolated(work, timeout)


def run(args: argparse.Namespace) -> int:
    names = [n for n in args.engines.split(",") if n]
    chosen = [engines.get(n) for n in names]
    out_dir = Path(args.reports) / args.run
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    disagreements: list[ForcedDisagreement] = []
    states_compared = 0
    skipped: list[str] = []
    started = time.perf_counter()
    for vname in args.vocab.split(","):
        vocab = vocabularies.load(vname)
        prepared = {e.name: e.prepare(vocab) for e in chosen}
        for set_name in args.corpus.split(","):
            specs = spread(corpus.load_set(set_name, args.corpus_dir), args.limit_specs)
            for spec in specs:
                try:
                    token_paths = [p for p in paths.paths_for(spec, vocab, n=args.paths) if p.exact]
                except TokensieveError as exc:
                    skipped.append(f"{spec.id}: {exc}")
                    continue

                cell = Cell(set_name, spec, vocab, prepared, token_paths)
                for e in chosen:
                    status, value = _in_child(args.timeout, partial(measure, cell, e))
                    if status == "ok":
                        rows.extend(value)
                    else:
                        skipped.append(f"{e.name} {vname} {spec.id}: {status} {value or ''}")
                status, value = _in_child(args.timeout, partial(cross_check, cell, chosen))
                if status == "ok":
                    states_compared += value[0]
                    disagreements.extend(value[1])
                else:
                    skipped.append(f"cross-check {vname} {spec.id}: {status} {value or ''}")
    elapsed = time.perf_counter() - started
    summary = summarize(rows)
    maskbench = maskbench_table(rows)
    _write(out_dir, rows, summary, maskbench, disagreements, states_compared, skipped, elapsed)
    _print(summary, maskbench, disagreements, states_compared, elapsed, out_dir)
    return 0


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["set"], r["engine"], r["vocab"])].append(r)
    out = []
    for (set_name, engine, vocab), rs in sorted(groups.items()):
        tokens = sum(r["tokens"] for r in rs)
        plain = sum(r["steps_plain"] for r in rs)
        jumps = sum(r["jumps_naive"] for r in rs)
        out.append(
            {
                "set": set_name,
                "engine": engine,
                "vocab": vocab,
                "paths": len(rs),
                "tokens": tokens,
                "forced_single_pct": 100 * sum(r["forced_single"] for r in rs) / max(tokens, 1),
                "forced_text_pct": 100 * sum(r["forced_text"] for r in rs) / max(tokens, 1),
                "saved_naive_pct": 100 * sum(r["saved_naive"] for r in rs) / max(plain, 1),
                "saved_retok_pct": 100 * sum(r["saved_retok"] for r in rs) / max(plain, 1),
                "jumps": jumps,
                "boundary_differs_pct": 100
                * sum(r["boundary_differs"] for r in rs)
                / max(jumps, 1),
                "notes": sum(1 for r in rs if r["note"]),
            }
        )
    return out


def maskbench_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    per: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["set"] == "maskbench" and r["vocab"] == "llama3":
            per[(_split_of(r["spec_id"]), r["engine"])].append(r)
    out = []
    for (split, engine), rs in sorted(per.items()):
        tokens = sum(r["tokens"] for r in rs)
        published = MASKBENCH_FF_SHARE.get(split)
        out.append(
            {
                "split": split,
                "engine": engine,
                "paths": len(rs),
                "forced_text_pct": 100 * sum(r["forced_text"] for r in rs) / max(tokens, 1),
                "forced_single_pct": 100 * sum(r["forced_single"] for r in rs) / max(tokens, 1),
                "published_compact_pct": published[1] if published else None,
                "published_regular_pct": published[0] if published else None,
            }
        )
    return out


def _table_html(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    head = "".join(f"<th>{html.escape(k)}</th>" for k in rows[0])

    def cell(v: Any) -> str:
        return f"{v:.1f}" if isinstance(v, float) else html.escape("" if v is None else str(v))

    body = "".join(
        "<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r.values()) + "</tr>" for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _write(
    out_dir: Path,
    rows: list[dict[str, Any]],
    summary: list[dict[str, Any]],
    maskbench: list[dict[str, Any]],
    disagreements: list[ForcedDisagreement],
    states_compared: int,
    skipped: list[str],
    elapsed: float,
) -> None:
    dis = [vars(d) for d in disagreements]
    (out_dir / "jumpforward.json").write_text(
        json.dumps(
            {
                "summary": summary,
                "maskbench": maskbench,
                "paths": rows,
                "forced_text_disagreements": dis,
                "states_compared": states_compared,
                "skipped": skipped,
                "seconds": elapsed,
            },
            indent=1,
        )
    )
    if rows:
        with open(out_dir / "jumpforward.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows({k: csv_cell(v) for k, v in r.items()} for r in rows)
    verdict_rows = [
        {
            "spec": d.spec_id,
            "vocab": d.vocab,
            "step": d.step,
            "prefix": d.prefix[-60:],
            **{f"{n}": f"{d.forced[n]!r} ({d.verdicts[n]})" for n in d.forced},
        }
        for d in disagreements[:200]
    ]
    page = f"""<!doctype html><meta charset="utf-8"><title>tokensieve jump-forward</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px}}</style>
<h1>Jump-forward</h1>
<p>forced_single: share of tokens that were the only token allowed. forced_text: share of
tokens lying inside the text the grammar forces. saved_*: decode steps saved by
jump-forward against decoding the canonical tokenization token by token, appending the
forced text's tokens (naive) or re-tokenizing the output after each jump (retok).
boundary_differs: jumps whose two token sequences differ.</p>
<h2>Per set, engine and vocabulary</h2>{_table_html(summary)}
<h2>MaskBench (llama3): ours beside the published fast-forward share</h2>{_table_html(maskbench)}
<h2>Forced text compared across engines</h2>
<p>{states_compared} states compared, {len(disagreements)} differing.</p>{_table_html(verdict_rows)}
<h2>Skipped</h2><pre>{html.escape(chr(10).join(skipped[:200]))}</pre>
"""
    (out_dir / "jumpforward.html").write_text(page, encoding="utf-8")


def _print(
    summary: list[dict[str, Any]],
    maskbench: list[dict[str, Any]],
    disagreements: list[ForcedDisagreement],
    states_compared: int,
    elapsed: float,
    out_dir: Path,
) -> None:
    cols = (
        "set",
        "engine",
        "vocab",
        "paths",
        "forced_single_pct",
        "forced_text_pct",
        "saved_naive_pct",
        "saved_retok_pct",
        "boundary_differs_pct",
    )
    print("  ".join(f"{c:>14}" for c in cols))
    for r in summary:
        print(
            "  ".join(
                f"{r[c]:>14.1f}" if isinstance(r[c], float) else f"{r[c]!s:>14}" for c in cols
            )
        )
    for r in maskbench:
        print(
            f"maskbench {r['split']:>16} {r['engine']:>12}: "
            f"forced_text {r['forced_text_pct']:.1f}% "
            f"(published compact {r['published_compact_pct']}%)"
        )
    verdicts: dict[str, int] = defaultdict(int)
    for d in disagreements:
        for name, v in d.verdicts.items():
            verdicts[f"{name}:{v}"] += 1
    print(
        f"forced text: {states_compared} states compared, {len(disagreements)} differ: "
        + ", ".join(f"{k}={v}" for k, v in sorted(verdicts.items()) if not k.endswith(":agree"))
    )
    print(f"{elapsed:.0f} s; wrote {out_dir}/jumpforward.html")
