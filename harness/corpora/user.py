"""The user's own specs, from files (`--spec PATH`, repeatable) and the command line
(`--regex PATTERN`), as corpus entries like the built-in ones.

Accepted files:
- a JSON schema file (an object or boolean that is not a MaskBench file and not a list);
- a MaskBench-format file (`{"schema": ..., "tests": [{"data": ..., "valid": ...}]}`);
- a directory: its `*.json` files, each a schema or a MaskBench-format file;
- a file of regexes, one a line (`#` starts a comment line; blank lines are skipped);
- a JSON list or a JSONL file of entries `{id?, regex | schema, valid?: [...],
  invalid?: [...]}` (valid/invalid: labelled instances of a schema, or example strings of
  a regex).

Every spec gets a stable id in the set `user`: `user/<file stem>#<n>` by its position
(1-based), or `user/<file stem>/<id>` when the entry names one; `--regex` patterns are
`user/regex#<n>`. Features come from the same scanner as the built-ins. A bad file is one
line naming the file and the entry (not JSON at line L, an unknown key, a regex that does
not parse, an entry with neither `regex` nor `schema`) as BadInput (exit 2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.corpora.entry import Entry, schema_entry, unique
from harness.errors import BadInput
from harness.language.regex_syntax import python_regex, regex_features
from harness.spec import Spec

SET = "user"
ENTRY_KEYS = frozenset({"id", "regex", "schema", "valid", "invalid"})
_NAME = re.compile(r"[^A-Za-z0-9._+-]")


def load(paths: Iterable[str | Path] = (), regexes: Iterable[str] = ()) -> tuple[Entry, ...]:
    """Every spec of the given files and patterns, ids unique across them."""
    out: list[Entry] = []
    for path in paths:
        out += load_path(Path(path))
    out += [regex_entry(f"{SET}/regex#{n}", p, "--regex") for n, p in enumerate(regexes, 1)]
    try:
        return unique(out)
    except ValueError as exc:
        raise BadInput(f"user specs: {exc} (two files with the same name?)") from None


def load_path(path: Path) -> list[Entry]:
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise BadInput(f"{path}: a spec directory holds no *.json file")
        return [e for f in files for e in _json_file(f, stem=f"{_stem(path)}/{_stem(f)}")]
    if not path.is_file():
        raise BadInput(f"{path}: no such spec file or directory")
    if path.suffix == ".jsonl":
        return _jsonl_file(path)
    if path.suffix == ".json":
        return _json_file(path, stem=_stem(path))
    return _regex_lines(path)


def _stem(path: Path) -> str:
    return _NAME.sub("_", path.stem or path.name)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot be read: {exc.strerror}") from None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _parse_json(text: str, where: str) -> Any:
    """`text` as JSON; Python's extensions (`NaN`, `Infinity`) are refused, since no
    engine's JSON parser reads them."""
    try:
        return json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{where}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise BadInput(f"{where}: not valid JSON: {exc}") from None


# The fields of a MaskBench file as the dataset ships them (`description` and `meta` are
# not read). A schema's top level holds keywords, and no keyword is `schema`, so an object
# with a `schema` field and only these is a MaskBench file; read as a schema it would be
# one of unknown keywords, which admits every value.
MASKBENCH_KEYS = frozenset({"description", "meta", "schema", "tests"})


def _json_file(path: Path, stem: str) -> list[Entry]:
    data = _parse_json(_read(path), str(path))
    if isinstance(data, list):
        return [_entry(item, f"{path} entry {n}", stem, n) for n, item in enumerate(data, 1)]
    if isinstance(data, dict) and "schema" in data and set(data) <= MASKBENCH_KEYS:
        return [_maskbench_entry(data, path, stem)]
    if isinstance(data, dict) and {"regex", "schema"} & set(data) and set(data) <= ENTRY_KEYS:
        # one entry, not a schema: no JSON Schema keyword is `regex` or `schema`, nor
        # `valid`/`invalid`, so an object of only entry keys naming either is an entry
        return [_entry(data, str(path), stem, 1)]
    if isinstance(data, dict | bool):
        return [_schema(f"{SET}/{stem}", data, str(path), (), ())]
    raise BadInput(f"{path}: want a JSON schema, a MaskBench file or a list of entries")


def _jsonl_file(path: Path) -> list[Entry]:
    stem = _stem(path)
    out: list[Entry] = []
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        if line.strip():
            where = f"{path} line {lineno}"
            out.append(_entry(_parse_json(line, where), where, stem, len(out) + 1))
    if not out:
        raise BadInput(f"{path}: no entry")
    return out


