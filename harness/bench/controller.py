"""The controller of a benchmark run: which cells to measure, in which worker processes,
under which limits, and where their results go.

A cell is one (engine, spec, vocabulary). Cells are grouped per (engine, vocabulary): a
worker process (`harness.bench.worker`) prepares the vocabulary once and then measures the
group's cells one at a time. The controller never imports an engine's package: it only
reads the workers' replies, so whatever an engine does costs at most its cell:

- a cell running past `timeout` seconds is killed and recorded as `timeout`;
- a worker whose resident set (with its children) grows past `memory_limit` is killed,
  `oom`; RSS is polled every 50 ms instead of setting RLIMIT_AS, which breaks engines
  that reserve large virtual ranges (torch, xgrammar);
- a worker that dies is `crash`, with the signal or exit code and the tail of its stderr
  (an allocation failure message there makes it `oom`);
- an engine refusing a spec is `unsupported`, any other engine error `error`.

A worker stops walking token paths at half the cell's timeout (the cell is `ok` and
marked truncated), and counting states, asked after the timings are in, gets at most
10 s: past that the worker is replaced and the cell keeps its timings without a count.

After a timeout, oom or crash the group's remaining cells go to a fresh worker (which
prepares the vocabulary again). Each finished cell is committed to the store at once, so
`--resume` after Ctrl-C or a killed controller measures only what is missing; the run's
options and spec ids are stored with it, so a resumed run measures exactly the cells the
first session planned.

JSON schemas reach the regex-only engines (`json_schema == "via-regex"`) through one
converter, whose verdict is cached on disk; a schema it cannot convert because the
regex is too large, or because it runs out of time or memory, is recorded for those
engines from that verdict without starting a worker.
"""

from __future__ import annotations

import json
import os
import platform
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import psutil

from harness import corpus, paths
from harness.bench.worker import (
    check_engine,
    make_engine,
    spec_to_json,
)
from harness.errors import TokensieveError
from harness.figures import fmt_bytes, fmt_seconds, tree_rss
from harness.spec import Spec
from harness.store.db import Store
from harness.vocab import resolve as vocab_names

DEFAULT_SETS = ("outlines-bench", "llm-formats", "pathological", "handwritten", "schemastore")
SCALING_SIZES = (8192, 16384, 32768, 65536)
# Scaling cells only need compile time and time to first mask.
SCALING_PATHS = 1
SCALING_STEPS = 32
POLL_S = 0.05
# Counting states can mean building a whole transition table (50 s on one pathological
# regex): past this, the worker is restarted and the cell keeps its timings, not a count.
STATES_TIMEOUT_S = 10.0
STDERR_TAIL = 1500
# A worker's vocabulary preparation may import torch and load a tokenizer: give it more
# than a cell.
MIN_PREPARE_TIMEOUT_S = 120.0
# Words in a dying worker's stderr that mean it ran out of memory, not that it crashed.
_OOM_WORDS = ("memory allocation of", "std::bad_alloc", "MemoryError", "Cannot allocate memory")


