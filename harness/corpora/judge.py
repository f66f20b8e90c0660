"""Whether a JSON value is valid against a JSON schema: the one judge of instances.

`jsonschema` decides everything but the regexes. It searches `pattern` and
`patternProperties` with Python's `re`, whose `\\d` and `\\w` match any Unicode digit or
word character, whose `$` also matches before a final newline and whose `.` matches
`\\r`. JSON Schema's regex dialect is ECMA-262, where `\\d` and `\\w` are ASCII, `$` is
the end of the string, `.` excludes every line terminator and `\\s` is ECMA's own set
(with U+FEFF, without U+001C-U+001F). So an instance Python's reading calls valid can be
invalid by the specification (`^\\w+$` and `"ĢŰĩ"`), and the converters, which follow
ECMA-262, would be blamed for refusing it.

Here both keywords, the keys `additionalProperties` leaves to `patternProperties`, and
the `regex` format are judged by `regress`, a real ECMA-262
engine (Rust's regress crate), in Unicode mode (`u`), as JSON Schema's test suite
expects (`\\p{Letter}` is a class). A pattern Unicode mode rejects, such as `[\\w-.]`
or `\\-` (both legal only by ECMA-262's web-compatibility annex), is read in the
annex's non-Unicode mode, as browsers and most validators do. A pattern neither mode
reads raises `regress.RegressError`: nothing is judged on a pattern the schema's own
dialect cannot read.

`multipleOf` is decided on the number each text denotes, exactly: `jsonschema` divides
floats, and a rounded quotient makes `2036931.9000000001` a multiple of 0.01. Texts are
read with `loads`, which keeps a number whose float would be another number exact.

`date-time` and `time` follow RFC 3339 with its leap seconds, as the test suite does
(`harness.corpora.rfc3339`); `jsonschema`'s own checker refuses every second 60. So does
`duration`, which `jsonschema` checks only with `isoduration` installed, and `hostname`
(RFC 1123 with IDNA2008 A-labels, `harness.corpora.hostname`), which it checks only with
`fqdn` installed and then without the A-label rules.

From draft 2019-09 on, `dependencies` is no longer a keyword (`dependentRequired` and
`dependentSchemas` replaced it) and `jsonschema` ignores it; the judge applies it with
its draft-07 meaning, as the JSON-Schema-Test-Suite's optional
`dependencies-compatibility` tests for those drafts expect and as our compiler does: a
schema written that way means it. Not covered: the keys `unevaluatedProperties` finds evaluated by a
`patternProperties` (jsonschema's helper reads those patterns with `re`; our compiler
refuses `unevaluated*`).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from harness.corpora import hostname, rfc3339


@functools.lru_cache(maxsize=4096)
def ecma_regex(pattern: str) -> Any:
    """`pattern` compiled as ECMA-262 (`regress.Regex`): Unicode mode, else the annex's
    non-Unicode mode; raises `regress.RegressError` when neither reads it."""
    import regress

    try:
        return regress.Regex(pattern, "u")
    except regress.RegressError:
        return regress.Regex(pattern)


def ecma_search(pattern: str, text: str) -> bool:
    """Whether ECMA-262 `pattern` matches somewhere in `text` (JSON Schema's unanchored
    reading of `pattern`)."""
    return ecma_regex(pattern).find(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, _schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not ecma_search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, _schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if ecma_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Any:
    """`additionalProperties`, where a key matched by a `patternProperties` pattern (as
    ECMA-262 reads it) is not additional."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in declared and not any(ecma_search(p, key) for p in patterns)
    ]
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif extra is False and extras:
        yield ValidationError(f"additional properties are not allowed: {sorted(extras)!r}")


