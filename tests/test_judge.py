"""The instance judge reads `pattern` as ECMA-262, JSON Schema's regex dialect, where
`jsonschema` alone reads it as Python's `re` (harness.corpora.judge)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import regress

from harness.corpora import judge
from harness.project import PROJECT_ROOT

SUITE = Path(
    os.environ.get("JSON_SCHEMA_TEST_SUITE")
    or PROJECT_ROOT.parent / "shared/corpora/json-schema-test-suite/tests"
)
REGEX_FILES = ("ecmascript-regex.json", "non-bmp-regex.json")
# 2019-09 on: draft-07's `dependencies` kept as a compatibility keyword
COMPATIBILITY_FILES = ("dependencies-compatibility.json",)


def _python_reading(schema: Any, value: Any) -> bool | None:
    """`jsonschema`'s own verdict (patterns as Python's `re`), None where `re` cannot
    read the pattern (`\\c`, `\\p`)."""
    try:
        return bool(jsonschema.validators.validator_for(schema)(schema).is_valid(value))
    except Exception:
        return None


# (schema, instance, valid per ECMA-262): each one Python's `re` reads the other way.
DIVERGENT = [
    ({"pattern": r"^\w+$"}, "ĢŰĩ", False),  # \w is ASCII
    ({"pattern": r"^\d+$"}, "١٢٣", False),  # \d is ASCII (Arabic-Indic digits)
    ({"pattern": r"^a$"}, "a\n", False),  # $ is the end, not before a final newline
    ({"pattern": r"^.$"}, "\r", False),  # . excludes every line terminator
    ({"pattern": r"^\s$"}, "\ufeff", True),  # \s has U+FEFF ...
    ({"pattern": r"^\s$"}, "\x1c", False),  # ... and not the file separators
    ({"multipleOf": 0.01}, 2036931.9000000001, False),  # exact, not a rounded quotient
    (
        {"patternProperties": {r"^\d+$": {"type": "integer"}}},
        {"١": "x"},  # the key is no ECMA digit: the value is unconstrained
        True,
    ),
]


@pytest.mark.parametrize(("schema", "value", "valid"), DIVERGENT)
def test_patterns_are_read_as_ecma_262(schema: Any, value: Any, valid: bool) -> None:
    assert judge.is_valid(schema, value) is valid
    assert (judge.validate(schema, value) is None) is valid
    assert _python_reading(schema, value) is not valid  # the case is a real difference


@pytest.mark.parametrize(
    "declared",
    [
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-04/schema#",
    ],
)
def test_patterns_stay_ecma_262_under_a_ref_with_its_own_dialect(declared: str) -> None:
    """MaskBench's venvironment-basic-schema: every definition names its `$schema`, so
    jsonschema follows a `$ref` there with that draft's stock class, whose patterns are
    Python's. The judge keeps ECMA-262 (and its formats) through it."""
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": {"$ref": "#/definitions/path"},
        "definitions": {"path": {"$schema": declared, "pattern": r"^.*\.vcdl$"}},
    }
    assert judge.is_valid(schema, ["a.vcdl"])
    assert not judge.is_valid(schema, ["a\r.vcdl"])
    assert judge.validate(schema, ["a\r.vcdl"]) is not None
    assert _python_reading(schema, ["a\r.vcdl"])  # the case is a real difference


def test_unicode_mode_reads_property_classes() -> None:
    assert judge.is_valid({"pattern": r"^\p{Letter}+$"}, "héllo")
    assert not judge.is_valid({"pattern": r"^\p{Letter}+$"}, "h3llo")


def test_web_compatibility_patterns_fall_back_to_non_unicode_mode() -> None:
    # `[\w-.]` and `\-` are legal only by ECMA-262's annex B, not in Unicode mode.
    assert judge.is_valid({"pattern": r"^[\w-.]+$"}, "a-.b")
    assert not judge.is_valid({"pattern": r"^[\w-.]+$"}, "a b")
    assert judge.is_valid({"pattern": r"^a\-b$"}, "a-b")


def test_a_pattern_no_mode_reads_is_not_judged() -> None:
    with pytest.raises(regress.RegressError):
        judge.validate({"pattern": "(unclosed"}, "x")
    assert not judge.is_valid({"pattern": "(unclosed"}, "x")


def test_the_regex_format_is_ecma_262() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "format": "regex"}
    assert judge.validate(schema, r"\p{L}+") is None
    assert judge.validate(schema, "(?P<name>a)") is not None  # Python's syntax only
    assert judge.is_valid(schema, "(?P<name>a)", formats=False)


def test_formats_are_asserted_whatever_the_draft() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "format": "date"}
    assert judge.validate(schema, "2024-02-30") is not None
    assert judge.is_valid(schema, "2024-02-30", formats=False)


