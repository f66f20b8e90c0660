"""What an engine compiles: a regex or a JSON schema, with a stable id used in results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

SpecKind = Literal["regex", "json_schema"]


@dataclass(frozen=True)
class Spec:
    """One constraint. `id` is stable across runs (`SET/NAME`); `text` is the regex or the
    schema serialized as JSON; `features` lists regex features (unicode-classes,
    inline-flags, lookaround, backreference, anchors) that an engine may not support."""

    id: str
    kind: SpecKind
    text: str
    features: frozenset[str] = field(default_factory=frozenset)
    examples: tuple[str, ...] = ()

    @staticmethod
    def regex(id: str, pattern: str, **kw: Any) -> Spec:
        return Spec(id=id, kind="regex", text=pattern, **kw)

    @staticmethod
    def schema(id: str, schema: dict[str, Any] | str, **kw: Any) -> Spec:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        return Spec(id=id, kind="json_schema", text=text, **kw)
