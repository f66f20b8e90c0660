"""The user's own specs, from files (`--spec PATH`, repeatable) and the command line
(`--regex PATTERN`), as corpus entries like the built-in ones.

Accepted files:
- a JSON schema file (an object or boolean that is not a MaskBench file and not a list);
- a MaskBench-format file (`{"schema": ..., "tests": [{"data": ..., "valid": ...}]}`);
- a directory: its `*.json` files, each a schema or a MaskBench-format file;
- a file of regexes, one a line (`#` starts a comment line; blank lines are skipped);
- a grammar file, by its suffix: `.gbnf` (llama.cpp), `.lark` (Lark), `.ebnf`
  (llama.cpp-style EBNF of transformers-cfg and xgrammar);
- a JSON list or a JSONL file of entries `{id?, regex | schema | grammar, notation?,
  valid?: [...], invalid?: [...]}` (valid/invalid: labelled instances of a schema, or
  example strings of a regex or a grammar; `notation` names a grammar's, default gbnf).

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
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness import nesting
from harness.corpora.entry import Entry, distinct, schema_entry
from harness.errors import BadInput
from harness.language import grammar
from harness.language.regex_syntax import regex_features
from harness.spec import NOTATIONS, Notation, Spec

SET = "user"
ENTRY_KEYS = frozenset({"id", "regex", "schema", "grammar", "notation", "valid", "invalid"})
# What an entry is: exactly one of these keys.
ENTRY_KINDS = ("regex", "schema", "grammar")
_NAME = re.compile(r"[^A-Za-z0-9._+-]")
# A file of regexes, one a line. Any other suffix is refused, not read as regexes: a
# grammar (.gbnf, .lark, .ebnf) read line by line would become one "regex" per rule.
REGEX_SUFFIXES = (".txt", ".regex", ".re")


def load(paths: Iterable[str | Path] = (), regexes: Iterable[str] = ()) -> tuple[Entry, ...]:
    """Every spec of the given files and patterns, ids unique across them: a file named
    twice counts once, and files of one name in different directories are told apart by
    their directories (`check a/schema.json b/schema.json`: `user/a/schema` and
    `user/b/schema`)."""
    out: list[Entry] = []
    for path, stem in stems(Path(p) for p in paths):
        out += load_path(path, stem)
    out += [regex_entry(f"{SET}/regex#{n}", p, "--regex") for n, p in enumerate(regexes, 1)]
    return distinct(out)


def stems(paths: Iterable[Path]) -> list[tuple[Path, str]]:
    """Each path once (by where it resolves), with the stem its spec ids start with: its
    name, and where paths share a name, as many of their directories' names before it
    as tell them apart."""
    found = list({p.resolve(): p for p in paths}.items())
    names = {resolved: _stem(resolved) for resolved, _ in found}
    groups: dict[str, list[Path]] = {}
    for resolved, _ in found:
        groups.setdefault(names[resolved], []).append(resolved)
    for group in groups.values():
        depth = 1
        while len(group) > 1 and len({_within(r, depth) for r in group}) < len(group):
            depth += 1
        if len(group) > 1:
            names.update((r, _within(r, depth)) for r in group)
    return [(given, names[resolved]) for resolved, given in found]


def _within(path: Path, depth: int) -> str:
    """The stem of `path` after the names of its `depth` innermost directories."""
    return "/".join([*(_NAME.sub("_", d) for d in path.parts[-depth - 1 : -1]), _stem(path)])


def load_path(path: Path, stem: str | None = None) -> list[Entry]:
    """The specs of one file or directory; their ids start with `user/` and `stem`
    (default: the file's or directory's name)."""
    stem = stem or _stem(path)
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise BadInput(f"{path}: a spec directory holds no *.json file")
        return [e for f in files for e in _json_file(f, stem=f"{stem}/{_stem(f)}")]
    if not path.exists():
        raise BadInput(f"{path}: no such spec file or directory")
    if not path.is_file():  # a FIFO or a device: reading it could block forever
        raise BadInput(f"{path}: not a regular file or a directory")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _jsonl_file(path, stem)
    if suffix == ".json":
        return _json_file(path, stem)
    if suffix in REGEX_SUFFIXES:
        return _regex_lines(path, stem)
    notation = grammar.notation_of(path)
    if notation is not None:
        return [grammar_entry(f"{SET}/{stem}", _read(path), notation, str(path))]
    raise BadInput(
        f"{path}: unknown kind of spec file {path.suffix or '(no extension)'!r}; known: "
        f".json (a JSON schema, a MaskBench file or a list of entries), .jsonl (entries), "
        f"{', '.join(REGEX_SUFFIXES)} (regexes, one a line), "
        f"{', '.join(grammar.SUFFIXES)} (a grammar), or a directory of .json files"
    )


def _stem(path: Path) -> str:
    return _NAME.sub("_", path.stem or path.name)


def _read(path: Path) -> str:
    """The file's text; a UTF-8 byte order mark at its start is not part of it."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot be read: {exc.strerror}") from None


def lines(text: str) -> list[str]:
    """`text` split at line feeds (a carriage return before one is dropped), as `wc -l`
    and editors count lines. Not `str.splitlines`, which also splits at U+2028, U+2029,
    U+0085, form feeds, vertical tabs and \\x1c-\\x1e: characters a regex or a JSON
    string may hold."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _parse_json(text: str, where: str) -> Any:
    """`text` as JSON; Python's extensions (`NaN`, `Infinity`) are refused, since no
    engine's JSON parser reads them."""
    try:
        return nesting.loads(text, where, parse_constant=_not_json)
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
    if isinstance(data, dict) and set(ENTRY_KINDS) & set(data) and set(data) <= ENTRY_KEYS:
        # one entry, not a schema: no JSON Schema keyword is `regex`, `schema` or
        # `grammar`, nor `valid`/`invalid`, so an object of only entry keys naming one
        # of them is an entry
        return [_entry(data, str(path), stem, 1)]
    if isinstance(data, dict | bool):
        return [_schema(f"{SET}/{stem}", data, str(path), (), ())]
    raise BadInput(f"{path}: want a JSON schema, a MaskBench file or a list of entries")


