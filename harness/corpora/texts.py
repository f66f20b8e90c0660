"""Texts that match a spec, drawn deterministically: the spec's hand-written examples,
MaskBench's valid instances, hypothesis `from_regex` draws and hypothesis-jsonschema
instances, all with a fixed seed so two runs draw the same texts. Texts do not depend on
the vocabulary; `harness.corpora.paths` tokenizes them.

Hypothesis runs in one long-lived worker (`harness.process`) with a time and memory
budget per request (hypothesis-jsonschema can take minutes on a large real schema), and
with its harvest of literals from loaded modules turned off, so the texts of a seed do not
depend on what the calling process has imported. Texts are cached on disk under
`$TOKENSIEVE_CACHE/paths/<set>/texts/seed-<seed>/`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import signal
import threading
import types
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from harness.cache import cache_dir, read_json, write_json_atomic
from harness.corpora import judge
from harness.corpora.entry import compact_json
from harness.corpora.schema_order import schema_order
from harness.language import converter, grammar
from harness.language.converter import convert_schema
from harness.language.regex_syntax import python_regex
from harness.process import Service
from harness.results import Status
from harness.spec import Spec

Source = Literal["example", "hypothesis", "maskbench-valid", "generated"]

DEFAULT_N = {"regex": 8, "json_schema": 4, "grammar": 6}
# Bump when the way texts or paths are produced changes, so old cache files are ignored.
FORMAT = 3  # 3: instances judged by `judge` (ECMA-262 patterns, exact multipleOf)
# Draws per wanted text: duplicates and filtered-out draws are common for small languages.
DRAW_FACTOR = 3
# Budget of one schema's instance generation (texts are cached, so it is paid once).
GENERATE_TIMEOUT_S = 30.0
GENERATE_MEMORY_BYTES = 4 << 30
# Time one Python `re` match of an instance against a converted regex may take.
RANK_BUDGET_S = 0.2


def versions(spec: Spec) -> dict[str, str]:
    names = ["hypothesis"]
    if spec.kind == "json_schema":
        names += ["hypothesis-jsonschema", "outlines-core", "jsonschema", "regress"]
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    if spec.kind == "json_schema":  # the converted regex ranks the draws (`_rank`)
        out["converter"] = f"{converter.current()}:{converter.version()}"
    return out


def digest(value: Any) -> str:
    blob = json.dumps(value, sort_keys=True).encode("ascii")
    return hashlib.sha256(blob).hexdigest()


def file_name(spec: Spec) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", spec.id.split("/", 1)[-1])


def set_dir(spec: Spec) -> str:
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

    # a list: mypy reads a one-item tuple literal as tuple[str], not of category names
    return st.characters(codec="ascii", exclude_categories=["Cc"], include_characters="\t\n\r")


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
    """Distinct instances from hypothesis-jsonschema that the judge confirms are valid,
    keys in schema order, ranked by `_rank`."""
    from hypothesis_jsonschema import from_schema

    _patch_hypothesis_jsonschema()
    schema = json.loads(schema_text)
    try:
        # Formats are checked too, and patterns as ECMA-262 reads them: hypothesis
        # draws a pattern's strings as Python's `re` reads it (`\\d` any Unicode digit).
        validator = judge.validator(schema)
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


class OverBudget(Exception):
    pass


def within(seconds: float, work: Callable[[], Any]) -> Any:
    """`work()`, or raise OverBudget after `seconds`. Python's regex engine backtracks
    and can take exponential time on a converted schema's regex (and Lark's Earley
    parser is cubic); both check for signals, so an interval timer stops them. On the
    main thread only: elsewhere no signal can be set, and `work()` runs unbounded."""
    if threading.current_thread() is not threading.main_thread():
        return work()

    def stop(*_: Any) -> None:
        raise OverBudget

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
            rx = within(RANK_BUDGET_S * 10, lambda: re.compile(regex))
        except (OverBudget, re.error, RecursionError, OverflowError):
            rx = None

    def refused(value: Any) -> bool:
        if rx is None:
            return False
        text = compact_json(value)
        try:
            return bool(within(RANK_BUDGET_S, lambda: rx.fullmatch(text) is None))
        except OverBudget:
            return True

    return sorted(values, key=lambda v: (refused(v), not _plain(v)))


class DrawService:
    """The worker where every hypothesis draw happens (see `_ignore_local_constants`)."""

    def __init__(self, setup: Any) -> None:
        _ignore_local_constants()
        self.ready = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        return _answer(request)


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


_service = Service("harness.corpora.texts:DrawService", address_space=GENERATE_MEMORY_BYTES)


def _draw_in_worker(request: dict[str, Any], what: str) -> tuple[list[Any], list[str]]:
    reply = _service.ask(request, GENERATE_TIMEOUT_S)
    if reply.ok:
        return list(reply.value["values"]), list(reply.value["notes"])
    if reply.status is Status.TIMEOUT:
        return [], [f"{what} ran over {GENERATE_TIMEOUT_S:g} s"]
    return [], [f"{what} failed: {reply.status.value}: {reply.message}"]


def generated_instances(schema_text: str, seed: int, count: int) -> tuple[list[Any], list[str]]:
    """Up to `count` distinct instances of a schema drawn by hypothesis-jsonschema (in the
    draw worker, under its timeout), each confirmed valid by the judge (formats
    asserted, patterns as ECMA-262), keys in schema order, in draw order (no ranking by
    any converter's regex, so they can catch its false rejections); and notes on why
    fewer came out."""
    request = {"kind": "schema", "schema": schema_text, "seed": seed, "count": count}
    return _draw_in_worker(request, "hypothesis-jsonschema")


def _schema_texts(spec: Spec, seed: int, n: int) -> Texts:
    from_maskbench = spec.id.startswith("maskbench/")
    label: Source = "maskbench-valid" if from_maskbench else "example"
    out: list[tuple[Any, Source]] = [(json.loads(x), label) for x in spec.examples[:n]]
    # MaskBench's own valid instances are the point of that set; generate only where a
    # file has none.
    if len(out) >= n or (from_maskbench and out):
        return Texts(tuple(out))
    request = {
        "kind": "schema",
        "schema": spec.text,
        "seed": seed,
        "count": n * DRAW_FACTOR,
        "regex": convert_schema(spec.text).regex,
    }
    generated, notes = _draw_in_worker(request, "hypothesis-jsonschema")
    known = {compact_json(v) for v, _ in out}
    out += [(g, "generated") for g in generated if compact_json(g) not in known][: n - len(out)]
    return Texts(tuple(out), tuple(notes))


def _grammar_texts(spec: Spec, seed: int, n: int) -> Texts:
    """Half the grammar's examples (its labelled and derived sentences), half sentences
    derived from it with `seed` (`harness.language.grammar.samples`)."""
    examples = list(dict.fromkeys(spec.examples))
    head = examples[: (n + 1) // 2]
    out: list[tuple[Any, Source]] = [(x, "example") for x in head]
    assert spec.notation is not None
    drawn = grammar.samples(spec.text, spec.notation, n * DRAW_FACTOR, seed + 1)
    out += [(s, "generated") for s in dict.fromkeys(drawn) if s not in examples][: n - len(out)]
    out += [(x, "example") for x in examples[len(head) :]][: max(0, n - len(out))]
    notes = () if out else ("the grammar derives no text the front end can draw",)
    return Texts(tuple(out), notes)


_DRAW: dict[str, Callable[[Spec, int, int], Texts]] = {
    "regex": _regex_texts,
    "json_schema": _schema_texts,
    "grammar": _grammar_texts,
}


def texts_for(spec: Spec, seed: int = 0, n: int | None = None) -> Texts:
    """Up to `n` path texts of `spec` before layout, cached on disk: hypothesis draws
    cost far more than tokenizing, and they do not depend on the vocabulary."""
    n = DEFAULT_N[spec.kind] if n is None else n
    key = digest(
        {
            "format": FORMAT,
            "kind": spec.kind,
            "text": spec.text,
            "examples": list(spec.examples),
            "seed": seed,
            "n": n,
            "versions": versions(spec),
        }
    )
    path = cache_dir("paths", set_dir(spec), "texts", f"seed-{seed}") / (
        f"{file_name(spec)}.n{n}.{key[:16]}.json"
    )
    hit = read_json(path)
    if isinstance(hit, dict) and hit.get("key") == key:
        items = tuple((item["value"], item["source"]) for item in hit["texts"])
        return Texts(items, tuple(hit.get("notes", ())))
    texts = _DRAW[spec.kind](spec, seed, n)
    record = {
        "key": key,
        "texts": [{"value": v, "source": s} for v, s in texts.items],
        "notes": list(texts.notes),
    }
    write_json_atomic(path, record)
    return texts
