"""JSON schema -> regex: the one conversion path every regex-only engine is fed from.

The regex engines (the naive reference, TokensDFA, outlines-core's Index) receive a
schema as one converter's regex, so they face the same language and a difference between
them is never a difference between converters. Two converters can be chosen
(`--converter`, `use`):
- `ours` (the default): the Rust core's compiler, `tokensdfa.schema_to_regex`, exact on
  the regular subset of JSON Schema or refusing with the keyword and JSON pointer, in the
  `optional-space` whitespace dialect (one optional space after `,` and `:`, the layout
  outlines-core's regexes use, so the engines' declared whitespace policy is unchanged);
- `outlines-core`: outlines-core's `build_regex_from_schema`, whose known faults
  (dropped `minimum`, ungrouped alternatives, ...) then become the reference's. With
  `ours`, that converter is still checked, on instances, as its own subject
  (`harness.engines.converter_subject`).

The choice lives in the environment (`TOKENSIEVE_CONVERTER`), so the worker processes a
command starts inherit it. Converting runs in a worker process (`harness.process`) under
a time limit and an address-space limit (outlines-core's builder can allocate gigabytes
and abort on some real schemas), and verdicts are cached on disk per converter build:
each schema is converted once.

A verdict is `[status, value]`: `["ok", regex]`, `["rejected", message]`, `["timeout",
seconds]` or `["crashed", what happened]`. A regex of any size is kept: how large a regex
an engine takes is the engine's own limit (`Capabilities.max_regex_chars`). The time the
converter took is kept beside it (`convert_ns`), so a cell can report conversion apart
from its engine's compile.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.cache import cache_dir, read_json, write_json_atomic
from harness.errors import BadInput, SpecError, UnsupportedSpec
from harness.language import reference
from harness.process import Service
from harness.results import Status
from harness.spec import Spec
from harness.vocab import Vocabulary

OURS = "ours"
OUTLINES = "outlines-core"
NAMES = (OURS, OUTLINES)
DEFAULT = OURS
ENV = "TOKENSIEVE_CONVERTER"
# The dialect ours converts in: outlines-core's whitespace, so that the engines' declared
# JSON whitespace policy ("regex-builder": compact and spaced layouts) holds for both; and
# strings with the escapes JSON requires only (what `json.dumps(ensure_ascii=False)` and
# serde_json write, and how the differ serializes instances), which keeps the regexes
# a third the size of every-escape ones.
OURS_WHITESPACE = "optional-space"
OURS_ESCAPES = "required"
# The longest regex ours writes: as outlines-core's, a regex of any size an engine may
# take is kept (each engine has its own limit); past this the compiler refuses, naming
# the size. Verdicts past DISK_CACHE_MAX stay off the disk cache (a multi-megabyte regex
# is cheaper to rebuild than to store) and are memoized in the process instead.
OURS_MAX_REGEX_BYTES = 64 << 20
# How many arrays and objects deep a value the schema leaves unconstrained nests in ours's
# language (the compiler's default): a declared bound of its dialect, which the differ
# counts as policy where it alone refuses a valid instance (`deeper_language`).
OURS_ANY_DEPTH = 2
# Everything ours is asked, as `tokensdfa.schema_to_regex`'s keyword arguments (and
# `tokensdfa.LazyIndex.from_schema`'s dialect).
OURS_DIALECT: dict[str, Any] = {
    "whitespace": OURS_WHITESPACE,
    "escapes": OURS_ESCAPES,
    "max_regex_bytes": OURS_MAX_REGEX_BYTES,
    "any_depth": OURS_ANY_DEPTH,
}
DISK_CACHE_MAX = 4 << 20
MEMO_ENTRIES = 8
CONVERT_TIMEOUT_S = 60.0
CONVERT_MEMORY_BYTES = 4 << 30


def check_name(name: str) -> None:
    """BadInput unless `name` is a converter."""
    if name not in NAMES:
        raise BadInput(f"converter {name!r} is not one of {', '.join(NAMES)}")


def use(name: str) -> None:
    """Make `name` the converter of this process and of every process it starts."""
    check_name(name)
    os.environ[ENV] = name


def current() -> str:
    """The converter in use: `TOKENSIEVE_CONVERTER`, else `ours`."""
    name = os.environ.get(ENV) or DEFAULT
    check_name(name)
    return name


def label(name: str | None = None) -> str:
    """How reports and messages name a converter."""
    name = name or current()
    if name == OURS:
        return f"ours (tokensdfa.schema_to_regex, {OURS_WHITESPACE}, {OURS_ESCAPES} escapes)"
    return name


class ConverterService:
    """The worker side: answers each {converter, text} with its verdict and the time."""

    def __init__(self, setup: Any) -> None:
        self.ready = None

    def handle(self, request: dict[str, str]) -> dict[str, Any]:
        started = time.perf_counter_ns()
        verdict = _CONVERT[request["converter"]](request["text"])
        return {"verdict": verdict, "convert_ns": time.perf_counter_ns() - started}


def _convert_ours(text: str) -> list[Any]:
    import tokensdfa

    try:
        regex = tokensdfa.schema_to_regex(text, **OURS_DIALECT)
        return ["ok", regex]
    except ValueError as exc:  # PatternError, UnsupportedPatternError, LimitError
        return ["rejected", " ".join(str(exc).split())]


def _convert_outlines(text: str) -> list[Any]:
    from outlines_core.json_schema import build_regex_from_schema

    try:
        return ["ok", build_regex_from_schema(text, None)]
    except Exception as exc:
        return ["rejected", " ".join(str(exc).split())]


# Each converter, in this process: its verdict for a schema text.
_CONVERT = {OURS: _convert_ours, OUTLINES: _convert_outlines}

_service = Service(
    "harness.language.converter:ConverterService",
    address_space=CONVERT_MEMORY_BYTES,
)


def version(name: str | None = None) -> str:
    """The converter's build: outlines-core's release, or for ours a digest of the
    compiled extension (its version number does not change with the compiler); "absent"
    when it is not installed."""
    name = name or current()
    if name == OURS:
        spec = importlib.util.find_spec("tokensdfa.tokensdfa")
        return "absent" if spec is None or spec.origin is None else _digest(spec.origin)
    try:
        return importlib.metadata.version("outlines-core")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


@functools.lru_cache(maxsize=4)
def _digest(path: str) -> str:
    return "tokensdfa-" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _cache_path(text: str, name: str, build: str) -> Any:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    # outlines-core's verdicts stay where they always were (v2, per release); ours are
    # kept per build of the extension
    parts = ("v2", build) if name == OUTLINES else ("v3", name, build)
    return cache_dir("schema-regex", *parts, digest[:2]) / f"{digest}.json"


def verdict(text: str, name: str | None = None) -> tuple[list[Any], int | None]:
    """(verdict, conversion time in ns or None) for a schema's JSON text by converter
    `name` (default: the one in use), cached."""
    name = name or current()
    build = version(name)
    if build == "absent":
        package = "tokensdfa" if name == OURS else OUTLINES
        return ["rejected", f"{package} is not installed"], None
    path = _cache_path(text, name, build)
    memo_key = (name, build, path.name)
    if memo_key in _memo:
        return _memo[memo_key]
    hit = read_json(path)
    if isinstance(hit, dict) and isinstance(hit.get("verdict"), list):
        return hit["verdict"], hit.get("convert_ns")
    reply = _service.ask({"converter": name, "text": text}, CONVERT_TIMEOUT_S)
    if reply.ok:
        found, ns = reply.value["verdict"], reply.value["convert_ns"]
    elif reply.status is Status.TIMEOUT:
        found, ns = ["timeout", CONVERT_TIMEOUT_S], None
    else:
        found, ns = ["crashed", reply.message], None
    if name == OURS and len(str(found[1])) > DISK_CACHE_MAX:
        while len(_memo) >= MEMO_ENTRIES:
            _memo.pop(next(iter(_memo)))
        _memo[memo_key] = (found, ns)
    else:
        write_json_atomic(path, {"verdict": found, "convert_ns": ns})
    return found, ns


# (converter, build, cache file name) -> verdict, for verdicts kept off the disk.
_memo: dict[tuple[str, str, str], tuple[list[Any], int | None]] = {}


def convert_now(text: str) -> str:
    """The regex of the converter in use for `text`, converted in this process with no
    cache: for timing a conversion beside an engine that compiles the schema itself (the
    gate). Only for schemas known to convert; ValueError with the reason otherwise."""
    status, value = _CONVERT[current()](text)
    if status != "ok":
        raise ValueError(f"schema-to-regex converter ({current()}): {value}")
    return str(value)


def in_dialect(
    text: str, dialect: tuple[tuple[str, str], ...], any_depth: int, max_recursion: int
) -> str:
    """Our converter's regex for `text` in an engine's JSON dialect
    (`Policies.json_dialect`: whitespace, escapes, numbers, integers, negative zero), with
    unconstrained values nested at most `any_depth` levels and a recursive `$ref` entered
    at most `max_recursion` times inside itself; converted in this process, uncached: the
    differ's dialect lanes call it in a worker, under the cell's time and memory limits.
    ValueError with the compiler's reason (PatternError, UnsupportedPatternError,
    LimitError)."""
    import tokensdfa

    return str(
        tokensdfa.schema_to_regex(
            text,
            **dict(dialect),
            max_regex_bytes=OURS_MAX_REGEX_BYTES,
            any_depth=any_depth,
            max_recursion=max_recursion,
        )
    )


def deeper_language(schema_text: str, any_depth: int) -> Callable[[str], bool] | None:
    """Ours's language of `schema_text` with unconstrained values nesting up to
    `any_depth` arrays and objects (the harness converts with `OURS_ANY_DEPTH`), as a
    test of whole texts: the lazy index's tree (no regex text, so no text size limit)
    over one token per byte, compiled in this process. None where the compiler refuses
    the schema at that depth. A text that is not UTF-8 (a lone surrogate) is not in it."""
    import tokensdfa

    vocab = tokensdfa.Vocabulary([bytes([b]) for b in range(256)] + [b""], 256, [256])
    dialect = {**OURS_DIALECT, "any_depth": any_depth}
    try:
        index = tokensdfa.LazyIndex.from_schema(schema_text, vocab, dialect)
    except (ValueError, MemoryError):
        return None

    def accepts(text: str) -> bool:
        try:
            state = reference.walk(index, text.encode())
        except UnicodeEncodeError:
            return False
        return state is not None and bool(index.is_accepting(state))

    return accepts


def convert_schema(text: str, name: str | None = None) -> list[Any]:
    """The verdict alone (see the module doc)."""
    return verdict(text, name)[0]


def _verdict_message(status: str, value: Any) -> str:
    if status == "rejected":
        return str(value)
    if status == "timeout":
        return f"the converter ran over {value:g} s"
    return (
        f"the converter died ({value}; it is stopped when it needs over "
        f"{CONVERT_MEMORY_BYTES >> 30} GiB)"
    )


def schema_to_regex(spec: Spec, engine: str = "naive", name: str | None = None) -> str:
    """The regex of `spec`: its text for a regex, converter `name`'s regex for a schema
    (default: the converter in use, whose regex the spec may already carry). Otherwise
    UnsupportedSpec (or SpecError, for a schema that is not valid) naming `engine`, the
    engine that asked (the failure belongs to its cell), and the converter's reason."""
    if spec.kind == "regex":
        return spec.text
    if spec.converted is not None and name in (None, current()):
        return spec.converted
    status, value = convert_schema(spec.text, name)
    if status == "ok":
        return str(value)
    message = f"schema-to-regex converter ({name or current()}): {_verdict_message(status, value)}"
    if status == "rejected" and not reference.spec_is_valid(spec):
        raise SpecError(engine, spec.id, message)
    raise UnsupportedSpec(engine, spec.id, message)


