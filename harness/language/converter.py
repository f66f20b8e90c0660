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

A verdict is a `Conversion`: a `ConversionStatus` and its value, the regex (ok), the
converter's message (rejected), the time limit in seconds (timeout) or what happened
(crashed); on disk and on the worker's wire it is the list `[status, value]`
(`["ok", regex]`, ...), the form every cached verdict already has. A regex of any size is
kept: how large a regex an engine takes is the engine's own limit
(`Capabilities.max_regex_chars`). The time the converter took is kept beside it
(`convert_ns`), so a cell can report conversion apart from its engine's compile.
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
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cache import cache_dir, read_json, write_json_atomic
from harness.errors import BadInput, SpecError, UnsupportedSpec
from harness.language import grammar, reference
from harness.process import Service
from harness.results import Status
from harness.spec import Spec
from harness.vocab import Vocabulary

if TYPE_CHECKING:  # imported where it converts, so that an unbuilt extension costs only ours
    from harness.language.reference import TokenIndex

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


class ConversionStatus(StrEnum):
    """How one conversion ended. Its own vocabulary, not `harness.results.Status`, because
    only `ok` and `timeout` mean the same there: `rejected` is neither `unsupported` nor
    `error` until the reference's parser says whether the schema is valid at all (that is
    `schema_to_regex`'s call, per spec); `crashed` is the worker dying however it died, a
    crash or running out of its address space alike (the cached verdict does not tell
    them apart). The values are the spellings of the on-disk cache, which stays readable."""

    OK = "ok"  # the value is the regex
    REJECTED = "rejected"  # the converter refused the schema; the value is its message
    TIMEOUT = "timeout"  # the value is the time limit it ran over, in seconds
    CRASHED = "crashed"  # the worker died; the value is what happened


@dataclass(frozen=True)
class Conversion:
    """One converter's verdict on one schema text: `status` and its `value` (see
    `ConversionStatus`). Its JSON form, in the cache and in the worker's reply, is
    `[status, value]`."""

    status: ConversionStatus
    value: str | float

    @property
    def ok(self) -> bool:
        return self.status is ConversionStatus.OK

    @property
    def regex(self) -> str | None:
        """The regex, for a conversion that succeeded; else None."""
        return str(self.value) if self.ok else None

    @property
    def message(self) -> str:
        """Why a conversion failed, as a cell's message says it after the converter's name."""
        if self.status is ConversionStatus.REJECTED:
            return str(self.value)
        if self.status is ConversionStatus.TIMEOUT:
            return f"the converter ran over {float(self.value):g} s"
        if self.status is ConversionStatus.CRASHED:
            return (
                f"the converter died ({self.value}; it is stopped when it needs over "
                f"{CONVERT_MEMORY_BYTES >> 30} GiB)"
            )
        return "converted"

    def to_json(self) -> list[str | float]:
        return [self.status.value, self.value]

    @staticmethod
    def from_json(data: object) -> Conversion:
        """The conversion `to_json` wrote; ValueError for anything else (a cache file
        from elsewhere is then a miss, not a wrong verdict)."""
        if not isinstance(data, list) or len(data) != 2:
            raise ValueError(f"not a [status, value] verdict: {data!r:.80}")
        status, value = ConversionStatus(data[0]), data[1]
        seconds = isinstance(value, int | float) and not isinstance(value, bool)
        if not (seconds if status is ConversionStatus.TIMEOUT else isinstance(value, str)):
            raise ValueError(f"a {status} verdict with value {value!r:.80}")
        return Conversion(status, value)


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
        found = _CONVERT[request["converter"]](request["text"])
        return {"verdict": found.to_json(), "convert_ns": time.perf_counter_ns() - started}


def _rejected(exc: BaseException) -> Conversion:
    return Conversion(ConversionStatus.REJECTED, " ".join(str(exc).split()))


def _convert_ours(text: str) -> Conversion:
    import tokensdfa

    try:
        regex = tokensdfa.schema_to_regex(text, **OURS_DIALECT)
    except ValueError as exc:  # PatternError, UnsupportedPatternError, LimitError
        return _rejected(exc)
    return Conversion(ConversionStatus.OK, str(regex))


def _convert_outlines(text: str) -> Conversion:
    from outlines_core.json_schema import build_regex_from_schema

    try:
        return Conversion(ConversionStatus.OK, str(build_regex_from_schema(text, None)))
    except Exception as exc:
        return _rejected(exc)


# Each converter, in this process: its verdict for a schema text.
_CONVERT: dict[str, Callable[[str], Conversion]] = {
    OURS: _convert_ours,
    OUTLINES: _convert_outlines,
}

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


def _cache_path(text: str, name: str, build: str) -> Path:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    # outlines-core's verdicts stay where they always were (v2, per release); ours are
    # kept per build of the extension
    parts = ("v2", build) if name == OUTLINES else ("v3", name, build)
    return cache_dir("schema-regex", *parts, digest[:2]) / f"{digest}.json"


