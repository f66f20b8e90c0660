"""The tables a jump-forward run reports: per (set, engine, vocabulary) shares of forced
tokens and decode steps saved, and on MaskBench (llama3) the forced share per split beside
the fast-forward share MaskBench published."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

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


def _split_of(spec_id: str) -> str:
    name = spec_id.split("/", 1)[1]
    return name.split("---")[0] if "---" in name else name.rsplit("_", 1)[0]


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
