"""The controller of a jump-forward run: every (spec, vocabulary) cell measured (each
engine on the spec's token paths) and cross-checked (forced texts across engines) in a
worker process per vocabulary (`harness.process`), here or on a Dask cluster
(`harness.cluster`), so a hang or a crash costs only that cell, whose skipped list says
so; then the files `RUN/jumpforward.json` and `.csv` and a console summary. The bench
report embeds the summary when the run names match.

Each cell's outcome is committed to the results store as it comes back
(`jumpforward_cells`), so `jumpforward --resume` after Ctrl-C, a SIGTERM, a killed
controller or a failure measures only the cells not stored, and the figures are computed
from every stored cell, in the order they were stored: a resumed run reports what the
same run in one go would have. The run's options and spec ids are stored with it
(`RunMeta`); its lock, creation or resumption and sessions are the store's `RunSession`,
as for every kind of run. The page (`jumpforward.html`) is `harness.runs.jumpforward`'s.
"""

from __future__ import annotations

import csv
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from harness import cluster, corpora
from harness import vocab as vocabularies
from harness.corpora import paths, user
from harness.embed import csv_cell, write_json
from harness.errors import BadInput, TokensieveError
from harness.jumpforward.cell import SERVICE
from harness.language import converter
from harness.spec import Spec
from harness.store import RunKind, RunMeta, RunSession, Store

# Specs per Dask task: a vocabulary is prepared once per task.
DASK_BATCH = 8
KIND = RunKind.JUMPFORWARD


@dataclass(frozen=True)
class JumpOptions:
    """What decides a jump-forward run's cells and how each is measured; stored with the
    run, and reused by `--resume` (only `executor` and `scheduler` may change)."""

    vocabs: tuple[str, ...]
    engines: tuple[str, ...]
    sets: tuple[str, ...]
    corpus_dir: str | None = None
    paths: int = 3
    limit_specs: int | None = None
    timeout: float = 120.0
    memory_limit: int | None = None
    strict_corpus: bool = False
    executor: str = "local"  # or "dask", at `scheduler` (harness.cluster)
    scheduler: str | None = None
    # JSON schema -> regex for the reference and the regex engines
    converter: str = converter.DEFAULT

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> JumpOptions:
        tuples = ("vocabs", "engines", "sets")
        fields: dict[str, Any] = {k: tuple(v) if k in tuples else v for k, v in data.items()}
        return JumpOptions(**fields)


@dataclass
class JumpResults:
    rows: list[dict[str, Any]]
    disagreements: list[dict[str, Any]]
    states_compared: int
    skipped: list[str]


