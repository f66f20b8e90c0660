"""One spec of a corpus with what the corpus knows about it (`Entry`), how a schema
becomes one (`schema_entry`), and the rule that ids within a set are unique (`unique` for
the built-in sets, where a repeat is a bug; `distinct` for what a user names, where the
same spec named twice counts once).
Every reader of specs (the manifest's sets, MaskBench, a user's files) builds these."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.errors import BadInput
from harness.spec import Spec


@dataclass(frozen=True)
class Entry:
    """One spec with what the corpus knows about it: where it comes from, its tags, and
    for schemas the parsed valid/invalid instances (valid ones are also `spec.examples`,
    serialized compactly)."""

    spec: Spec
    source: str
    tags: tuple[str, ...] = ()
    valid: tuple[Any, ...] = ()
    invalid: tuple[Any, ...] = ()

    @property
    def set_name(self) -> str:
        return self.spec.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.spec.id.split("/", 1)[1]


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def schema_entry(
    spec_id: str,
    schema: Any,
    *,
    source: str,
    tags: Iterable[str] = (),
    valid: Iterable[Any] = (),
    invalid: Iterable[Any] = (),
) -> Entry:
    valid = tuple(valid)
    spec = Spec.schema(spec_id, json.dumps(schema), examples=tuple(map(compact_json, valid)))
    return Entry(spec, source=source, tags=tuple(tags), valid=valid, invalid=tuple(invalid))


def unique(found: list[Entry]) -> tuple[Entry, ...]:
    seen: set[str] = set()
    for e in found:
        if e.spec.id in seen:
            raise ValueError(f"duplicate spec id {e.spec.id}")
        seen.add(e.spec.id)
    return tuple(found)


def distinct(found: Iterable[Entry]) -> tuple[Entry, ...]:
    """`found` with repeats of one spec dropped (the same id, spec and instances: a file
    or a corpus id named twice), in order; two different specs under one id are
    BadInput naming both sources."""
    kept: dict[str, Entry] = {}
    for e in found:
        first = kept.setdefault(e.spec.id, e)
        if first is not e and (first.spec, first.valid, first.invalid) != (
            e.spec,
            e.valid,
            e.invalid,
        ):
            raise BadInput(
                f"two different specs have the id {e.spec.id}: {first.source} and {e.source}"
            )
    return tuple(kept.values())