def _run_suite_files(files: list[Path]) -> tuple[int, int]:
    """Every case of `files` judged as labelled (skipped where the suite is absent):
    (cases, cases `jsonschema` alone gets wrong or cannot read)."""
    if not all(f.is_file() for f in files):
        pytest.skip(f"JSON-Schema-Test-Suite not found at {SUITE}")
    cases = python_not_right = 0
    for path in files:
        for group in json.loads(path.read_text(encoding="utf-8")):
            for case in group["tests"]:
                got = judge.is_valid(group["schema"], case["data"])
                assert got is case["valid"], (path.name, group["description"], case)
                cases += 1
                python_not_right += _python_reading(group["schema"], case["data"]) is not got
    return cases, python_not_right


@pytest.mark.parametrize("draft", ["draft2020-12", "draft7"])
def test_the_official_suite_regex_cases(draft: str) -> None:
    """The JSON-Schema-Test-Suite's optional ECMA-262 regex files, which `jsonschema`
    alone gets wrong or cannot read in part (so the cases are not vacuous)."""
    cases, python_not_right = _run_suite_files(
        [SUITE / draft / "optional" / name for name in REGEX_FILES]
    )
    assert cases >= 80 and python_not_right >= 10


def test_the_official_suite_dependencies_compatibility_cases() -> None:
    cases, python_not_right = _run_suite_files(
        [SUITE / "draft2020-12" / "optional" / name for name in COMPATIBILITY_FILES]
    )
    assert cases >= 30 and python_not_right >= 5


@pytest.mark.parametrize("draft", ["draft2020-12", "draft7"])
def test_the_official_suite_date_time_and_time_cases(draft: str) -> None:
    """RFC 3339 with leap seconds (`harness.corpora.rfc3339`): the suite's `date-time`
    and `time` files, which `jsonschema`'s own checker gets wrong on second 60."""
    cases, python_not_right = _run_suite_files(
        [SUITE / draft / "optional" / "format" / f for f in ("date-time.json", "time.json")]
    )
    assert cases >= 60 and python_not_right >= 3


def test_the_official_suite_duration_cases() -> None:
    """RFC 3339's duration grammar, which `jsonschema` checks only with `isoduration`."""
    cases, _ = _run_suite_files([SUITE / "draft2020-12" / "optional" / "format" / "duration.json"])
    assert cases >= 20


@pytest.mark.parametrize("draft", ["draft2020-12", "draft7"])
def test_the_official_suite_hostname_cases(draft: str) -> None:
    """RFC 1123 with IDNA2008 A-labels (`harness.corpora.hostname`): the suite's
    `hostname` file, which `jsonschema` without `fqdn` does not check at all."""
    cases, python_not_right = _run_suite_files(
        [SUITE / draft / "optional" / "format" / "hostname.json"]
    )
    assert cases >= 40 and python_not_right >= 20


def test_hostnames_are_judged_by_rfc_1123_and_idna() -> None:
    schema = {"type": "string", "format": "hostname"}
    assert judge.is_valid(schema, "www.example.com")
    assert judge.is_valid(schema, "xn--9n2bp8q.xn--9t4b11yi5a")  # example.test in Hangul
    for bad in ("ab--c.com", "xn--X", "example.", "a" * 64 + ".com", "a." * 126 + "ab"):
        assert not judge.is_valid(schema, bad), bad
    assert judge.is_valid(schema, "a." * 126 + "a")  # 253 characters


def test_output_texts_are_read_exactly_where_a_float_would_change_the_number() -> None:
    """`loads` keeps a long number exact, so the judge decides on the number the text
    denotes: this one is a multiple of 8 and 11 (and 5, not 3), its float is not."""
    big = "1141696848148741574872488637962211235908880.00"
    assert float(big) % 8 != 0 or float(big) % 11 != 0
    for m in (8, 11, 5):
        assert judge.is_valid({"multipleOf": m, "type": "integer"}, judge.loads(big))
    assert not judge.is_valid({"multipleOf": 3}, judge.loads(big))
    # a number its float denotes stays the float that schemas compare with
    assert judge.loads("0.10") == 0.1 and isinstance(judge.loads("0.1"), float)
    assert judge.is_valid({"const": 0.1}, judge.loads("0.1"))
    assert not judge.is_valid({"const": 0.1}, judge.loads("0.1000000000000000000001"))
    assert not judge.is_valid({"type": "integer"}, judge.loads("0.1000000000000000000001"))
    assert judge.is_valid({"maximum": 1e308}, judge.loads("1e308"))
    assert not judge.is_valid({"maximum": 1e308}, judge.loads("1e400"))
    # exponents past what is worth writing out stay floats, as json.loads reads them
    for text in ("299E0628062249034137068100", "1e-400000000", "-1E4000"):
        assert judge.loads(text) == float(text)