@dataclass(frozen=True)
class Options:
    """Everything that decides which cells a run has and how each is measured. Stored
    with the run; `--resume` reuses it (only `jobs` may change)."""

    engines: tuple[str, ...]
    vocabs: tuple[str, ...]
    sets: tuple[str, ...] = DEFAULT_SETS
    corpus_dir: str | None = None
    paths: int = 2
    max_steps: int = 200
    timeout: float = 60.0
    memory_limit: int = 4 << 30
    limit_specs: int | None = None
    scaling: bool = False
    scaling_specs: int = 3
    scaling_sizes: tuple[int, ...] = SCALING_SIZES
    jobs: int = 1

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Options:
        tuples = ("engines", "vocabs", "sets", "scaling_sizes")
        return Options(**{k: tuple(v) if k in tuples else v for k, v in data.items()})

    def validate(self) -> None:
        """One-line errors naming the bad value; unknown names raise UnknownName."""
        if not self.engines:
            raise TokensieveError("no engine chosen")
        if not self.vocabs:
            raise TokensieveError("no vocabulary chosen")
        if not self.sets:
            raise TokensieveError("no corpus set chosen")
        for name in self.engines:
            check_engine(name)
        for name in self.vocabs:
            vocab_names.check(name)
        for name in self.sets:
            corpus.set_info(name)
        for label, value in (("--paths", self.paths), ("--max-steps", self.max_steps)):
            if value < 0:
                raise TokensieveError(f"{label} must be >= 0, got {value}")
        if self.timeout <= 0:
            raise TokensieveError(f"--timeout must be positive, got {self.timeout}")
        if self.jobs < 1:
            raise TokensieveError(f"--jobs must be >= 1, got {self.jobs}")
        if self.limit_specs is not None and self.limit_specs < 1:
            raise TokensieveError(f"--limit-specs must be >= 1, got {self.limit_specs}")


# --- the plan ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CellPlan:
    engine: str
    spec_id: str
    vocab: str
    study: str  # "main" or "scaling"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.engine, self.spec_id, self.vocab)


@dataclass
class Group:
    """Cells one worker measures after preparing `vocab` for `engine` once."""

    engine: str
    vocab: str
    study: str
    pending: deque[str] = field(default_factory=deque)  # spec ids

    @property
    def label(self) -> str:
        return f"{self.engine}/{self.vocab}"