def _jsonl_file(path: Path, stem: str) -> list[Entry]:
    out: list[Entry] = []
    for lineno, line in enumerate(lines(_read(path)), 1):
        if line.strip():
            where = f"{path} line {lineno}"
            out.append(_entry(_parse_json(line, where), where, stem, len(out) + 1))
    if not out:
        raise BadInput(f"{path}: no entry")
    return out


def _regex_lines(path: Path, stem: str) -> list[Entry]:
    out: list[Entry] = []
    for lineno, pattern in enumerate(lines(_read(path)), 1):
        if not pattern.strip() or pattern.lstrip().startswith("#"):
            continue
        out.append(regex_entry(f"{SET}/{stem}#{len(out) + 1}", pattern, f"{path} line {lineno}"))
    if not out:
        raise BadInput(f"{path}: no regex (one a line, # for comments)")
    return out


def _entry(item: Any, where: str, stem: str, n: int) -> Entry:
    if not isinstance(item, dict):
        raise BadInput(f"{where}: an entry must be an object with `regex`, `schema` or `grammar`")
    unknown = sorted(set(item) - ENTRY_KEYS)
    if unknown:
        raise BadInput(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(ENTRY_KEYS))})"
        )
    if sum(key in item for key in ENTRY_KINDS) != 1:
        raise BadInput(f"{where}: an entry needs exactly one of `regex`, `schema` or `grammar`")
    if "notation" in item and "grammar" not in item:
        raise BadInput(f"{where}: `notation` belongs to a `grammar` entry")
    name = f"{stem}/{_NAME.sub('_', str(item['id']))}" if "id" in item else f"{stem}#{n}"
    valid, invalid = _instances(item, where)
    if "regex" in item:
        if not isinstance(item["regex"], str):
            raise BadInput(f"{where}: `regex` must be a string")
        return regex_entry(f"{SET}/{name}", item["regex"], where, valid, invalid)
    if "grammar" in item:
        text, notation = item["grammar"], item.get("notation", "gbnf")
        if not isinstance(text, str):
            raise BadInput(f"{where}: `grammar` must be a string (the grammar's text)")
        if notation not in NOTATIONS:
            raise BadInput(
                f"{where}: unknown grammar notation {notation!r}; known: {', '.join(NOTATIONS)}"
            )
        return grammar_entry(f"{SET}/{name}", text, notation, where, valid, invalid)
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
    bad = _unmatched(pattern, examples)
    if bad is not None:
        raise BadInput(f"{where}: example {bad!r} does not match the regex")
    spec = Spec.regex(spec_id, pattern, features=regex_features(pattern), examples=examples)
    return Entry(spec, source=where, valid=valid, invalid=invalid)


def grammar_entry(
    spec_id: str,
    text: str,
    notation: Notation,
    where: str,
    valid: tuple[Any, ...] = (),
    invalid: tuple[Any, ...] = (),
) -> Entry:
    """An entry for a grammar, refused (BadInput naming `where` and the line) when the
    front end of its notation finds it no grammar, or a valid example is not a sentence
    of it. A construct the front end does not implement is not refused here: engines may
    read it, and each cell says `unsupported` where one cannot."""
    found = grammar.problem(text, notation)
    if found is not None:
        raise BadInput(f"{where}: {found}")
    if not all(isinstance(v, str) for v in (*valid, *invalid)):
        raise BadInput(f"{where}: the examples of a grammar must be strings")
    bad = grammar.rejected(text, notation, list(valid))
    if bad is not None:
        raise BadInput(f"{where}: example {bad!r} is not a sentence of the grammar")
    spec = Spec.grammar(spec_id, text, notation, examples=tuple(valid))
    return Entry(spec, source=where, valid=valid, invalid=invalid)


def _unmatched(pattern: str, examples: tuple[str, ...]) -> str | None:
    """The first example the reference's byte automaton does not match in full; None when
    all match, or when the automaton cannot be built (a limit: the engines report it per
    cell). The automaton walks each example in linear time, so a pattern that backtracks
    catastrophically in Python's `re` (`(a|aa)+` on a long run of `a`s) costs nothing, and
    the examples are judged by the same semantics as the reference's masks."""
    from harness.language import reference

    if not examples:
        return None
    try:
        dfa = reference.tokensdfa().ByteDfa(pattern)
    except ValueError:
        return None
    for example in examples:
        state = dfa.walk(dfa.initial_state, example.encode("utf-8", "surrogatepass"))
        if state is None or not dfa.is_accepting(state):
            return example
    return None


def _schema(
    spec_id: str, schema: Any, where: str, valid: Iterable[Any], invalid: Iterable[Any]
) -> Entry:
    if not isinstance(schema, dict | bool):
        raise BadInput(f"{where}: a schema must be a JSON object or boolean")
    import jsonschema

    try:
        nesting.retrying(
            where, lambda: jsonschema.validators.validator_for(schema).check_schema(schema)
        )
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
        spec = replace(Spec.from_json(item["spec"]), examples=tuple(item["examples"]))
        out.append(
            Entry(spec, item["source"], valid=tuple(item["valid"]), invalid=tuple(item["invalid"]))
        )
    return tuple(out)