def verdict(text: str, name: str | None = None) -> tuple[Conversion, int | None]:
    """(verdict, conversion time in ns or None) for a schema's JSON text by converter
    `name` (default: the one in use), cached."""
    name = name or current()
    build = version(name)
    if build == "absent":
        package = "tokensdfa" if name == OURS else OUTLINES
        return Conversion(ConversionStatus.REJECTED, f"{package} is not installed"), None
    path = _cache_path(text, name, build)
    memo_key = (name, build, path.name)
    if memo_key in _memo:
        return _memo[memo_key]
    cached = _read_cached(path)
    if cached is not None:
        return cached
    reply = _service.ask({"converter": name, "text": text}, CONVERT_TIMEOUT_S)
    ns: int | None = None
    if reply.ok:
        found, ns = Conversion.from_json(reply.value["verdict"]), reply.value["convert_ns"]
    elif reply.status is Status.TIMEOUT:
        found = Conversion(ConversionStatus.TIMEOUT, CONVERT_TIMEOUT_S)
    else:
        found = Conversion(ConversionStatus.CRASHED, str(reply.message))
    if name == OURS and len(str(found.value)) > DISK_CACHE_MAX:
        while len(_memo) >= MEMO_ENTRIES:
            _memo.pop(next(iter(_memo)))
        _memo[memo_key] = (found, ns)
    else:
        write_json_atomic(path, {"verdict": found.to_json(), "convert_ns": ns})
    return found, ns


def _read_cached(path: Path) -> tuple[Conversion, int | None] | None:
    """The verdict and time cached at `path`; None when there is none (or it is not one)."""
    hit = read_json(path)
    if not isinstance(hit, dict):
        return None
    try:
        found = Conversion.from_json(hit.get("verdict"))
    except ValueError:
        return None
    ns = hit.get("convert_ns")
    return found, ns if isinstance(ns, int) else None


# (converter, build, cache file name) -> verdict, for verdicts kept off the disk.
_memo: dict[tuple[str, str, str], tuple[Conversion, int | None]] = {}


def convert_now(text: str) -> str:
    """The regex of the converter in use for `text`, converted in this process with no
    cache: for timing a conversion beside an engine that compiles the schema itself (the
    gate). Only for schemas known to convert; ValueError with the reason otherwise."""
    found = _CONVERT[current()](text)
    if found.regex is None:
        raise ValueError(f"schema-to-regex converter ({current()}): {found.value}")
    return found.regex


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

    # The adapter's names and values as declared: the compiler checks them (ValueError for
    # one it does not know), as it checks OURS_DIALECT's.
    options: dict[str, Any] = dict(dialect)
    return tokensdfa.schema_to_regex(
        text,
        **options,
        max_regex_bytes=OURS_MAX_REGEX_BYTES,
        any_depth=any_depth,
        max_recursion=max_recursion,
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


def convert_schema(text: str, name: str | None = None) -> Conversion:
    """The verdict alone (see the module doc)."""
    return verdict(text, name)[0]


def schema_to_regex(spec: Spec, engine: str = "naive", name: str | None = None) -> str:
    """The regex of `spec`: its text for a regex, converter `name`'s regex for a schema
    (default: the converter in use, whose regex the spec may already carry). Otherwise
    UnsupportedSpec (or SpecError, for a schema that is not valid) naming `engine`, the
    engine that asked (the failure belongs to its cell), and the converter's reason."""
    if spec.kind == "regex":
        return spec.text
    if spec.kind == "grammar":
        raise UnsupportedSpec(engine, spec.id, "a grammar is not a regular language: no regex")
    if spec.converted is not None and name in (None, current()):
        return spec.converted
    found = convert_schema(spec.text, name)
    if found.regex is not None:
        return found.regex
    message = f"schema-to-regex converter ({name or current()}): {found.message}"
    if found.status is ConversionStatus.REJECTED and not reference.spec_is_valid(spec):
        raise SpecError(engine, spec.id, message)
    raise UnsupportedSpec(engine, spec.id, message)


def reference_index(spec: Spec, vocab: Vocabulary) -> TokenIndex:
    """The naive reference index of `spec` over `vocab`: a schema through the converter in
    use, then `reference.build`; a grammar's Earley reference (`grammar.build`)."""
    if spec.kind == "grammar":
        return grammar.build(spec, reference.native_vocabulary(vocab))
    return reference.build(
        schema_to_regex(spec), reference.native_vocabulary(vocab), reference.NAME, spec.id
    )


def with_regex(spec: Spec) -> Spec:
    """`spec` carrying the regex of the converter in use (a schema it handles), so a
    worker receives the regex with the schema and never converts again."""
    if spec.kind != "json_schema" or spec.converted is not None:
        return spec
    regex = convert_schema(spec.text).regex
    return spec if regex is None else dataclasses.replace(spec, converted=regex)


def conversion_status(spec: Spec) -> ConversionStatus:
    """How the converter in use fares on `spec` (a regex or grammar spec is `ok`)."""
    if spec.kind != "json_schema":
        return ConversionStatus.OK
    return convert_schema(spec.text).status


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
