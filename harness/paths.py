"""Token paths: deterministic texts that match a spec, tokenized by a vocabulary's encoder.

A path is what a benchmark walks: the engine masks, advances one token, masks again. Texts
come from the spec's hand-written examples (regex and handwritten schemas), MaskBench's
valid instances, hypothesis `from_regex` draws, or hypothesis-jsonschema instances, all
with a fixed seed so two runs produce the same texts. Each text is tokenized with the
vocabulary's real encoder (`vocab.encode`), never a greedy longest match, because engines
must be measured on the token sequences a model actually emits.

Schema instances are serialized in one of three layouts: `compact` (no whitespace, which
every engine accepts), `spaced` (one space after `,` and `:`, what outlines-core's
`[ ]?` whitespace allows) and `pretty` (indented, only for engines with flexible
whitespace); `POLICY_LAYOUTS` maps an engine's `Policies.json_whitespace` to the layouts
it must accept. Regex texts are used as drawn (`verbatim`).

Hypothesis runs in one long-lived worker process with a time and memory budget per
request (hypothesis-jsonschema can take minutes on a large real schema), and with its
harvest of literals from loaded modules turned off, so the texts of a seed do not depend
on what the calling process has imported.

Paths are cached on disk under `$TOKENSIEVE_CACHE/paths/<set>/<vocab>/seed-<seed>/`,
texts (vocabulary-independent) under `.../<set>/texts/seed-<seed>/`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import signal
import types
import unicodedata
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from harness.corpus import (
    ChildWorker,
    cache_dir,
    child_command,
    compact_json,
    convert_schema,
    limit_memory,
    python_regex,
    read_json,
    schema_to_regex,
    serve,
    write_json_atomic,
)
from harness.errors import EngineUnavailable, MissingData, SpecError, UnsupportedSpec
from harness.spec import Spec
from harness.vocab import Vocabulary

Source = Literal["example", "hypothesis", "maskbench-valid", "generated"]
Layout = Literal["verbatim", "compact", "spaced", "pretty"]

SCHEMA_LAYOUTS: tuple[Layout, ...] = ("compact", "spaced", "pretty")
POLICY_LAYOUTS: dict[str, tuple[Layout, ...]] = {
    "none": ("compact",),
    "regex-builder": ("compact", "spaced"),
    "flexible": ("compact", "spaced", "pretty"),
}
DEFAULT_N = {"regex": 8, "json_schema": 4}
REFERENCE = "tokensdfa-naive"
# Bump when the way texts or paths are produced changes, so old cache files are ignored.
FORMAT = 1
# Draws per wanted text: duplicates and filtered-out draws are common for small languages.
DRAW_FACTOR = 3
# Budget of one schema's instance generation (texts are cached, so it is paid once).
GENERATE_TIMEOUT_S = 30.0
GENERATE_MEMORY_BYTES = 4 << 30
# Time one Python `re` match of an instance against a converted regex may take.
RANK_BUDGET_S = 0.2


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


# --- texts -----------------------------------------------------------------------------


def _versions(spec: Spec) -> dict[str, str]:
    names = ["hypothesis"]
    if spec.kind == "json_schema":
        names += ["hypothesis-jsonschema", "outlines-core", "jsonschema"]
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def _digest(value: Any) -> str:
    blob = json.dumps(value, sort_keys=True).encode("ascii")
    return hashlib.sha256(blob).hexdigest()


def _file_name(spec: Spec) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", spec.id.split("/", 1)[-1])


def _set_name(spec: Spec) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", spec.id.split("/", 1)[0])


@dataclass(frozen=True)
class Texts:
    """A spec's path texts before layout (strings for regexes, JSON values for schemas),
    each with its source, and notes on why fewer than asked came out, if any."""

    items: tuple[tuple[Any, Source], ...]
    notes: tuple[str, ...] = ()


def _draw(strategy: Any, seed: int, count: int) -> tuple[list[Any], str | None]:
    """Up to `count` values of `strategy`, the same ones for the same seed on every run,
    and why drawing stopped early, if it did.

    Hypothesis is driven through `@given` with `@seed` and no example database, so the
    sequence depends only on the seed and hypothesis' version (part of the cache key).
    Every example draws (never an early return): hypothesis treats a test that sometimes
    stops drawing as a flaky strategy.
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed
    from hypothesis import strategies as st

    out: list[Any] = []

    # Built on hypothesis' own defaults, not the loaded profile: a test profile must not
    # change which texts a seed yields.
    @hyp_seed(seed)
    @settings(
        settings.get_profile("default"),
        database=None,
        max_examples=count,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=False,
        print_blob=False,
    )
    @given(st.data())
    def collect(data: Any) -> None:
        out.append(data.draw(strategy))

    try:
        collect()
    except Exception as exc:
        # Unsatisfiable, unresolvable $refs, constructs the generator lacks: what was drawn
        # before the failure is still valid, and the note says why there is not more.
        return out, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    return out, None