def _regex_lines(path: Path) -> list[Entry]:
    stem = _stem(path)
    out: list[Entry] = []
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        pattern = line.rstrip("\r\n")
        if not pattern.strip() or pattern.lstrip().startswith("#"):
            continue
        out.append(regex_entry(f"{SET}/{stem}#{len(out) + 1}", pattern, f"{path} line {lineno}"))
    if not out:
        raise BadInput(f"{path}: no regex (one a line, # for comments)")
    return out


def _entry(item: Any, where: str, stem: str, n: int) -> Entry:
    if not isinstance(item, dict):
        raise BadInput(f"{where}: an entry must be an object with `regex` or `schema`")
    unknown = sorted(set(item) - ENTRY_KEYS)
    if unknown:
        raise BadInput(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(ENTRY_KEYS))})"
        )
    if ("regex" in item) == ("schema" in item):
        raise BadInput(f"{where}: an entry needs exactly one of `regex` or `schema`")
    name = f"{stem}/{_NAME.sub('_', str(item['id']))}" if "id" in item else f"{stem}#{n}"
    valid, invalid = _instances(item, where)
    if "regex" in item:
        if not isinstance(item["regex"], str):
            raise BadInput(f"{where}: `regex` must be a string")
        return regex_entry(f"{SET}/{name}", item["regex"], where, valid, invalid)
    return _schema(f"{SET}/{name}", item["schema"], where, valid, invalid)


def _instances(item: dict[str, Any], where: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    out = []
    for key in ("valid", "invalid"):
        values = item.get(key, [])
        if not isinstance(values, list):
            raise BadInput(f"{where}: `{key}` must be a list")
        out.append(tuple(values))
    return out[0], out[1]


def regex_entry(
    spec_id: str,
    pattern: str,
    where: str,
    valid: tuple[Any, ...] = (),
    invalid: tuple[Any, ...] = (),
) -> Entry:
    """An entry for a regex, refused (BadInput naming `where`) when the reference's parser
    cannot read it or an example is not a string it matches."""
    from harness.language import reference

    tokensdfa = reference.tokensdfa()
    try:
        tokensdfa.check_pattern(pattern)
    except tokensdfa.PatternError as exc:
        raise BadInput(f"{where}: regex does not parse: {exc}") from None
    except ValueError:
        pass  # an unsupported feature or a limit: the engines report it per cell
    examples = tuple(v for v in valid if isinstance(v, str))
    if len(examples) != len(valid):
        raise BadInput(f"{where}: the examples of a regex must be strings")
    compiled = _python_regex(pattern, where)
    bad = [x for x in examples if compiled is not None and compiled.fullmatch(x) is None]
    if bad:
        raise BadInput(f"{where}: example {bad[0]!r} does not match the regex")
    spec = Spec.regex(spec_id, pattern, features=regex_features(pattern), examples=examples)
    return Entry(spec, source=where, valid=valid, invalid=invalid)


def _python_regex(pattern: str, where: str) -> Any:
    try:
        return python_regex(pattern)
    except ValueError:
        return None  # Python's re reads it otherwise; the examples go unchecked


def _schema(
    spec_id: str, schema: Any, where: str, valid: Iterable[Any], invalid: Iterable[Any]
) -> Entry:
    if not isinstance(schema, dict | bool):
        raise BadInput(f"{where}: a schema must be a JSON object or boolean")
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise BadInput(
            f"{where}: not a valid JSON schema: {' '.join(exc.message.split())}"
        ) from None
    return schema_entry(spec_id, schema, source=where, valid=valid, invalid=invalid)


def _maskbench_entry(data: dict[str, Any], path: Path, stem: str) -> Entry:
    tests = data.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, dict) and "data" in t for t in tests):
        raise BadInput(f'{path}: "tests" must be a list of {{"data": ..., "valid": ...}}')
    valid = [t["data"] for t in tests if t.get("valid")]
    invalid = [t["data"] for t in tests if not t.get("valid")]
    return _schema(f"{SET}/{stem}", data["schema"], str(path), valid, invalid)


def to_json(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """Entries as a run stores them, so a resumed run needs no file."""
    return [
        {
            "spec": e.spec.to_json(),
            "examples": list(e.spec.examples),
            "source": e.source,
            "valid": list(e.valid),
            "invalid": list(e.invalid),
        }
        for e in entries
    ]


def from_json(items: Iterable[dict[str, Any]]) -> tuple[Entry, ...]:
    out = []
    for item in items:
        spec = Spec.from_json(item["spec"])
        spec = Spec(spec.id, spec.kind, spec.text, spec.features, tuple(item["examples"]))
        out.append(
            Entry(spec, item["source"], valid=tuple(item["valid"]), invalid=tuple(item["invalid"]))
        )
    return tuple(out)
