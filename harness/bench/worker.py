"""The measuring side of the runner: `python -m harness.bench.worker`, one process per
(engine, vocabulary) batch of cells, started and watched by `harness.bench.controller`.

Protocol: JSON lines. The controller writes a header line on stdin, `{"engine", "vocab",
"walk_budget_s"}`; the worker loads the vocabulary, prepares it (timed, reported once as
`{"event": "ready", ...}`), then answers each `{"spec", "paths", "max_steps"}` line with
one `{"event": "result", "status", "message", "metrics"}` line, until stdin closes. An
engine that cannot be built or prepared is reported once as `{"event": "fatal", ...}`.

Replies go to a private duplicate of the original stdout; file descriptor 1 is pointed at
stderr (a file the controller reads the tail of after a crash), so an engine printing to
stdout cannot corrupt the protocol. The worker ignores SIGINT (Ctrl-C belongs to the
controller, which records nothing half-measured) and asks Linux to kill it when the
controller dies, so a killed controller leaves no orphan measuring on.

What one cell measures, with a fresh matcher per token path:
- compile: `engine.compile`; a fast one (under 20 ms) is repeated while the repeats
  stay under 100 ms in all, at most 5 samples, and the median is reported (one sample of
  a 2 ms compile is mostly scheduler noise on a shared machine); the first sample and all
  samples are kept. The spec's last compilation is the one walked;
- time to first mask (TTFM): compile + creating the first matcher + its first fill;
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
- the number of states where the engine knows it, asked after the result has been sent
  (`{"event": "states", ...}`): some engines build their whole transition table to count
  (seconds, and gigabytes on a large schema), and a worker dying there must not cost the
  timings already measured.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from harness import engines
from harness import vocab as vocab_mod
from harness.engines import EngineError
from harness.engines.base import Compiled, Engine
from harness.errors import SpecError, UnknownName, UnsupportedSpec
from harness.figures import clock, rss, summarize
from harness.spec import Spec
from harness.vocab import Vocabulary

# Extra engines for tests: "name=module:Class,name2=module:Class2". Read by the runner
# (to accept the names) and by the worker (to build them); the registry never sees them.
EXTRA_ENGINES_ENV = "TOKENSIEVE_EXTRA_ENGINES"



# --- names -------------------------------------------------------------------------------


def extra_engines() -> dict[str, str]:
    """name -> "module:Class" from TOKENSIEVE_EXTRA_ENGINES."""
    raw = os.environ.get(EXTRA_ENGINES_ENV, "")
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        name, sep, target = item.partition("=")
        if not sep or ":" not in target:
            raise ValueError(f"{EXTRA_ENGINES_ENV}: want name=module:Class, got {item!r}")
        out[name.strip()] = target.strip()
    return out


def engine_names() -> list[str]:
    return [*engines.ENGINE_NAMES, *extra_engines()]


def check_engine(name: str) -> None:
    if name not in engine_names():
        raise UnknownName("engine", name, engine_names())


def make_engine(name: str) -> Engine:
    """The registry's adapter for `name`, or an extra (test) engine."""
    extra = extra_engines()
    if name in extra:
        module_name, _, class_name = extra[name].partition(":")
        engine: Engine = getattr(importlib.import_module(module_name), class_name)()
        return engine
    return engines.get(name)


def spec_to_json(spec: Spec) -> dict[str, Any]:
    return {"id": spec.id, "kind": spec.kind, "text": spec.text, "features": sorted(spec.features)}


def spec_from_json(data: dict[str, Any]) -> Spec:
    return Spec(
        id=data["id"], kind=data["kind"], text=data["text"], features=frozenset(data["features"])
    )


# --- measuring one cell ------------------------------------------------------------------


def _has(mask: np.ndarray, token: int) -> bool:
    return bool((int(mask[token >> 5]) >> (token & 31)) & 1)


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
                if not _has(mask, token):
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
                if path and not (matcher.is_accepting() and _has(mask, voc.eos_id)):
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
) -> tuple[dict[str, Any], Compiled | None]:
    """({"status", "message", "metrics"}, the compiled spec or None) for one cell; engine
    errors become statuses."""
    settle()
    rss_before = rss()
    started = clock()
    try:
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
        compile_ns = sorted(samples)[(len(samples) - 1) // 2]
        walk = walk_paths(compiled, voc, paths, max_steps, started + int(walk_budget_s * 1e9))
        rss_after = rss()
        engine_memory = compiled.memory_bytes()
    except UnsupportedSpec as exc:
        return {"status": "unsupported", "message": exc.message, "metrics": {}}, None
    except (SpecError, EngineError) as exc:
        return {"status": "error", "message": str(exc), "metrics": {}}, None
    except MemoryError:
        return {"status": "oom", "message": "MemoryError raised in the worker", "metrics": {}}, None
    except Exception as exc:  # an adapter bug still costs only this cell
        message = f"{type(exc).__name__}: {exc}"
        return {"status": "error", "message": message, "metrics": {}}, None
    ttfm = None
    if walk["first_fill_ns"] is not None:
        ttfm = compile_ns + walk["matcher_ns"] + walk["first_fill_ns"]
    metrics = {
        "compile_ns": compile_ns,
        "compile_first_ns": samples[0],
        "compile_samples_ns": samples,
        "ttfm_ns": ttfm,
        **walk,
        "fill": summarize(walk["fill_ns"]),
        "advance": summarize(walk["advance_ns"]),
        "rss_growth_bytes": rss_after - rss_before,
        "engine_memory_bytes": engine_memory,
        "vocab_size": voc.size,
    }
    return {"status": "ok", "message": walk["note"], "metrics": metrics}, compiled


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


# --- the process -------------------------------------------------------------------------


def _die_with_parent(parent: int | None) -> None:
    """Ask Linux to SIGKILL this process when its parent (the controller) exits."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:  # it died before prctl took effect
        os._exit(1)


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def serve(inp: IO[str], out: IO[str]) -> int:
    header = json.loads(inp.readline())
    try:
        engine = make_engine(header["engine"])
        version = engine.version()
        voc = vocab_mod.load(header["vocab"])
        settle()
        rss_before = rss()
        started = clock()
        prepared = engine.prepare(voc)
        prepare_ns = clock() - started
        rss_after = rss()
    except MemoryError:
        _send(out, {"event": "fatal", "status": "oom", "message": "MemoryError in preparation"})
        return 0
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        _send(out, {"event": "fatal", "status": "error", "message": message})
        return 0
    _send(
        out,
        {
            "event": "ready",
            "version": version,
            "prepare_ns": prepare_ns,
            "rss_before": rss_before,
            "rss_growth_bytes": rss_after - rss_before,
            "vocab_size": voc.size,
        },
    )
    budget = float(header["walk_budget_s"])
    for line in inp:
        job = json.loads(line)
        spec = spec_from_json(job["spec"])
        result, compiled = measure_cell(
            engine, prepared, voc, spec, job["paths"], int(job["max_steps"]), budget
        )
        _send(out, {"event": "result", "states_follow": compiled is not None, **result})
        if compiled is not None:
            _send(out, {"event": "states", **count_states(compiled)})
        del compiled
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m harness.bench.worker [--parent PID]`: PID is the controller's, so that a
    worker whose controller is already gone exits at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    args = list(sys.argv[1:] if argv is None else argv)
    parent = int(args[1]) if args[:1] == ["--parent"] and len(args) > 1 else None
    _die_with_parent(parent)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        return serve(sys.stdin, protocol)
    except BrokenPipeError:
        return 0
    except Exception:
        traceback.print_exc()
        return 3


if __name__ == "__main__":
    sys.exit(main())
