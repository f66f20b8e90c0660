"""First-visit mask latency of tokensdfa-lazy against llguidance's mask, state by state.

    .venv/bin/python -m benchmarks.lazy_first_visit [--specs 64] [--vocab llama3]
        [--corpus maskbench] [--paths 2]

For each of `--specs` schemas (evenly spaced over the set), both engines compile the
schema and walk the same token paths (the harness's corpus paths, which the reference
accepts). At each step, the lazy index's mask is timed on the state's first visit (a
state seen earlier on another path is skipped, as its mask is memoized), and
llguidance's mask at the same prefix right after it, so load hits both sides alike. It
prints the p50, p90, p99 and max over those states of both and of their per-state
ratio, and the revisit cost of the same states (lazy, memoized) against one bitset copy.
It is a benchmark, not a test (no `time_` names; asv does not collect it).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from harness import corpora, engines
from harness import vocab as vocabularies
from harness.corpora import paths
from harness.errors import TokensieveError
from harness.figures import percentile
from harness.language import converter


def _walk(lazy: Any, llg: Any, ids: list[int], words: int, seen: set[int]) -> list[tuple]:
    """(lazy first-visit ns, llguidance ns, lazy revisit ns, copy ns) per new state."""
    out = np.zeros(words, dtype=np.int32)
    src, dst = np.ones(words, dtype=np.int32), np.zeros(words, dtype=np.int32)
    clock = time.perf_counter_ns
    found = []
    for token in [*ids, None]:
        state = lazy.state
        if state not in seen:
            seen.add(state)
            t0 = clock()
            lazy.fill_mask(out)
            t1 = clock()
            llg.fill_mask(out)
            t2 = clock()
            lazy.fill_mask(out)
            t3 = clock()
            np.copyto(dst, src)
            t4 = clock()
            found.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3))
        if token is None or not (lazy.advance(token) and llg.advance(token)):
            break
    return found


def measure(vocab_name: str, corpus: str, n_specs: int, n_paths: int) -> list[tuple]:
    vocab = vocabularies.load(vocab_name)
    lazy_e, llg_e = engines.get("tokensdfa-lazy"), engines.get("llguidance")
    prep = {e.name: e.prepare(vocab) for e in (lazy_e, llg_e)}
    rows: list[tuple] = []
    for spec in corpora.spread(corpora.load_set(corpus), n_specs):
        spec = converter.with_regex(spec)
        try:
            lazy_c = lazy_e.compile(prep[lazy_e.name], spec)
            llg_c = llg_e.compile(prep[llg_e.name], spec)
        except TokensieveError:
            continue  # either engine refuses the schema: no common states
        seen: set[int] = set()
        for path in paths.paths_for(spec, vocab, n=n_paths):
            rows += _walk(lazy_c.matcher(), llg_c.matcher(), list(path.ids), vocab.mask_words, seen)
    return rows


def _line(name: str, values: list[float], unit: str) -> str:
    qs = [percentile(values, q) for q in (0.5, 0.9, 0.99)]
    figures = "  ".join(
        f"p{int(q * 100)} {v:10.2f}" for q, v in zip((0.5, 0.9, 0.99), qs, strict=True)
    )
    return f"{name:<34} {figures}  max {max(values):10.2f} {unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=64)
    parser.add_argument("--vocab", default="llama3")
    parser.add_argument("--corpus", default="maskbench")
    parser.add_argument("--paths", type=int, default=2)
    args = parser.parse_args()
    rows = measure(args.vocab, args.corpus, args.specs, args.paths)
    if not rows:
        raise SystemExit("no state both engines reached")
    print(f"{len(rows)} states first visited ({args.corpus}, {args.vocab})")
    print(_line("tokensdfa-lazy first visit (µs)", [r[0] / 1e3 for r in rows], ""))
    print(_line("llguidance mask (µs)", [r[1] / 1e3 for r in rows], ""))
    print(_line("first visit / llguidance", [r[0] / max(1, r[1]) for r in rows], "x"))
    print(_line("tokensdfa-lazy revisit / copy", [r[2] / max(1, r[3]) for r in rows], "x"))


if __name__ == "__main__":
    main()