def reference_index(spec: Spec, vocab: Vocabulary) -> Any:
    """The naive reference index of `spec` over `vocab`: a schema through the converter in
    use, then `reference.build`."""
    return reference.build(
        schema_to_regex(spec), reference.native_vocabulary(vocab), reference.NAME, spec.id
    )


def with_regex(spec: Spec) -> Spec:
    """`spec` carrying the regex of the converter in use (a schema it handles), so a
    worker receives the regex with the schema and never converts again."""
    if spec.kind == "regex" or spec.converted is not None:
        return spec
    status, value = convert_schema(spec.text)
    return dataclasses.replace(spec, converted=str(value)) if status == "ok" else spec


def conversion_status(spec: Spec) -> str:
    """ "ok", "rejected", "timeout" or "crashed" (regex specs are "ok")."""
    return "ok" if spec.kind == "regex" else str(convert_schema(spec.text)[0])


def stop() -> None:
    """End the converter's worker now (it is also ended at exit)."""
    _service.stop()


# Each converter's part of an instance repro script (harness.diff.findings.instance_repro): the
# language it builds for SCHEMA.
INSTANCE_REPRO = {
    OURS: f"""
def accepts(text):
    # the language tokensieve's own compiler builds for the schema, walked byte by byte
    # through a lazy index over a vocabulary of one token per byte (plus EOS)
    import tokensdfa

    regex = tokensdfa.schema_to_regex(
        json.dumps(SCHEMA),
        whitespace={OURS_WHITESPACE!r},
        escapes={OURS_ESCAPES!r},
        max_regex_bytes={OURS_MAX_REGEX_BYTES!r},
    )
    vocab = tokensdfa.Vocabulary([bytes([b]) for b in range(256)] + [b""], 256, [256])
    index = tokensdfa.LazyIndex(regex, vocab)
    state = index.initial_state
    for byte in text.encode("utf-8", "surrogatepass"):
        state = index.next_state(state, byte)
        if state is None:
            return False
    return bool(index.is_accepting(state))
""",
    OUTLINES: """
def accepts(text):
    # the language outlines-core builds for the schema, read by Python's re
    from outlines_core.json_schema import build_regex_from_schema

    return re.fullmatch(build_regex_from_schema(json.dumps(SCHEMA)), text) is not None
""",
}
# What a repro of each converter's language needs installed.
REPRO_PACKAGE = {OURS: "tokensdfa (this repository's engines/)", OUTLINES: "outlines-core"}
# Who a repro explanation says did it.
REPRO_WHO = {
    OURS: "tokensieve's schema_to_regex",
    OUTLINES: "outlines-core's build_regex_from_schema",
}