def spread(items: Sequence[Spec], n: int | None) -> list[Spec]:
    """`n` items evenly spaced over `items` (all of them when n is None or large), so a
    capped set still covers its whole range, not only its first entries."""
    if n is None or n >= len(items):
        return list(items)
    return [items[(i * len(items)) // n] for i in range(n)]


def select_specs(options: Options) -> list[Spec]:
    out: list[Spec] = []
    for name in options.sets:
        out += spread(corpus.load_set(name, options.corpus_dir), options.limit_specs)
    return out


def scaling_selection(specs: Sequence[Spec], n: int) -> list[Spec]:
    """The first spec of each set, alternating kinds (regex, schema, regex, ...) so both
    are represented, at most `n` of them."""
    firsts: dict[str, Spec] = {}
    for spec in specs:
        firsts.setdefault(spec.id.split("/", 1)[0], spec)
    by_kind: dict[str, list[Spec]] = {}
    for spec in firsts.values():
        by_kind.setdefault(spec.kind, []).append(spec)
    ordered: list[Spec] = []
    queues = [deque(v) for v in by_kind.values()]
    while any(queues):
        for q in queues:
            if q:
                ordered.append(q.popleft())
    return ordered[:n]


def scaling_vocabs(base: str, sizes: Iterable[int], full_size: int) -> list[str]:
    return [f"{base}[:{n}]" for n in sizes if n < full_size]


def plan_cells(
    options: Options, specs: Sequence[Spec], scaling_specs: Sequence[Spec], full_size: int
) -> list[CellPlan]:
    cells = [
        CellPlan(engine, spec.id, vocab, "main")
        for vocab in options.vocabs
        for engine in options.engines
        for spec in specs
    ]
    if options.scaling and scaling_specs:
        for vocab in scaling_vocabs(options.vocabs[0], options.scaling_sizes, full_size):
            cells += [
                CellPlan(engine, spec.id, vocab, "scaling")
                for engine in options.engines
                for spec in scaling_specs
            ]
    return cells


def group_cells(cells: Iterable[CellPlan]) -> list[Group]:
    groups: dict[tuple[str, str], Group] = {}
    for cell in cells:
        group = groups.setdefault(
            (cell.engine, cell.vocab), Group(cell.engine, cell.vocab, cell.study)
        )
        group.pending.append(cell.spec_id)
    return list(groups.values())


# --- run metadata ------------------------------------------------------------------------


def git_commit(root: Path = corpus.PROJECT_ROOT) -> str | None:
    """HEAD's commit read from `.git` directly (no git process), or None."""
    git = root / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            git = (root / git.read_text().split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        common = git
        if (git / "commondir").is_file():
            common = (git / (git / "commondir").read_text().strip()).resolve()
        for base in (git, common):
            if (base / ref).is_file():
                return (base / ref).read_text().strip()
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                sha, _, name = line.partition(" ")
                if name == ref:
                    return sha
    except (OSError, IndexError):
        return None
    return None


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "host": platform.node(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "python": platform.python_version(),
        "load_average": list(os.getloadavg()),
    }


# --- token paths -------------------------------------------------------------------------


def token_paths(spec: Spec, vocab: Any, n: int) -> tuple[list[list[int]], str | None]:
    """The first `n` token paths of `spec` (shared with the differ's cache), or none and
    why not."""
    if n == 0:
        return [], None
    try:
        found = paths.paths_for(spec, vocab)
    except (TokensieveError, ValueError) as exc:
        return [], f"no token paths: {exc}"
    return [list(p.ids) for p in found[:n]], None


# --- the worker, seen from the controller ------------------------------------------------


@dataclass
class Outcome:
    status: str
    message: str | None
    metrics: dict[str, Any]


class WorkerProcess:
    """One `python -m harness.bench.worker` child and what it is doing."""

    def __init__(self, group: Group, walk_budget_s: float, prepare_timeout: float) -> None:
        self.group = group
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.bench.worker", "--parent", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            start_new_session=True,  # Ctrl-C in the terminal reaches the controller only
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._buffer = b""
        self.state = "starting"  # starting, busy, states, idle, closing, dead
        self.deadline = time.monotonic() + prepare_timeout
        self.started = time.monotonic()
        self.current: str | None = None  # spec id in flight
        self.held: Outcome | None = None  # result waiting for its state count
        self.cell_started = self.started
        self.peak_rss = 0
        self.send({"engine": group.engine, "vocab": group.vocab, "walk_budget_s": walk_budget_s})

    @property
    def stdout(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # noticed as a dead process by the next poll

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def messages(self) -> list[dict[str, Any]]:
        """Every complete line the worker has written so far."""
        while True:
            try:
                chunk = os.read(self.stdout.fileno(), 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                break
            if not chunk:
                break
            self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:  # not a reply; the worker's fate will tell what happened
                continue
        return out

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()

    def rss(self) -> int | None:
        value = tree_rss(self.proc.pid)
        if value is not None:
            self.peak_rss = max(self.peak_rss, value)
        return value

    def stderr_tail(self) -> str:
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - STDERR_TAIL))
        text = self.stderr.read().decode("utf-8", "replace")
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-12:])

    def death(self) -> Outcome:
        """The status of a worker that exited on its own."""
        code = self.proc.wait()
        if code < 0:
            try:
                how = f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        tail = self.stderr_tail()
        status = "oom" if any(w in tail for w in _OOM_WORDS) else "crash"
        return Outcome(status, f"{how}; stderr: {tail}" if tail else how, {})

    def dispose(self) -> None:
        self.close_input()
        if self.proc.poll() is None:
            self.kill()
        for stream in (self.proc.stdout, self.proc.stdin):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self.stderr.close()


# --- progress ----------------------------------------------------------------------------


class Progress:
    """One redrawn line on a terminal (bar, counts, ETA); a line every 30 s otherwise."""

    def __init__(self, total: int, done: int, stream: IO[str]) -> None:
        self.total = total
        self.done_before = done
        self.done = done
        self.counts: Counter[str] = Counter()
        self.stream = stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.rate_started = self.started  # reset when measuring starts (after token paths)
        self._last = self.started
        self.running: list[str] = []

    def cell(self, status: str, instant: bool = False) -> None:
        """One more cell finished; `instant` ones (decided without a worker) do not count
        towards the rate the ETA extrapolates."""
        self.done += 1
        if instant:
            self.done_before += 1
        self.counts[status] += 1
        self.draw(force=self.done == self.total)

    def line(self) -> str:
        now = time.monotonic()
        elapsed = now - self.started
        measured = self.done - self.done_before
        remaining = self.total - self.done
        rate = (now - self.rate_started) / measured if measured else None
        eta = f"ETA {fmt_seconds(rate * remaining)}" if rate is not None else "ETA ?"
        share = self.done / self.total if self.total else 1.0
        width = 24
        bar = "#" * int(share * width) + "-" * (width - int(share * width))
        counts = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        running = ", ".join(self.running)
        return (
            f"[{bar}] {self.done}/{self.total} cells {share:4.0%} "
            f"{fmt_seconds(elapsed)} {eta}  {counts}  {running}"
        )

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if force or now - self._last >= 0.2:
                columns = max(40, os.get_terminal_size(self.stream.fileno()).columns - 1)
                self.stream.write("\r" + self.line()[:columns].ljust(columns))
                self.stream.flush()
                self._last = now
        elif force or now - self._last >= 30.0:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self._last = now

    def finish(self) -> None:
        if self.done != self.total or self.done == self.done_before:
            self.draw(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# --- the controller ----------------------------------------------------------------------


@dataclass
class RunResult:
    run: str
    measured: int
    total: int
    wall_s: float
    interrupted: bool
    counts: Counter[str]


class Runner:
    """Measures the cells of one run that the store does not have yet."""

    def __init__(
        self,
        store: Store,
        run: str,
        options: Options,
        *,
        resume: bool = False,
        stream: IO[str] = sys.stderr,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.run_name = run
        self.stream = stream
        self.log = log or (lambda text: print(text, file=stream, flush=True))
        existing = store.find_run(run)
        if resume:
            if existing is None:
                known = [r.name for r in store.runs()]
                raise TokensieveError(
                    f"no run {run!r} to resume in {store.path}"
                    + (f"; recorded runs: {', '.join(known)}" if known else "")
                )
            stored = Options.from_json(existing.meta["options"])
            self.options = replace(stored, jobs=options.jobs)
            self.meta = existing.meta
            self.specs = self._lookup(existing.meta["spec_ids"])
            self.scaling = self._lookup(existing.meta["scaling_spec_ids"])
        else:
            if existing is not None:
                raise TokensieveError(
                    f"run {run!r} already exists in {store.path}; pass --resume to continue "
                    "it or choose another --run name"
                )
            options.validate()
            self.options = options
            self.specs = select_specs(options)
            if not self.specs:
                raise TokensieveError(f"corpus sets {', '.join(options.sets)} hold no spec")
            self.scaling = scaling_selection(self.specs, options.scaling_specs)
            self.meta = {
                "options": options.to_json(),
                "spec_ids": [s.id for s in self.specs],
                "scaling_spec_ids": [s.id for s in self.scaling] if options.scaling else [],
                "machine": machine(),
                "commit": git_commit(),
                "versions": {},
                "sessions": [],
            }
            store.create_run(run, self.meta)
        self._by_id = {s.id: s for s in [*self.specs, *self.scaling]}
        self._paths: dict[tuple[str, str], tuple[list[list[int]], str | None]] = {}
        self._session: dict[str, Any] = {}

    def _lookup(self, ids: list[str]) -> list[Spec]:
        found: dict[str, Spec] = {}
        sets = {i.split("/", 1)[0] for i in ids}
        for name in sorted(sets):
            for spec in corpus.load_set(name, self.options.corpus_dir):
                found[spec.id] = spec
        missing = [i for i in ids if i not in found]
        if missing:
            raise TokensieveError(
                f"run {self.run_name!r}: spec {missing[0]} is no longer in the corpus "
                f"({len(missing)} missing); it cannot be resumed"
            )
        return [found[i] for i in ids]

    # --- planning --------------------------------------------------------------------

    def plan(self) -> list[CellPlan]:
        full = vocab_names.load(self.options.vocabs[0]).size if self.options.scaling else 0
        return plan_cells(self.options, self.specs, self.scaling, full)

    def _prepare_paths(
        self, cells: Sequence[CellPlan]
    ) -> dict[tuple[str, str], tuple[list[list[int]], str | None]]:
        """Token paths of every (spec, vocabulary) still to measure: [ids], note."""
        wanted = sorted({(c.vocab, c.spec_id, c.study) for c in cells})
        out: dict[tuple[str, str], tuple[list[list[int]], str | None]] = {}
        vocabs: dict[str, Any] = {}
        started = time.monotonic()
        if wanted:
            self.log(f"token paths for {len(wanted)} (spec, vocabulary) pairs (cached on disk)")
        for vocab_name, spec_id, study in wanted:
            voc = vocabs.get(vocab_name)
            if voc is None:
                voc = vocabs[vocab_name] = vocab_names.load(vocab_name)
            n = SCALING_PATHS if study == "scaling" else self.options.paths
            out[(spec_id, vocab_name)] = token_paths(self._by_id[spec_id], voc, n)
        if wanted:
            self.log(f"token paths ready in {fmt_seconds(time.monotonic() - started)}")
        return out

    def _prechecked(self, cell: CellPlan, engine_kinds: dict[str, str]) -> Outcome | None:
        """The outcome of a schema cell the shared converter already decided, if any."""
        spec = self._by_id[cell.spec_id]
        if spec.kind != "json_schema" or engine_kinds[cell.engine] != "via-regex":
            return None
        status, value = corpus.convert_schema(spec.text)
        reasons = {
            "too-large": ("unsupported", f"makes a regex of {value} characters, over its limit"),
            "timeout": ("timeout", f"ran over {value} s"),
            "crashed": ("crash", f"died (exit code {value}) converting it"),
        }
        if status not in reasons:
            return None  # converted, or rejected with a message the engine reports itself
        outcome, reason = reasons[status]
        return Outcome(outcome, f"schema-to-regex converter (checked beforehand) {reason}", {})

    # --- running ---------------------------------------------------------------------

    def run(self) -> RunResult:
        cells = self.plan()
        done = self.store.finished_keys(self.run_name)
        todo = [c for c in cells if c.key not in done]
        if not todo:
            self.log(f"run {self.run_name}: all {len(cells)} cells are already measured")
            return RunResult(self.run_name, 0, len(cells), 0.0, False, Counter())
        session = {
            "started": time.time(),
            "jobs": self.options.jobs,
            "status": "running",
            "measured": 0,
        }
        self.meta.setdefault("sessions", []).append(session)
        self._session = session
        self.store.update_meta(self.run_name, self.meta)
        started = time.monotonic()
        counts: Counter[str] = Counter()
        interrupted = False
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            if done:
                self.log(f"resuming run {self.run_name}: {len(done)} of {len(cells)} cells done")
            engine_kinds = {
                name: make_engine(name).capabilities.json_schema for name in self.options.engines
            }
            progress = Progress(len(cells), len(cells) - len(todo), self.stream)
            remaining: list[CellPlan] = []
            for cell in todo:
                outcome = self._prechecked(cell, engine_kinds)
                if outcome is None:
                    remaining.append(cell)
                else:
                    self._record(cell, outcome)
                    counts[outcome.status] += 1
                    progress.cell(outcome.status, instant=True)
            self._paths = self._prepare_paths(remaining)
            progress.rate_started = time.monotonic()
            self._schedule(group_cells(remaining), progress, counts)
            progress.finish()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            signal.signal(signal.SIGTERM, previous)
            wall = time.monotonic() - started
            session.update(
                finished=time.time(),
                wall_s=wall,
                status="interrupted" if interrupted else "complete",
                measured=sum(counts.values()),
            )
            self.store.update_meta(self.run_name, self.meta)
        if interrupted:
            self.log(
                f"\ninterrupted: {sum(counts.values())} cells recorded this session; continue "
                f"with: tokensieve bench --resume --run {self.run_name}"
            )
        return RunResult(self.run_name, sum(counts.values()), len(cells), wall, interrupted, counts)

    def _schedule(self, groups: list[Group], progress: Progress, counts: Counter[str]) -> None:
        queue = deque(groups)
        active: list[WorkerProcess] = []
        selector = selectors.DefaultSelector()
        opts = self.options
        walk_budget = opts.timeout / 2
        started = time.monotonic()
        prepare_timeout = max(MIN_PREPARE_TIMEOUT_S, 2 * opts.timeout)
        states_timeout = min(opts.timeout, STATES_TIMEOUT_S)
        last_meta = time.monotonic()

        def finish_cell(worker: WorkerProcess, outcome: Outcome) -> None:
            assert worker.current is not None
            group = worker.group
            cell = CellPlan(group.engine, worker.current, group.vocab, group.study)
            outcome.metrics["peak_rss_bytes"] = worker.peak_rss or None
            # wall time the cell held its worker: compile, walks, counting states, pipes
            outcome.metrics["cell_s"] = round(time.monotonic() - worker.cell_started, 4)
            self._record(cell, outcome)
            counts[outcome.status] += 1
            progress.cell(outcome.status)
            worker.current = None
            worker.held = None

        def dispatch(worker: WorkerProcess) -> None:
            group = worker.group
            if worker.proc.poll() is not None:
                # Replies read after the worker exited: nothing more can be sent to it.
                worker.state = "idle"
                return
            if not group.pending:
                worker.state = "closing"
                worker.deadline = time.monotonic() + 10.0
                worker.close_input()
                return
            spec_id = group.pending.popleft()
            ids, _ = self._paths[(spec_id, group.vocab)]
            steps = SCALING_STEPS if group.study == "scaling" else opts.max_steps
            worker.current = spec_id
            worker.state = "busy"
            worker.peak_rss = 0
            worker.cell_started = time.monotonic()
            worker.deadline = worker.cell_started + opts.timeout
            worker.send(
                {"spec": spec_to_json(self._by_id[spec_id]), "paths": ids, "max_steps": steps}
            )

        def fail_group(worker: WorkerProcess, outcome: Outcome) -> None:
            """Preparation failed: every pending cell of the group gets its outcome."""
            group = worker.group
            message = f"vocabulary preparation failed: {outcome.message}"
            self.store.add_preparation(
                self.run_name,
                group.engine,
                group.vocab,
                outcome.status,
                outcome.message,
                {"peak_rss_bytes": worker.peak_rss or None},
            )
            while group.pending:
                worker.current = group.pending.popleft()
                finish_cell(worker, Outcome(outcome.status, message, {}))

        def handle(worker: WorkerProcess, message: dict[str, Any]) -> None:
            event = message["event"]
            if event == "ready":
                self.meta["versions"][worker.group.engine] = message["version"]
                self.store.add_preparation(
                    self.run_name,
                    worker.group.engine,
                    worker.group.vocab,
                    "ok",
                    None,
                    {
                        "prepare_ns": message["prepare_ns"],
                        "rss_before": message["rss_before"],
                        "rss_growth_bytes": message["rss_growth_bytes"],
                        "vocab_size": message["vocab_size"],
                        "startup_s": time.monotonic() - worker.started,
                        "pid": worker.proc.pid,
                    },
                )
                dispatch(worker)
            elif event == "fatal":
                fail_group(worker, Outcome(message["status"], message["message"], {}))
                worker.state = "closing"
                worker.deadline = time.monotonic() + 10.0
                worker.close_input()
            elif event == "result":
                outcome = Outcome(message["status"], message["message"], message["metrics"])
                self._add_path_note(worker, outcome)
                if message.get("states_follow"):
                    worker.held = outcome
                    worker.state = "states"
                    worker.deadline = time.monotonic() + states_timeout
                else:
                    finish_cell(worker, outcome)
                    dispatch(worker)
            elif event == "states":
                held = worker.held
                assert held is not None
                held.metrics.update(message)
                held.metrics.pop("event", None)
                finish_cell(worker, held)
                dispatch(worker)

        def lost(worker: WorkerProcess, outcome: Outcome) -> None:
            """The worker is gone (killed or died): settle what it was doing."""
            if worker.state == "starting":
                fail_group(worker, outcome)
            elif worker.state == "busy":
                finish_cell(worker, outcome)
            elif worker.state == "states":
                held = worker.held
                assert held is not None
                held.metrics["states_error"] = f"{outcome.status}: {outcome.message}"
                finish_cell(worker, held)
            worker.state = "dead"
            if worker.group.pending:
                queue.appendleft(worker.group)  # a fresh worker takes over the rest

        try:
            while queue or active:
                while queue and len(active) < opts.jobs:
                    group = queue.popleft()
                    worker = WorkerProcess(group, walk_budget, prepare_timeout)
                    selector.register(worker.stdout, selectors.EVENT_READ, worker)
                    active.append(worker)
                progress.running = [w.group.label for w in active]
                for key, _ in selector.select(timeout=POLL_S):
                    worker = key.data
                    for message in worker.messages():
                        handle(worker, message)
                now = time.monotonic()
                for worker in active:
                    if worker.state == "dead":
                        continue
                    if worker.proc.poll() is not None:
                        for message in worker.messages():  # replies written before exiting
                            handle(worker, message)
                        if worker.state in ("closing", "idle"):
                            worker.state = "dead"
                            if worker.group.pending:
                                queue.appendleft(worker.group)
                        elif worker.state != "dead":
                            lost(worker, worker.death())
                        continue
                    if worker.state == "closing":
                        if now > worker.deadline:
                            worker.kill()
                            worker.state = "dead"
                        continue
                    used = worker.rss()
                    if used is not None and used > opts.memory_limit:
                        worker.kill()
                        lost(
                            worker,
                            Outcome(
                                "oom",
                                f"resident memory {fmt_bytes(used)} passed the limit of "
                                f"{fmt_bytes(opts.memory_limit)}",
                                {},
                            ),
                        )
                    elif now > worker.deadline and not self._drain(worker, handle):
                        worker.kill()
                        limit = {"starting": prepare_timeout, "states": states_timeout}.get(
                            worker.state, opts.timeout
                        )
                        lost(worker, Outcome("timeout", f"ran over {limit:g} s", {}))
                for worker in [w for w in active if w.state == "dead"]:
                    selector.unregister(worker.stdout)
                    worker.dispose()
                    active.remove(worker)
                progress.draw()
                if now - last_meta > 10.0:
                    # A killed controller leaves this session's latest figures behind.
                    self._session.update(measured=sum(counts.values()), wall_s=now - started)
                    self.store.update_meta(self.run_name, self.meta)
                    last_meta = now
        finally:
            for worker in active:
                worker.dispose()
            selector.close()

    @staticmethod
    def _drain(
        worker: WorkerProcess, handle: Callable[[WorkerProcess, dict[str, Any]], None]
    ) -> bool:
        """Handle replies that arrived since the last poll; True if one of them moved the
        worker past its deadline (the cell finished just in time)."""
        deadline = worker.deadline
        for message in worker.messages():
            handle(worker, message)
        return worker.deadline != deadline or worker.state in ("closing", "idle", "dead")

    def _add_path_note(self, worker: WorkerProcess, outcome: Outcome) -> None:
        assert worker.current is not None
        note = self._paths[(worker.current, worker.group.vocab)][1]
        if note:
            outcome.metrics["path_note"] = note

    def _record(self, cell: CellPlan, outcome: Outcome) -> None:
        self.store.add_cell(
            self.run_name,
            cell.engine,
            cell.spec_id,
            cell.vocab,
            cell.study,
            outcome.status,
            outcome.message,
            outcome.metrics,
        )


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