class JumpRun:
    """One jump-forward run, claimed (its lock held) from construction until `run`
    returns: new (`options`, the corpus sets' specs then the user's own), or resumed
    (`resume`: the stored options and specs, where the cells run as given now)."""

    def __init__(
        self,
        store: Store,
        run: str,
        options: JumpOptions,
        *,
        resume: bool = False,
        user_entries: tuple[corpora.Entry, ...] = (),
        log: Callable[[str], None] | None = None,
    ) -> None:
        """`log` takes the progress lines (default: standard output)."""
        self.store = store
        self.run_name = run
        self.log = log or (lambda line: print(line, flush=True))
        self.owner = RunSession(store, KIND, run, self.log)
        stored = self.owner.claim(resume)
        try:
            if stored is None:
                self.options = options
                converter.use(options.converter)
                self.specs = self._select(user_entries)
                ids = [s.id for s in self.specs]
                self.owner.create(RunMeta.new(options.to_json(), ids, user.to_json(user_entries)))
            else:
                self.options = replace(
                    JumpOptions.from_json(stored.options),
                    executor=options.executor,
                    scheduler=options.scheduler,
                )
                converter.use(self.options.converter)
                self.specs = self._lookup(stored)
        except BaseException:
            self.owner.release()
            raise

    def _select(self, user_entries: tuple[corpora.Entry, ...]) -> list[Spec]:
        o = self.options
        chosen = [
            spec
            for set_name in o.sets
            for spec in corpora.spread(
                corpora.load_set(set_name, o.corpus_dir, strict=o.strict_corpus), o.limit_specs
            )
        ]
        return chosen + [e.spec for e in user_entries]

    def _lookup(self, meta: RunMeta) -> list[Spec]:
        """The stored specs, in the run's order, from the corpus and the stored entries."""
        found = {e.spec.id: e.spec for e in user.from_json(meta.user_entries)}
        for name in sorted({_set_of(i) for i in meta.spec_ids} - {user.SET}):
            for spec in corpora.load_set(name, self.options.corpus_dir):
                found[spec.id] = spec
        missing = [i for i in meta.spec_ids if i not in found]
        if missing:
            raise BadInput(
                f"{KIND.label} {self.run_name!r}: spec {missing[0]} is no longer in the "
                f"corpus ({len(missing)} missing); it cannot be resumed"
            )
        return [found[i] for i in meta.spec_ids]

    def run(self) -> dict[str, Any]:
        """Measure the cells not stored yet, in one session of the run (Ctrl-C or SIGTERM
        ends it `interrupted`, any failure `failed`; either is raised), and return what
        jumpforward.json holds, from every stored cell. The lock is released on return."""
        started = time.perf_counter()
        try:
            with self.owner.session() as session:
                self._measure(session)
        finally:
            self.owner.release()
        return _data(self.results(), time.perf_counter() - started)

    def results(self) -> JumpResults:
        """Every stored cell's outcome, gathered in the order the cells were stored."""
        out = JumpResults([], [], 0, [])
        for cell in self.store.outcome_cells(KIND, self.run_name):
            out.rows.extend(cell.outcome["rows"])
            out.disagreements.extend(cell.outcome["disagreements"])
            out.states_compared += cell.outcome["states"]
            out.skipped.extend(cell.outcome["skipped"])
        return out

    def _measure(self, session: int) -> None:
        """Every (vocabulary, spec) not stored, on the vocabulary's worker process, here or
        in batches of `DASK_BATCH` specs on a Dask cluster; each cell stored as it comes
        back, and one without a token path stored at once with why."""
        done = {(c.spec_id, c.vocab) for c in self.store.outcome_cells(KIND, self.run_name)}
        if done:
            self.log(f"resuming {KIND.label} {self.run_name}: {len(done)} cells done")
        batches = []
        for vname in self.options.vocabs:
            todo = [s for s in self.specs if (s.id, vname) not in done]
            if todo:
                batches += self._batches(vname, todo, session)

        def handle(item: dict[str, Any], result: dict[str, Any]) -> None:
            self._store(item["spec"]["id"], item["vocab"], "ok", result, session)

        cluster.run(batches, handle, self.log, self.options.executor, self.options.scheduler)

    def _batches(self, vname: str, specs: list[Spec], session: int) -> list[cluster.Batch]:
        o = self.options
        voc = vocabularies.load(vname)
        items = []
        for spec in specs:
            try:
                walked = [p for p in paths.paths_for(spec, voc, n=o.paths) if p.exact]
            except TokensieveError as exc:
                self._store(spec.id, vname, "error", _no_path(f"{spec.id}: {exc}"), session)
                continue
            items.append(
                {
                    "set": _set_of(spec.id),
                    "vocab": vname,
                    "spec": converter.with_regex(spec).to_json(),
                    "paths": [{"text": p.text, "ids": list(p.ids)} for p in walked],
                    "engines": list(o.engines),
                    "timeout": o.timeout,
                }
            )
        size = max(1, len(items)) if o.executor == "local" else DASK_BATCH
        setup = {"vocab": vname, "engines": list(o.engines)}
        return [
            cluster.Batch(
                SERVICE,
                setup,
                o.engines,
                o.memory_limit,
                "harness.jumpforward.cell:run_spec",
                items[i : i + size],
            )
            for i in range(0, len(items), size)
        ]

    def _store(
        self, spec_id: str, vocab: str, status: str, outcome: dict[str, Any], session: int
    ) -> None:
        self.store.add_outcome_cell(KIND, self.run_name, (spec_id, vocab), status, outcome, session)
        self.owner.touch()


def _no_path(why: str) -> dict[str, Any]:
    """The outcome of a cell with no token path to walk: nothing measured, and why."""
    return {"rows": [], "disagreements": [], "states": 0, "skipped": [why]}


def _set_of(spec_id: str) -> str:
    """The corpus set a spec id names (`SET/NAME`; the user's own are `user/...`)."""
    return spec_id.split("/", 1)[0]


def _data(results: JumpResults, elapsed: float) -> dict[str, Any]:
    from harness.jumpforward.tables import maskbench_table, summarize

    return {
        "summary": summarize(results.rows),
        "maskbench": maskbench_table(results.rows),
        "paths": results.rows,
        "forced_text_disagreements": results.disagreements,
        "states_compared": results.states_compared,
        "skipped": results.skipped,
        "seconds": elapsed,
    }


def write(out_dir: Path, data: dict[str, Any]) -> None:
    """`jumpforward.json`, and `jumpforward.csv` when there are rows, into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "jumpforward.json", data)
    rows = data["paths"]
    if rows:
        with open(out_dir / "jumpforward.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows({k: csv_cell(v) for k, v in r.items()} for r in rows)


def console(data: dict[str, Any], out_dir: Path) -> str:
    """The summary `tokensieve jumpforward` prints."""
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
    lines = ["  ".join(f"{c:>14}" for c in cols)]
    for r in data["summary"]:
        lines.append(
            "  ".join(
                f"{r[c]:>14.1f}" if isinstance(r[c], float) else f"{r[c]!s:>14}" for c in cols
            )
        )
    for r in data["maskbench"]:
        lines.append(
            f"maskbench {r['split']:>16} {r['engine']:>12}: forced_text "
            f"{r['forced_text_pct']:.1f}% (published compact {r['published_compact_pct']}%)"
        )
    verdicts: dict[str, int] = defaultdict(int)
    for d in data["forced_text_disagreements"]:
        for name, v in d["verdicts"].items():
            verdicts[f"{name}:{v}"] += 1
    lines.append(
        f"forced text: {data['states_compared']} states compared, "
        f"{len(data['forced_text_disagreements'])} differ: "
        + ", ".join(f"{k}={v}" for k, v in sorted(verdicts.items()) if not k.endswith(":agree"))
    )
    lines.append(f"{data['seconds']:.0f} s; wrote {out_dir}/jumpforward.html")
    return "\n".join(lines)
