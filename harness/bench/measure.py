"""What one bench cell measures, in the worker process that runs it.

With a fresh matcher per token path:
- compile: `engine.compile`; a fast one (under 20 ms) is repeated while the repeats
  stay under 100 ms in all, at most 5 samples, and the median is reported (one sample of
  a 2 ms compile is mostly scheduler noise on a shared machine); the first sample and all
  samples are kept. The spec's last compilation is the one walked;
- time to first mask (TTFM): compile + creating the first matcher + its first fill (plus
  the schema's conversion to a regex for the engines that need one, see `convert_ns`);
- per step: exactly one `fill_mask` (an engine that caches masks per state would look
  fast on a second fill), then `advance` with the path's token, both timed; after the
  last token one more fill, where EOS must be allowed. The garbage collector is paused
  during a walk so that its pauses do not land in one engine's numbers;
- at most `max_steps` steps per path, and no new step once `walk_budget_s` has passed
  since the cell started (the cell is then marked `truncated`), so one very slow engine
  produces a partial measurement instead of a timeout;
- memory: growth of the worker's resident set over compile and walk (freed heap pages
  are handed back to the OS first, so earlier cells' garbage does not hide it), and the
  engine's own figure for the compiled index where it has one;
- the number of states where the engine knows it, asked separately after the result
  (`count_states`): some engines build their whole transition table to count (seconds,
  and gigabytes on a large schema), and a worker dying there must not cost the timings.
"""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.engines.base import Compiled, Engine, is_allowed
from harness.errors import EngineError, SpecError, UnsupportedSpec, WorkBudget
from harness.figures import clock, summarize
from harness.process.memory import rss
from harness.results.metrics import CellMetrics, CellResult
from harness.results.status import Status
from harness.spec import Spec
from harness.vocab import Vocabulary

REPEAT_BELOW_NS = 20_000_000
REPEAT_BUDGET_NS = 100_000_000
MAX_COMPILE_SAMPLES = 5


def walk_paths(
    compiled: Compiled,
    voc: Vocabulary,
    paths: Sequence[Sequence[int]],
    max_steps: int,
    deadline_ns: int,
) -> dict[str, Any]:
    """Walk each path with a fresh matcher, timing one fill and one advance per step.

    With no path at all, the initial state's mask is filled once, so time to first mask
    is still measured."""
    mask = np.zeros(voc.mask_words, dtype=np.int32)
    fills: list[int] = []
    advances: list[int] = []
    first_matcher_ns = first_fill_ns = None
    refused = 0
    why = ""
    note: str | None = None
    truncated = False
    walked = 0
    for index, path in enumerate(paths or [()]):
        if index and clock() > deadline_ns:
            truncated = True
            break
        started = clock()
        matcher = compiled.matcher()
        matcher_ns = clock() - started
        walked += 1
        steps = min(len(path), max_steps)
        gc.disable()
        try:
            ok = True
            for step in range(steps):
                token = path[step]
                started = clock()
                matcher.fill_mask(mask)
                fills.append(clock() - started)
                if first_fill_ns is None:
                    first_matcher_ns, first_fill_ns = matcher_ns, fills[-1]
                if not is_allowed(mask, token):
                    ok, why = False, f"mask refuses token {token} at step {step}"
                    break
                started = clock()
                accepted = matcher.advance(token)
                advances.append(clock() - started)
                if not accepted:
                    ok, why = False, f"advance refuses token {token} at step {step}"
                    break
                if clock() > deadline_ns:
                    truncated = True
                    break
            if ok and not truncated and steps == len(path):
                # The step after the last token, where EOS must be allowed.
                started = clock()
                matcher.fill_mask(mask)
                fills.append(clock() - started)
                if first_fill_ns is None:
                    first_matcher_ns, first_fill_ns = matcher_ns, fills[-1]
                if path and not (matcher.is_accepting() and is_allowed(mask, voc.eos_id)):
                    ok, why = False, f"does not accept after its {len(path)} tokens"
        finally:
            gc.enable()
        if not ok:
            refused += 1
            note = note or f"path {index} {why}"
        if truncated:
            break
    return {
        "matcher_ns": first_matcher_ns,
        "first_fill_ns": first_fill_ns,
        "fill_ns": fills,
        "advance_ns": advances,
        "paths": walked,
        "refused_paths": refused,
        "note": note,
        "truncated": truncated,
    }