def _ascii_alphabet() -> Any:
    from hypothesis import strategies as st

    return st.characters(codec="ascii", exclude_categories=("Cc",), include_characters="\t\n\r")


def _unicode_alphabet() -> Any:
    from hypothesis import strategies as st

    # Surrogates cannot be encoded; private-use and unassigned code points are not text.
    return st.characters(exclude_categories=("Cc", "Cs", "Co", "Cn"), include_characters="\t\n\r")


def _regex_draws(pattern: re.Pattern[str], seed: int, want: int) -> tuple[list[str], list[str]]:
    """Distinct hypothesis draws that Python's `re` fully matches, in draw order.

    ASCII first, since LLM output for these formats is mostly ASCII and `\\d`/`\\w`/`\\s`
    differ between regex dialects outside ASCII; patterns that need other characters (a
    Cyrillic range, `[^\\x00-\\x7F]`) fall back to the whole Unicode alphabet.
    """
    from hypothesis import strategies as st

    found: list[str] = []
    notes: list[str] = []
    for alphabet in (_ascii_alphabet(), _unicode_alphabet()):
        try:
            strategy = st.from_regex(pattern, fullmatch=True, alphabet=alphabet)
        except Exception as exc:
            notes.append(f"from_regex: {type(exc).__name__}: {exc}")
            continue
        drawn, note = _draw(strategy, seed, want * DRAW_FACTOR)
        for s in drawn:
            if isinstance(s, str) and s not in found and pattern.fullmatch(s):
                found.append(s)
        if 2 * len(found) >= want:
            return found, []
        if note:
            notes.append(note)
    return found, notes


