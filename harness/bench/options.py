"""The options of a bench run: everything that decides which cells it has and how each
is measured. Stored with the run; `--resume` reuses them (only `jobs` may change)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

DEFAULT_SETS = ("outlines-bench", "llm-formats", "pathological", "handwritten", "schemastore")
SCALING_SIZES = (8192, 16384, 32768, 65536)


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
    strict_corpus: bool = False  # a malformed corpus file stops the run (else: skipped)
    # where cells run: "local" (`jobs` worker processes here) or "dask" (a Dask cluster
    # at `scheduler`); like `jobs`, a resumed run may change them
    executor: str = "local"
    scheduler: str | None = None
    # JSON schema -> regex for the regex engines (`harness.language.converter`)
    converter: str = "ours"
    # batch cells (`harness.bench.batch`): sizes B and thread counts T, one cell per
    # (engine, B, T, vocabulary); the steps each times, the specs each mixes (evenly
    # spread over the run's), and the step budget the report measures against
    batch: tuple[int, ...] = ()
    threads: tuple[int, ...] = (1,)
    batch_steps: int = 50
    batch_mix: int = 16
    step_budget_ms: float = 10.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Options:
        tuples = ("engines", "vocabs", "sets", "scaling_sizes", "batch", "threads")
        # runs stored before there was a choice used outlines-core's converter
        data = {"converter": "outlines-core", **data}
        # stored JSON, checked by `validate`, not here: each value is what its field holds
        fields: dict[str, Any] = {k: tuple(v) if k in tuples else v for k, v in data.items()}
        return Options(**fields)

    def validate(self, user_specs: int = 0) -> None:
        """One-line errors naming the bad value (the command line checks each value as it
        parses it; this catches a caller of the Python API). A run needs corpus sets or
        `user_specs` of the user's own."""
        from harness import corpora, engines, vocab
        from harness.errors import BadInput

        for label, values in (("--engines", self.engines), ("--vocab", self.vocabs)):
            if not values:
                raise BadInput(f"{label}: no value given")
        if not self.sets and not user_specs:
            raise BadInput("no corpus set and no spec of your own (--corpus, --spec, --regex)")
        for name in self.engines:
            engines.check(name)
        for name in self.vocabs:
            vocab.check(name)
        for name in self.sets:
            corpora.set_info(name)
        for label, value in (("--paths", self.paths), ("--max-steps", self.max_steps)):
            if value < 0:
                raise BadInput(f"{label} must be >= 0, got {value}")
        if not (0 < self.timeout < float("inf")):
            raise BadInput(f"--timeout must be a positive number of seconds, got {self.timeout}")
        if self.memory_limit < 1 << 20:
            raise BadInput(f"--memory-limit must be at least 1M, got {self.memory_limit} bytes")
        if self.converter not in ("ours", "outlines-core"):
            raise BadInput(f"--converter must be ours or outlines-core, got {self.converter!r}")
        if self.executor not in ("local", "dask"):
            raise BadInput(f"--executor must be local or dask, got {self.executor!r}")
        if self.jobs < 1:
            raise BadInput(f"--jobs must be >= 1, got {self.jobs}")
        if self.limit_specs is not None and self.limit_specs < 1:
            raise BadInput(f"--limit-specs must be >= 1, got {self.limit_specs}")
        self._validate_batch()

    def _validate_batch(self) -> None:
        from harness.errors import BadInput

        for label, values in (("--batch", self.batch), ("--threads", self.threads)):
            bad = [v for v in values if not 1 <= v <= 4096]
            if bad:
                raise BadInput(f"{label} takes whole numbers from 1 to 4096, got {bad[0]}")
        if self.batch and not self.threads:
            raise BadInput("--threads: no value given")
        for label, value in (("--batch-steps", self.batch_steps), ("--batch-mix", self.batch_mix)):
            if value < 1:
                raise BadInput(f"{label} must be >= 1, got {value}")
        if not (0 < self.step_budget_ms < float("inf")):
            raise BadInput(f"--step-budget-ms must be a positive number, got {self.step_budget_ms}")