def _dependencies(validator: Any, deps: Any, instance: Any, _schema: Any) -> Any:
    """Draft-07's `dependencies` (a key list or a schema per trigger key)."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    for trigger, dep in deps.items():
        if trigger not in instance:
            continue
        if validator.is_type(dep, "array"):
            for key in dep:
                if key not in instance:
                    yield ValidationError(f"{key!r} is a dependency of {trigger!r}")
        else:
            yield from validator.descend(instance, dep, schema_path=trigger)


def _exact(number: int | float | Decimal) -> Fraction:
    """The value of the JSON text Python writes for `number` (`repr`, what
    `json.dumps` writes), exactly."""
    return Fraction(Decimal(repr(number))) if isinstance(number, float) else Fraction(number)


# The largest power of ten `loads` keeps exact (see `_number`).
MAX_EXACT_EXPONENT = 1000


def _number(text: str) -> float | int | Decimal:
    """A JSON number with a fraction or an exponent, as `loads` reads it: the float
    when its `repr` denotes the same number (what schemas, read as floats, compare with:
    `0.1` stays `0.1`), else the exact integer or `Decimal`
    (`1141696848148741574872488637962211235908880.0` is a multiple of 8 and of 11; the
    float nearest it is neither). A number past `MAX_EXACT_EXPONENT` in magnitude stays
    the float (infinite or zero, as before): `Decimal` refuses exponents past 10^18, and
    `1e400000000` written out exactly would take the judge a gigabyte."""
    f = float(text)
    try:
        d = Decimal(text)
    except InvalidOperation:
        return f
    if abs(d.adjusted()) > MAX_EXACT_EXPONENT or (math.isfinite(f) and Decimal(repr(f)) == d):
        return f
    return int(d) if d == d.to_integral_value() else d


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """A JSON text as the values the judge compares exactly (see `_number`); keyword
    arguments go to `json.loads`. Read an engine's output with it: `json.loads` rounds a
    long number to a float, and the judge would then decide on another number."""
    return json.loads(text, parse_float=_number, **kwargs)


def _multiple_of(validator: Any, divisor: Any, instance: Any, _schema: Any) -> Any:
    """`multipleOf` on the numbers the texts denote: `2036931.9000000001` is no multiple
    of 0.01, though dividing the floats rounds to an integer (`jsonschema`'s test)."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "number"):
        return
    if (_exact(instance) / _exact(divisor)).denominator != 1:
        yield ValidationError(f"{instance!r} is not a multiple of {divisor!r}")


def _is_ecma_regex(value: object) -> bool:
    """The `regex` format: raises `regress.RegressError` on a pattern ECMA-262 rejects."""
    return not isinstance(value, str) or ecma_regex(value) is not None


@functools.lru_cache(maxsize=16)
def _validator_class(base: type[Any]) -> Any:
    """`base` (a jsonschema draft's validator class) with ECMA-262 patterns, and from
    2019-09 on with draft-07's `dependencies` too."""
    import jsonschema

    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "multipleOf": _multiple_of,
    }
    if "dependentRequired" in base.VALIDATORS and "dependencies" not in base.VALIDATORS:
        keywords["dependencies"] = _dependencies
    cls = jsonschema.validators.extend(base, keywords)
    cls.evolve = _keeping_ecma(cls.evolve)
    cls.ECMA = True
    return cls


def _keeping_ecma(stock_evolve: Any) -> Any:
    """`evolve`, which jsonschema calls for every subschema, but keeping ECMA-262
    patterns: where a `$ref` leads to a subschema with its own `$schema` (MaskBench's
    venvironment-basic-schema holds one per definition), jsonschema switches to that
    draft's stock class, whose patterns are Python's (its `.` matches a carriage
    return), and the judge called an instance valid that ECMA-262 refuses."""
    import attrs

    def evolve(self: Any, **changes: Any) -> Any:
        new = stock_evolve(self, **changes)
        # annotated `type`: mypy checks a `type[Any]` against the cache's Hashable with
        # the unbound `__hash__` and refuses it
        kind: type = type(new)
        if getattr(kind, "ECMA", False):
            return new
        ours = _validator_class(kind)
        fields = attrs.fields(kind)
        return ours(**{f.alias: getattr(new, f.name) for f in fields if f.init})

    return evolve


@functools.lru_cache(maxsize=16)
def _format_checker(base: type[Any]) -> Any:
    """`base`'s format checker with `regex` read as ECMA-262; `date-time`, and `time`
    where the draft has it (draft-07 on; draft-03's `time` has no offset), as RFC 3339
    and the test suite read them, leap seconds included; (2019-09 on) `duration`
    (`harness.corpora.rfc3339`); and `hostname` as the test suite reads it
    (`harness.corpora.hostname`)."""
    import jsonschema
    import regress

    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(base.FORMAT_CHECKER.checkers)
    checker.checkers["regex"] = (_is_ecma_regex, (regress.RegressError,))
    checker.checkers["date-time"] = (rfc3339.is_date_time, ())
    checker.checkers["hostname"] = (hostname.is_hostname, ())
    if "time" in checker.checkers and base is not jsonschema.Draft3Validator:
        checker.checkers["time"] = (rfc3339.is_time, ())
    if base in (jsonschema.Draft201909Validator, jsonschema.Draft202012Validator):
        checker.checkers["duration"] = (rfc3339.is_duration, ())
    return checker


def validator(schema: Any, *, formats: bool = True) -> Any:
    """A jsonschema validator of `schema`'s draft with ECMA-262 patterns, formats
    asserted (`formats`) even where the draft calls them annotations: a grammar engine
    asserts them, so an instance it may refuse for its format is no valid instance."""
    import jsonschema

    base = jsonschema.validators.validator_for(schema)
    cls = _validator_class(base)
    return cls(schema, format_checker=_format_checker(base) if formats else None)


def validate(schema: Any, value: Any) -> str | None:
    """None when `value` is valid against `schema`, else the best error on one line.
    Raises what jsonschema raises on a schema it cannot evaluate (a `$ref` to a URL, a
    pattern no ECMA-262 mode reads)."""
    import jsonschema

    error = jsonschema.exceptions.best_match(validator(schema).iter_errors(value))
    if error is None:
        return None
    path = "/".join(map(str, error.absolute_path))
    return f"at /{path}: {' '.join(error.message.split())[:200]}"


def is_valid(schema: Any, value: Any, *, formats: bool = True) -> bool:
    """Whether `value` is valid; False when the schema cannot be evaluated (nothing is
    shown valid by a schema the judge cannot read)."""
    try:
        return bool(validator(schema, formats=formats).is_valid(value))
    except Exception:
        return False