def _regex_texts(spec: Spec, seed: int, n: int) -> Texts:
    examples = list(dict.fromkeys(spec.examples))
    compiled = python_regex(spec.text)
    # Half hand-written, half drawn, so both kinds are always represented.
    head = examples[: (n + 1) // 2]
    out: list[tuple[Any, Source]] = [(x, "example") for x in head]
    notes: list[str] = []
    if compiled is None:
        notes.append("Python's re cannot compile this pattern: examples only")
    else:
        request = {"kind": "regex", "pattern": spec.text, "seed": seed, "want": n}
        drawn, notes = _draw_in_worker(request, "hypothesis from_regex")
        out += [(s, "hypothesis") for s in drawn if s not in examples][: n - len(out)]
    out += [(x, "example") for x in examples[len(head) :]][: max(0, n - len(out))]
    return Texts(tuple(out), tuple(notes))


class _LegacyMany:
    """The `many(...).more()` protocol hypothesis-jsonschema 0.23 uses to draw objects,
    on top of the `with many(...) as m: for _ in m:` protocol newer hypothesis has instead
    (the old method is gone, so every object schema failed with AttributeError)."""

    def __init__(self, data: Any, **kwargs: Any) -> None:
        from hypothesis.internal.conjecture import utils as cu

        self._many = cu.many(data, **kwargs)
        self._many.__enter__()
        self._steps = iter(self._many)

    def more(self) -> bool:
        if next(self._steps, False) is None:
            return True
        self._many.__exit__(None, None, None)
        return False

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


def _patch_hypothesis_jsonschema() -> None:
    """Point hypothesis-jsonschema's `cu.many` (the only name it takes from that module)
    at `_LegacyMany` when the installed hypothesis lacks `many.more`."""
    from hypothesis.internal.conjecture import utils as cu
    from hypothesis_jsonschema import _from_schema

    if not hasattr(cu.many, "more") and getattr(_from_schema.cu, "many", None) is cu.many:
        _from_schema.cu = types.SimpleNamespace(many=_LegacyMany)  # type: ignore[assignment]


def _extra_formats() -> dict[str, Any]:
    from hypothesis import strategies as st

    return {"uuid": st.uuids().map(str)}


def _plain(value: Any) -> bool:
    """No control, surrogate, private-use or unassigned characters in any string: what
    a model writes in practice, and what outlines' string regex (which excludes
    \\x00-\\x1F and \\x7F-\\x9F) can match."""
    if isinstance(value, str):
        return all(unicodedata.category(c)[0] != "C" or c in "\t\n\r" for c in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return True


def _generate_instances(
    schema_text: str, seed: int, count: int, regex: str | None
) -> tuple[list[Any], str | None]:
    """Distinct instances from hypothesis-jsonschema that jsonschema confirms are valid,
    keys in schema order, ranked by `_rank`."""
    from hypothesis_jsonschema import from_schema
    from jsonschema.validators import validator_for

    _patch_hypothesis_jsonschema()
    schema = json.loads(schema_text)
    try:
        cls = validator_for(schema)
        # Formats are checked too: a "uuid" that is not one is no valid instance to a
        # grammar engine, whatever the schema draft says about annotations.
        validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        # hypothesis-jsonschema has no strategy for "uuid" and would ignore the format.
        # A copy: hypothesis-jsonschema rewrites the schema it is given (refs inlined,
        # $defs dropped), and `schema_order` needs the original.
        strategy = from_schema(
            json.loads(schema_text), allow_x00=False, custom_formats=_extra_formats()
        )
    except Exception as exc:
        return [], f"hypothesis-jsonschema: {type(exc).__name__}: {str(exc)[:200]}"
    drawn, note = _draw(strategy, seed, count)
    out: list[Any] = []
    seen: set[str] = set()
    invalid = 0
    for value in drawn:
        value = schema_order(value, schema)
        key = compact_json(value)
        if key in seen:
            continue
        if validator.is_valid(value):
            seen.add(key)
            out.append(value)
        else:
            invalid += 1
    if invalid:
        extra = f"{invalid} generated instance(s) failed jsonschema validation"
        note = f"{note}; {extra}" if note else extra
    return _rank(out, regex), note


class _OverBudget(Exception):
    pass


def _within(seconds: float, work: Callable[[], Any]) -> Any:
    """`work()`, or raise _OverBudget after `seconds`. Python's regex engine backtracks
    and can take exponential time on a converted schema's regex; it does check for
    signals, so an interval timer stops it. Worker main thread only."""

    def stop(*_: Any) -> None:
        raise _OverBudget

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _rank(values: list[Any], regex: str | None) -> list[Any]:
    """Instances the converted regex accepts first (outlines' regex forbids properties a
    schema merely allows, and a path the regex refuses measures nothing), then plain text
    before control and private-use characters; draw order among equals."""
    rx = None
    if regex is not None:
        try:
            rx = _within(RANK_BUDGET_S * 10, lambda: re.compile(regex))
        except (_OverBudget, re.error, RecursionError, OverflowError):
            rx = None

    def refused(value: Any) -> bool:
        if rx is None:
            return False
        text = compact_json(value)
        try:
            return bool(_within(RANK_BUDGET_S, lambda: rx.fullmatch(text) is None))
        except _OverBudget:
            return True

    return sorted(values, key=lambda v: (refused(v), not _plain(v)))


def worker_main(memory_limit: int) -> None:
    """Child process where every hypothesis draw happens (see `_ignore_local_constants`),
    under a memory limit; the parent adds the time limit."""
    limit_memory(memory_limit)
    _ignore_local_constants()
    serve(_answer)


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    if request["kind"] == "regex":
        pattern = re.compile(request["pattern"])
        found, notes = _regex_draws(pattern, request["seed"], request["want"])
        return {"values": found, "notes": notes}
    values, note = _generate_instances(
        request["schema"], request["seed"], request["count"], request.get("regex")
    )
    return {"values": values, "notes": [note] if note else []}


def _ignore_local_constants() -> None:
    """Hypothesis mixes literals harvested from every loaded non-library module into its
    draws, so one seed yields other texts depending on what the process has imported
    (pytest and a test file, or an edited harness module). Turning the harvest off in the
    worker leaves the seed and hypothesis' version as the only inputs."""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        providers._get_local_constants = providers.Constants


_worker = ChildWorker(
    lambda: child_command("harness.paths", "worker_main", GENERATE_MEMORY_BYTES),
    lambda: GENERATE_TIMEOUT_S,
)


def _draw_in_worker(request: dict[str, Any], what: str) -> tuple[list[Any], list[str]]:
    status, answer = _worker.ask(request)
    if status == "ok":
        return list(answer["values"]), list(answer["notes"])
    if status == "timeout":
        return [], [f"{what} ran over {answer:g} s"]
    return [], [f"{what} died (exit code {answer})"]


def stop_worker() -> None:
    """End the draw worker now (it is also ended at exit)."""
    _worker.stop()


def _resolve(schema: Any, root: Any) -> Any:
    """Follow local `$ref`s (`#/...` JSON pointers) to the schema they name."""
    for _ in range(32):  # a ref cycle without structure in between ends here
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        node = root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return schema
        schema = node
    return schema


def _branches(schema: Any, root: Any) -> list[dict[str, Any]]:
    """The schema and its anyOf/oneOf/allOf branches, refs resolved, depth first."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return []
    out = [schema]
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []) if isinstance(schema.get(key), list) else []:
            out += _branches(sub, root)
    return out


def schema_order(value: Any, schema: Any, root: Any | None = None, depth: int = 0) -> Any:
    """`value` with each object's keys in the order its schema declares them.

    hypothesis-jsonschema emits keys sorted; outlines-core's regex (and any engine that
    follows the schema) expects `properties` order, so generated instances are put in
    that order before they are serialized. Keys the schema does not name keep their
    relative order at the end.
    """
    root = schema if root is None else root
    if depth > 64:
        return value
    nodes = _branches(schema, root)
    if isinstance(value, dict):
        order: dict[str, int] = {}
        for node in nodes:
            props = node.get("properties")
            if isinstance(props, dict):
                for k in props:
                    order.setdefault(k, len(order))
        keys = sorted(value, key=lambda k: order.get(k, len(order)))
        return {
            k: schema_order(value[k], _property_schema(nodes, k), root, depth + 1) for k in keys
        }
    if isinstance(value, list):
        return [
            schema_order(v, _item_schema(nodes, i), root, depth + 1) for i, v in enumerate(value)
        ]
    return value


def _property_schema(nodes: list[dict[str, Any]], key: str) -> Any:
    for node in nodes:
        props = node.get("properties")
        if isinstance(props, dict) and key in props:
            return props[key]
    for node in nodes:
        if isinstance(node.get("additionalProperties"), dict):
            return node["additionalProperties"]
    return {}


def _item_schema(nodes: list[dict[str, Any]], index: int) -> Any:
    for node in nodes:
        prefix = node.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            return prefix[index]
        items = node.get("items")
        if isinstance(items, list) and index < len(items):  # draft 4-7 tuple form
            return items[index]
        if isinstance(items, dict):
            return items
    return {}


def _schema_texts(spec: Spec, seed: int, n: int) -> Texts:
    from_maskbench = spec.id.startswith("maskbench/")
    label: Source = "maskbench-valid" if from_maskbench else "example"
    out: list[tuple[Any, Source]] = [(json.loads(x), label) for x in spec.examples[:n]]
    # MaskBench's own valid instances are the point of that set; generate only where a
    # file has none.
    if len(out) >= n or (from_maskbench and out):
        return Texts(tuple(out))
    status, regex = convert_schema(spec.text)
    request = {
        "kind": "schema",
        "schema": spec.text,
        "seed": seed,
        "count": n * DRAW_FACTOR,
        "regex": regex if status == "ok" else None,
    }
    generated, notes = _draw_in_worker(request, "hypothesis-jsonschema")
    known = {compact_json(v) for v, _ in out}
    out += [(g, "generated") for g in generated if compact_json(g) not in known][: n - len(out)]
    return Texts(tuple(out), tuple(notes))


def texts_for(spec: Spec, seed: int = 0, n: int | None = None) -> Texts:
    """Up to `n` path texts of `spec` before layout, cached on disk: hypothesis draws
    cost far more than tokenizing, and they do not depend on the vocabulary."""
    n = DEFAULT_N[spec.kind] if n is None else n
    key = _digest(
        {
            "format": FORMAT,
            "kind": spec.kind,
            "text": spec.text,
            "examples": list(spec.examples),
            "seed": seed,
            "n": n,
            "versions": _versions(spec),
        }
    )
    path = cache_dir("paths", _set_name(spec), "texts", f"seed-{seed}") / (
        f"{_file_name(spec)}.n{n}.{key[:16]}.json"
    )
    hit = read_json(path)
    if isinstance(hit, dict) and hit.get("key") == key:
        items = tuple((item["value"], item["source"]) for item in hit["texts"])
        return Texts(items, tuple(hit.get("notes", ())))
    texts = _regex_texts(spec, seed, n) if spec.kind == "regex" else _schema_texts(spec, seed, n)
    record = {
        "key": key,
        "texts": [{"value": v, "source": s} for v, s in texts.items],
        "notes": list(texts.notes),
    }
    write_json_atomic(path, record)
    return texts


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


def _encode(vocab: Vocabulary, text: str) -> list[int]:
    try:
        return list(vocab.encode(text))
    except ValueError as exc:
        if "no encoder" in str(exc):
            raise MissingData(
                f"vocabulary {vocab.name} has no encoder; token paths need its real tokenizer"
            ) from exc
        raise


def _tokenize(
    spec: Spec, vocab: Vocabulary, texts: Sequence[tuple[Any, Source]], layout: Layout
) -> list[TokenPath]:
    out = []
    lay: Layout = "verbatim" if spec.kind == "regex" else layout
    for value, source in texts:
        text = str(value) if spec.kind == "regex" else serialize(value, layout)
        ids = tuple(_encode(vocab, text))
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
    if spec.kind == "regex":
        layout = "verbatim"  # regex texts are used as drawn
    elif layout not in SCHEMA_LAYOUTS:
        raise ValueError(f"layout must be one of {SCHEMA_LAYOUTS} for a schema")
    n = DEFAULT_N[spec.kind] if n is None else n
    fp = vocab_fingerprint(vocab)
    key = _digest(
        {
            "format": FORMAT,
            "spec": spec.id,
            "text": spec.text,
            "examples": list(spec.examples),
            "vocab": fp,
            "seed": seed,
            "n": n,
            "layout": layout,
            "versions": _versions(spec),
        }
    )
    vocab_dir = re.sub(r"[^A-Za-z0-9._-]", "_", vocab.name) + "-" + fp[:12]
    path = cache_dir("paths", _set_name(spec), vocab_dir, f"seed-{seed}") / (
        f"{_file_name(spec)}.{layout}.n{n}.{key[:16]}.json"
    )
    hit = read_json(path)
    if isinstance(hit, dict) and hit.get("key") == key:
        paths = [_path_from_json(p) for p in hit["paths"]]
        reference = hit.get("reference")
        dirty = False
    else:
        paths = _tokenize(spec, vocab, texts_for(spec, seed, n).items, layout)
        reference = None
        dirty = True
    current = reference is not None and reference.get("version") == _reference_version()
    if check and not current:
        verdicts = reference_verdicts(spec, vocab, paths)
        reference = {"version": _reference_version(), "verdicts": verdicts}
        current = dirty = True
    if dirty:
        record: dict[str, Any] = {"key": key, "paths": [_path_to_json(p) for p in paths]}
        if reference is not None:
            record["reference"] = reference
        write_json_atomic(path, record)
    # Verdicts recorded by an older reference build are not shown as if they were current.
    return _with_verdicts(paths, reference) if current and reference is not None else paths


def _with_verdicts(paths: list[TokenPath], reference: dict[str, Any]) -> list[TokenPath]:
    return [
        replace(p, reference=bool(ok), failed_step=step)
        for p, (ok, step) in zip(paths, reference["verdicts"], strict=True)
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


def check_path(index: Any, path: TokenPath | Sequence[int]) -> tuple[bool, int | None]:
    """Walk `path` through a token-level index (`initial_state`, `next_state`,
    `is_accepting`). (True, None) if every token is allowed and the end accepts; else
    (False, step) with the first refused token's position, or len(ids) if the walk ends
    in a non-accepting state."""
    ids = path.ids if isinstance(path, TokenPath) else path
    state = index.initial_state
    for step, token in enumerate(ids):
        state = index.next_state(state, token)
        if state is None:
            return False, step
    if not index.is_accepting(state):
        return False, len(ids)
    return True, None


def _reference_version() -> str:
    try:
        import tokensdfa

        return str(tokensdfa.__version__)
    except ImportError:
        return "absent"


_reference_vocabs: weakref.WeakKeyDictionary[Vocabulary, Any] = weakref.WeakKeyDictionary()


def reference_index(spec: Spec, vocab: Vocabulary) -> Any:
    """The naive reference index of `spec` over `vocab` (schemas via `schema_to_regex`)."""
    try:
        import tokensdfa
    except ImportError as exc:
        raise EngineUnavailable(f"{REFERENCE}: the tokensdfa extension is not built") from exc
    regex = schema_to_regex(spec)
    rv = _reference_vocabs.get(vocab)
    if rv is None:
        rv = tokensdfa.Vocabulary(list(vocab.tokens), vocab.eos_id, sorted(vocab.special_ids))
        _reference_vocabs[vocab] = rv
    try:
        return tokensdfa.NaiveIndex(regex, rv)
    except ValueError as exc:
        message = " ".join(str(exc).split())
        if "not supported" in message or "unsupported" in message:
            raise UnsupportedSpec(REFERENCE, spec.id, message) from exc
        raise SpecError(REFERENCE, spec.id, message) from exc


def reference_verdicts(
    spec: Spec, vocab: Vocabulary, paths: Sequence[TokenPath]
) -> list[tuple[bool, int | None]]:
    """[(accepted, failed_step)] for each path, from the reference index."""
    if not paths:
        return []
    index = reference_index(spec, vocab)
    return [check_path(index, p) for p in paths]


def rejected(paths: Sequence[TokenPath]) -> list[TokenPath]:
    """The paths the reference refused (checked ones only)."""
    return [p for p in paths if p.reference is False]
