"""Token paths: texts that match a spec (`harness.corpora.texts`), tokenized by a
vocabulary's real encoder.

A path is what a benchmark walks: the engine masks, advances one token, masks again. Each
text is tokenized with the vocabulary's real encoder (`vocab.encode`), never a greedy
longest match, because engines must be measured on the token sequences a model actually
emits.

Schema instances are serialized in one of three layouts: `compact` (no whitespace, which
every engine accepts), `spaced` (one space after `,` and `:`, what outlines-core's
`[ ]?` whitespace allows) and `pretty` (indented, only for engines with flexible
whitespace); `POLICY_LAYOUTS` maps an engine's `Policies.json_whitespace` to the layouts
it must accept. Regex texts are used as drawn (`verbatim`).

Paths are cached on disk under `$TOKENSIEVE_CACHE/paths/<set>/<vocab>/seed-<seed>/`, with
the reference's verdict on each (accepted, or the step it refused) when checked.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from harness.cache import cache_dir, read_json, write_json_atomic
from harness.corpora.texts import (
    DEFAULT_N,
    FORMAT,
    Source,
    digest,
    file_name,
    set_dir,
    texts_for,
    versions,
)
from harness.language import converter, reference
from harness.spec import Spec
from harness.vocab import Vocabulary

Layout = Literal["verbatim", "compact", "spaced", "pretty"]

SCHEMA_LAYOUTS: tuple[Layout, ...] = ("compact", "spaced", "pretty")
POLICY_LAYOUTS: dict[str, tuple[Layout, ...]] = {
    "none": ("compact",),
    "regex-builder": ("compact", "spaced"),
    "flexible": ("compact", "spaced", "pretty"),
}


@dataclass(frozen=True)
class TokenPath:
    """One tokenized text. `exact` says the ids decode to exactly the text's UTF-8 bytes
    (an encoder that adds a prefix space or a BOS token would break that). `reference` is
    the naive index's verdict (None until checked); `failed_step` is the index of the first
    refused token, or len(ids) when every token was allowed but the end is not accepting."""

    spec_id: str
    text: str
    ids: tuple[int, ...]
    source: Source
    layout: Layout
    exact: bool
    reference: bool | None = None
    failed_step: int | None = None


def serialize(value: Any, layout: Layout) -> str:
    """A JSON instance in one layout. Non-ASCII stays literal (models emit UTF-8); a lone
    surrogate, which cannot be UTF-8, is escaped instead."""
    indent = 2 if layout == "pretty" else None
    separators = (",", ":") if layout == "compact" else None
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=True)
    return text


# --- tokenization and cache ------------------------------------------------------------

_fingerprints: weakref.WeakKeyDictionary[Vocabulary, str] = weakref.WeakKeyDictionary()


def vocab_fingerprint(vocab: Vocabulary) -> str:
    """A digest of the tokens, EOS and special ids: two vocabularies that share a name but
    not their tokens (synthetic ones of different sizes) never share cached paths."""
    fp = _fingerprints.get(vocab)
    if fp is None:
        h = hashlib.sha256()
        h.update(f"{vocab.name}\0{vocab.eos_id}\0{sorted(vocab.special_ids)}\0".encode())
        for t in vocab.tokens:
            h.update(len(t).to_bytes(4, "little"))
            h.update(t)
        fp = h.hexdigest()
        _fingerprints[vocab] = fp
    return fp


def _tokenize(
    spec: Spec, vocab: Vocabulary, texts: Sequence[tuple[Any, Source]], layout: Layout
) -> list[TokenPath]:
    out = []
    verbatim = spec.kind != "json_schema"  # regex and grammar texts are used as drawn
    lay: Layout = "verbatim" if verbatim else layout
    for value, source in texts:
        text = str(value) if verbatim else serialize(value, layout)
        ids = tuple(vocab.encode(text))
        exact = vocab.decode(ids) == text.encode("utf-8")
        out.append(TokenPath(spec.id, text, ids, source, lay, exact))
    return out


def paths_for(
    spec: Spec,
    vocab: Vocabulary,
    seed: int = 0,
    n: int | None = None,
    layout: Layout = "compact",
    *,
    check: bool = False,
) -> list[TokenPath]:
    """Up to `n` token paths of `spec` (default 8 for a regex, 4 for a schema).

    `layout` applies to schema instances (see the module doc). With `check`, every path
    is walked through the reference naive index and its verdict recorded in the cache
    file and on the path; a rejected path is kept, never dropped. Raises a TokensieveError
    when the reference cannot be built (tokensdfa missing, schema not convertible, regex
    feature unsupported).
    """
    if spec.kind != "json_schema":
        layout = "verbatim"  # regex and grammar texts are used as drawn
    elif layout not in SCHEMA_LAYOUTS:
        raise ValueError(f"layout must be one of {SCHEMA_LAYOUTS} for a schema")
    n = DEFAULT_N[spec.kind] if n is None else n
    fp = vocab_fingerprint(vocab)
    key = digest(
        {
            "format": FORMAT,
            "spec": spec.id,
            "text": spec.text,
            "examples": list(spec.examples),
            "vocab": fp,
            "seed": seed,
            "n": n,
            "layout": layout,
            "versions": versions(spec),
        }
    )
    vocab_dir = re.sub(r"[^A-Za-z0-9._-]", "_", vocab.name) + "-" + fp[:12]
    path = cache_dir("paths", set_dir(spec), vocab_dir, f"seed-{seed}") / (
        f"{file_name(spec)}.{layout}.n{n}.{key[:16]}.json"
    )
    hit = read_json(path)
    if isinstance(hit, dict) and hit.get("key") == key:
        paths = [_path_from_json(p) for p in hit["paths"]]
        recorded = hit.get("reference")
        dirty = False
    else:
        paths = _tokenize(spec, vocab, texts_for(spec, seed, n).items, layout)
        recorded = None
        dirty = True
    current = recorded is not None and recorded.get("version") == reference.version()
    if check and not current:
        verdicts = reference_verdicts(spec, vocab, paths)
        recorded = {"version": reference.version(), "verdicts": verdicts}
        current = dirty = True
    if dirty:
        record: dict[str, Any] = {"key": key, "paths": [_path_to_json(p) for p in paths]}
        if recorded is not None:
            record["reference"] = recorded
        write_json_atomic(path, record)
    # Verdicts recorded by an older reference build are not shown as if they were current.
    return _with_verdicts(paths, recorded) if current and recorded is not None else paths


def _with_verdicts(paths: list[TokenPath], recorded: dict[str, Any]) -> list[TokenPath]:
    return [
        replace(p, reference=bool(ok), failed_step=step)
        for p, (ok, step) in zip(paths, recorded["verdicts"], strict=True)
    ]


def _path_to_json(p: TokenPath) -> dict[str, Any]:
    d = asdict(p)
    d["ids"] = list(p.ids)
    del d["reference"], d["failed_step"]
    return d


def _path_from_json(d: dict[str, Any]) -> TokenPath:
    return TokenPath(
        spec_id=d["spec_id"],
        text=d["text"],
        ids=tuple(d["ids"]),
        source=d["source"],
        layout=d["layout"],
        exact=d["exact"],
    )


# --- the reference check ---------------------------------------------------------------


def check_path(
    index: reference.Walkable, path: TokenPath | Sequence[int]
) -> tuple[bool, int | None]:
    """Walk `path` through a token-level index (`initial_state`, `next_state`,
    `is_accepting`). (True, None) if every token is allowed and the end accepts; else
    (False, step) with the first refused token's position, or len(ids) if the walk ends
    in a non-accepting state."""
    ids = path.ids if isinstance(path, TokenPath) else path
    state = index.initial_state
    for step, token in enumerate(ids):
        following = index.next_state(state, token)
        if following is None:
            return False, step
        state = following
    if not index.is_accepting(state):
        return False, len(ids)
    return True, None


def reference_verdicts(
    spec: Spec, vocab: Vocabulary, paths: Sequence[TokenPath]
) -> list[tuple[bool, int | None]]:
    """[(accepted, failed_step)] for each path, from the reference index."""
    if not paths:
        return []
    index = converter.reference_index(spec, vocab)
    return [check_path(index, p) for p in paths]


def rejected(paths: Sequence[TokenPath]) -> list[TokenPath]:
    """The paths the reference refused (checked ones only)."""
    return [p for p in paths if p.reference is False]
