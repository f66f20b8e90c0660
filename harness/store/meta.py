"""A run's metadata, typed: what every kind of run stores about itself when it is created
(`runs.meta` and its kin, JSON), read back by `--resume` and by the reports.

The JSON keys are the ones bench and diff have always written, so runs stored before this
type existed read back unchanged, and the report (which reads `Run.meta` as a dict) sees
the same keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.results.provenance import git_commit, machine

_KNOWN = (
    "options",
    "spec_ids",
    "scaling_spec_ids",
    "machine",
    "commit",
    "versions",
    "corpus_problems",
    "user_entries",
    "vocab_files",
)


@dataclass
class RunMeta:
    """What a run stores about itself:

    - `options`: what decides its cells, as the controller's options type writes them
      (`Options.to_json`, `DiffOptions.to_json`, `JumpOptions.to_json`), so a resumed run
      measures exactly the cells the first session planned;
    - `spec_ids`: its specs, in order; `user_entries`: the user's own specs whole
      (`harness.corpora.user.to_json`), so a resumed run needs no file;
    - `commit`, `machine`: where and on what it was created (`harness.results.provenance`);
    - `versions`: engine -> the release its workers imported, filled in as they report;
    - bench only (None elsewhere, and then not written): `scaling_spec_ids`, the specs of
      the vocabulary-size study; `corpus_problems`, corpus files skipped as malformed;
    - `vocab_files`: each tokenizer-file vocabulary -> the SHA-256 of its files
      (`harness.vocab.fingerprint`), so a resumed run refuses a file changed since it
      began rather than mix cells of two vocabularies under one name (empty in runs
      stored before it was kept: then nothing is checked);
    - `extra`: keys this version does not know, kept as read, so rewriting the metadata
      (`versions`) never drops one.
    """

    options: dict[str, Any]
    spec_ids: list[str]
    user_entries: list[dict[str, Any]] = field(default_factory=list)
    commit: str | None = None
    machine: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    scaling_spec_ids: list[str] | None = None
    corpus_problems: list[str] | None = None
    vocab_files: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def new(
        options: Mapping[str, Any],
        spec_ids: Iterable[str],
        user_entries: Iterable[dict[str, Any]] = (),
        *,
        scaling_spec_ids: Iterable[str] | None = None,
        corpus_problems: Iterable[str] | None = None,
    ) -> RunMeta:
        """The metadata of a run created now, on this machine, at this commit."""
        return RunMeta(
            options=dict(options),
            spec_ids=list(spec_ids),
            user_entries=list(user_entries),
            commit=git_commit(),
            machine=machine(),
            scaling_spec_ids=None if scaling_spec_ids is None else list(scaling_spec_ids),
            corpus_problems=None if corpus_problems is None else list(corpus_problems),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"options": self.options, "spec_ids": self.spec_ids}
        if self.scaling_spec_ids is not None:
            out["scaling_spec_ids"] = self.scaling_spec_ids
        out.update(machine=self.machine, commit=self.commit, versions=self.versions)
        if self.corpus_problems is not None:
            out["corpus_problems"] = self.corpus_problems
        out["user_entries"] = self.user_entries
        if self.vocab_files:
            out["vocab_files"] = self.vocab_files
        return {**out, **self.extra}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> RunMeta:
        """The metadata as stored; a key an older run lacks takes its empty value."""
        scaling, problems = data.get("scaling_spec_ids"), data.get("corpus_problems")
        return RunMeta(
            options=dict(data.get("options") or {}),
            spec_ids=list(data.get("spec_ids") or []),
            user_entries=list(data.get("user_entries") or []),
            commit=data.get("commit"),
            machine=dict(data.get("machine") or {}),
            versions=dict(data.get("versions") or {}),
            scaling_spec_ids=None if scaling is None else list(scaling),
            corpus_problems=None if problems is None else list(problems),
            vocab_files=dict(data.get("vocab_files") or {}),
            extra={k: v for k, v in data.items() if k not in _KNOWN},
        )