def _load_malloc_trim() -> Any:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_MALLOC_TRIM = _load_malloc_trim()


def settle() -> None:
    """Collect garbage and hand freed heap pages back to the OS (glibc's malloc_trim), so
    that resident-set growth over the next cell is that cell's, not hidden by reuse of
    what earlier cells freed."""
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def measure_cell(
    engine: Engine,
    prepared: Any,
    voc: Vocabulary,
    spec: Spec,
    paths: Sequence[Sequence[int]],
    max_steps: int,
    walk_budget_s: float,
) -> tuple[CellResult, Compiled | None]:
    """The result of one cell and the compiled spec (None when it failed); engine errors
    become statuses, told apart by the exception's type."""
    settle()
    rss_before = rss()
    started = clock()
    try:
        compiled, samples = _compile(engine, prepared, spec, started)
        compile_ns = sorted(samples)[(len(samples) - 1) // 2]
        walk = walk_paths(compiled, voc, paths, max_steps, started + int(walk_budget_s * 1e9))
        rss_after = rss()
        engine_memory = compiled.memory_bytes()
    except UnsupportedSpec as exc:
        return CellResult(Status.UNSUPPORTED, exc.message), None
    except WorkBudget as exc:
        return CellResult(Status.TIMEOUT, str(exc)), None
    except (SpecError, EngineError) as exc:
        return CellResult(Status.ERROR, str(exc)), None
    except MemoryError:
        return CellResult(Status.OOM, "MemoryError raised in the worker"), None
    except Exception as exc:  # an adapter bug still costs only this cell
        return CellResult(Status.ERROR, f"{type(exc).__name__}: {exc}"), None
    ttfm = None
    if walk["first_fill_ns"] is not None:
        ttfm = compile_ns + walk["matcher_ns"] + walk["first_fill_ns"]
    metrics = CellMetrics(
        compile_ns=compile_ns,
        compile_first_ns=samples[0],
        compile_samples_ns=samples,
        ttfm_ns=ttfm,
        matcher_ns=walk["matcher_ns"],
        first_fill_ns=walk["first_fill_ns"],
        fill_ns=walk["fill_ns"],
        advance_ns=walk["advance_ns"],
        fill=summarize(walk["fill_ns"]),
        advance=summarize(walk["advance_ns"]),
        paths=walk["paths"],
        refused_paths=walk["refused_paths"],
        note=walk["note"],
        truncated=walk["truncated"],
        rss_growth_bytes=rss_after - rss_before,
        engine_memory_bytes=engine_memory,
        vocab_size=voc.size,
    )
    return CellResult(Status.OK, walk["note"], metrics), compiled


def _compile(engine: Engine, prepared: Any, spec: Spec, started: int) -> tuple[Compiled, list[int]]:
    """The compiled spec and the compile samples (see the module doc)."""
    compiled = engine.compile(prepared, spec)
    samples = [clock() - started]
    while (
        samples[0] < REPEAT_BELOW_NS
        and len(samples) < MAX_COMPILE_SAMPLES
        and sum(samples) < REPEAT_BUDGET_NS
    ):
        del compiled
        again = clock()
        compiled = engine.compile(prepared, spec)
        samples.append(clock() - again)
    return compiled, samples


def count_states(compiled: Compiled) -> dict[str, Any]:
    """{"num_states", "states_ns"}, or {"states_error"} when the engine fails to count."""
    started = clock()
    try:
        states = compiled.num_states()
    except MemoryError:
        return {"states_error": "MemoryError"}
    except Exception as exc:
        return {"states_error": f"{type(exc).__name__}: {exc}"}
    return {"num_states": states, "states_ns": clock() - started}
