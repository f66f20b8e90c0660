"""What an engine compiles: a regex, a JSON schema or a context-free grammar (in one of
three notations), with a stable id used in results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

SpecKind = Literal["regex", "json_schema", "grammar"]
# The notations a grammar is written in: llama.cpp's GBNF, Lark (with the parts of
# llguidance's dialect the front ends read) and the llama.cpp-style EBNF of
# transformers-cfg and xgrammar. Read by `tokensdfa-grammar` (engines/grammar).
Notation = Literal["gbnf", "lark", "ebnf"]
NOTATIONS: tuple[Notation, ...] = ("gbnf", "lark", "ebnf")


@dataclass(frozen=True)
class Spec:
    """One constraint. `id` is stable across runs (`SET/NAME`); `text` is the regex or the
    schema serialized as JSON or the grammar's text; `features` lists regex features
    (unicode-classes, inline-flags, lookaround, backreference, anchors) that an engine
    may not support. `converted`, for a schema only, is the regex the one schema converter
    made of it (`harness.language.converter.with_regex`), carried so that a worker never
    converts. `notation`, for a grammar only (and always there), names its notation."""

    id: str
    kind: SpecKind
    text: str
    features: frozenset[str] = field(default_factory=frozenset)
    examples: tuple[str, ...] = ()
    converted: str | None = None
    notation: Notation | None = None

    @staticmethod
    def regex(id: str, pattern: str, **kw: Any) -> Spec:
        return Spec(id=id, kind="regex", text=pattern, **kw)

    @staticmethod
    def schema(id: str, schema: dict[str, Any] | str, **kw: Any) -> Spec:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        return Spec(id=id, kind="json_schema", text=text, **kw)

    @staticmethod
    def grammar(id: str, text: str, notation: Notation, **kw: Any) -> Spec:
        return Spec(id=id, kind="grammar", text=text, notation=notation, **kw)

    def to_json(self) -> dict[str, Any]:
        """What crosses a process boundary (examples stay behind: workers get paths)."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "features": sorted(self.features),
        }
        if self.converted is not None:
            out["converted"] = self.converted
        if self.notation is not None:
            out["notation"] = self.notation
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> Spec:
        return Spec(
            id=data["id"],
            kind=data["kind"],
            text=data["text"],
            features=frozenset(data.get("features", ())),
            converted=data.get("converted"),
            notation=data.get("notation"),
        )
