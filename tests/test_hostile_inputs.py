"""The stranger's probes of issue 41, each through the real command line in a subprocess:
deep nesting, absurd sizes, duplicate ids, bad addresses, a ReDoS example, files that are
not what their name says, output paths that do not exist. Bad input is one line and exit
2, a failing environment exit 1, never a traceback, a hang or a silently changed input.
(Interruptions, resumes and vocabulary files: tests/test_hostile_runs.py.)"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from harness.corpora import user
from tests.test_bad_inputs import one_line, tokensieve

SMALL = ("--vocab", "synthetic-1000-3", "--paths", "1", "--no-report")


def nested_schema(depth: int) -> dict[str, object]:
    schema: dict[str, object] = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


# --- deep nesting: Python's recursion never reaches the user ------------------------------


def test_json_nested_past_the_bound_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    line = one_line(tokensieve("bench", "--spec", str(deep), *SMALL, cwd=tmp_path), 2, str(deep))
    assert "100,000 levels" in line and "at most 1,000" in line


def test_a_valid_schema_nested_123_deep_is_read(tmp_path: Path) -> None:
    """Deeper than jsonschema's check reaches on Python's default stack, well within
    the stated bound: it is read, and the cells say what the engines make of it."""
    deep = tmp_path / "deep123.json"
    deep.write_text(json.dumps(nested_schema(123)))
    done = tokensieve(
        "bench", "--spec", str(deep), "--engines", "naive", *SMALL, "--reports-dir", "r",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    with sqlite3.connect(tmp_path / "r" / "results.sqlite") as db:
        ((spec, status),) = db.execute("SELECT spec_id, status FROM cells").fetchall()
    assert spec == "user/deep123" and status in ("ok", "unsupported")


def test_a_regex_of_5000_nested_groups_is_contained(tmp_path: Path) -> None:
    pattern = "(" * 5000 + "a" + ")" * 5000
    done = tokensieve(
        "bench", "--regex", pattern, "--engines", "naive", *SMALL, "--reports-dir", "r",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    with sqlite3.connect(tmp_path / "r" / "results.sqlite") as db:
        ((status, message),) = db.execute("SELECT status, message FROM cells").fetchall()
    assert status == "unsupported" and "nested" in message


# --- sizes declared in a file or an option are bounded before anything is allocated -----


def _tokenizer_json(path: Path, vocab: dict[str, int]) -> Path:
    model = {"type": "BPE", "vocab": vocab, "merges": []}
    path.write_text(json.dumps({"model": model, "pre_tokenizer": {"type": "ByteLevel"}}))
    return path


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["bench", "--vocab-size", "10000000000"], ["--vocab-size", "at most 4,194,304"]),
        (["vocab", "synthetic-20000000-1"], ["20,000,000 ids", "4,194,304"]),
        (["vocab", "gpt2[:99999999]"], ["gpt2[:99999999]", "4,194,304"]),
        (["vocab", "gpt2[:50257]"], ["gpt2 has 50,257 ids"]),
    ],
    ids=["vocab-size", "synthetic", "subset-past-bound", "subset-of-everything"],
)
def test_sizes_past_what_exists_are_refused(argv: list[str], named: list[str]) -> None:
    one_line(tokensieve(*argv), 2, *named)


def test_a_tokenizer_json_with_an_id_of_two_billion(tmp_path: Path) -> None:
    path = _tokenizer_json(tmp_path / "tokenizer.json", {"a": 0, "b": 2_000_000_000})
    line = one_line(tokensieve("vocab", str(path), "--eos", "0"), 2, str(path))
    assert "its largest id is 2,000,000,000" in line and "4,194,304" in line


def test_a_tiktoken_file_with_a_rank_of_three_billion(tmp_path: Path) -> None:
    path = tmp_path / "big.tiktoken"
    path.write_text("YQ== 0\nYg== 3000000000\n")
    done = tokensieve("vocab", str(path), "--eos", "0", "--split-pattern", ".")
    assert "id is 3,000,000,000" in one_line(done, 2, str(path))


def test_a_tokenizer_json_with_two_tokens_of_one_id(tmp_path: Path) -> None:
    path = _tokenizer_json(tmp_path / "tokenizer.json", {"a": 0, "b": 1, "c": 1})
    one_line(tokensieve("vocab", str(path), "--eos", "0"), 2, str(path), "'b' and 'c'", "id 1")


def test_a_split_pattern_that_does_not_compile_is_refused_up_front(tmp_path: Path) -> None:
    path = tmp_path / "r.tiktoken"
    path.write_text("YQ== 0\nYg== 1\n")
    for command in ("bench", "check", "vocab"):
        argv = ["--vocab", str(path)] if command != "vocab" else [str(path)]
        done = tokensieve(command, *argv, "--eos", "0", "--split-pattern", "(", cwd=tmp_path)
        one_line(done, 2, "split pattern does not compile")
        assert not (tmp_path / "reports").exists()


# --- which specs: ids unique and meaningful, kinds known ----------------------------------


def test_check_with_two_files_of_one_name_tells_them_apart(tmp_path: Path) -> None:
    for team, kind in (("a", "integer"), ("b", "string")):
        (tmp_path / team).mkdir()
        (tmp_path / team / "schema.json").write_text(json.dumps({"type": kind}))
    entries = user.load([tmp_path / "a" / "schema.json", tmp_path / "b" / "schema.json"])
    assert [e.spec.id for e in entries] == ["user/a/schema", "user/b/schema"]
    twice = user.load([tmp_path / "a" / "schema.json", tmp_path / "a" / "." / "schema.json"])
    assert [e.spec.id for e in twice] == ["user/schema"]


def test_check_with_a_spec_named_twice_checks_it_once(tmp_path: Path) -> None:
    from harness.check.run import resolve_specs

    schema = tmp_path / "s.json"
    schema.write_text('{"type": "integer"}')
    found = resolve_specs(["outlines-bench/email", str(schema), "outlines-bench/email", schema])
    assert [e.spec.id for e in found] == ["outlines-bench/email", "user/s"]


@pytest.mark.parametrize("suffix", [".yaml", ".bnf", ""])
def test_a_spec_file_of_unknown_kind_is_refused(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"grammar{suffix}"
    path.write_text('root ::= "a" | "b"\nitem ::= [a-z]+\n')
    line = one_line(tokensieve("bench", "--spec", str(path), *SMALL, cwd=tmp_path), 2, str(path))
    assert "unknown kind of spec file" in line and ".txt" in line and ".json" in line
    assert ".gbnf" in line and ".lark" in line and ".ebnf" in line


def test_regex_lines_split_at_line_feeds_only(tmp_path: Path) -> None:
    path = tmp_path / "odd.txt"
    odd = "a\u2028b", "c\u2029d", "e\x85f", "g\x0ch", "i\x0bj", "k\x1cl\x1dm\x1en"
    path.write_text("\n".join(odd) + "\r\nlast\n", encoding="utf-8")
    entries = user.load([path])
    assert [e.spec.text for e in entries] == [*odd, "last"]
    assert [e.source for e in entries][-1] == f"{path} line 7"


def test_a_bom_is_not_part_of_a_spec_file(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"type": "integer"}')
    (entry,) = user.load([path])
    assert json.loads(entry.spec.text) == {"type": "integer"}


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "specs.txt"
    os.mkfifo(fifo)
    one_line(tokensieve("bench", "--spec", str(fifo), *SMALL, cwd=tmp_path), 2, "not a regular")


def test_a_catastrophic_example_costs_nothing(tmp_path: Path) -> None:
    """`(a|aa)+` backtracks for minutes in Python's re on a long run of `a`s; the
    examples are checked by the reference's automaton instead, linearly."""
    path = tmp_path / "redos.json"
    entry = {"id": "redos", "regex": "(a|aa)+b?c?", "valid": ["a" * 160 + "!"]}
    path.write_text(json.dumps([entry]))
    done = tokensieve("bench", "--spec", str(path), *SMALL, "--timeout", "5", cwd=tmp_path)
    one_line(done, 2, f"{path} entry 1", "does not match")
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"regex": "(a|aa)+b?c?", "valid": ["a" * 5000 + "bc"]}]))
    assert len(user.load([good])) == 1


def test_check_takes_spec_and_no_abbreviation(tmp_path: Path) -> None:
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "integer"}')
    done = tokensieve("check", "--spec", str(schema), "--vocab", "gpt2", "--engines", "nope")
    one_line(done, 2, "--engines", "'nope'")  # --spec parsed as the spec, not --special-tokens
    one_line(tokensieve("bench", "--limit", "3"), 2, "unrecognized", "--limit")
    one_line(tokensieve("check", "--special", str(schema)), 2, "unrecognized", "--special")


def test_limit_specs_applies_to_the_users_specs(tmp_path: Path) -> None:
    path = tmp_path / "many.txt"
    path.write_text("".join(f"a{{{n}}}\n" for n in range(1, 501)))
    done = tokensieve(
        "bench", "--spec", str(path), "--limit-specs", "3", "--engines", "naive", *SMALL,
        "--reports-dir", "r", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(tmp_path / "r" / "results.sqlite") as db:
        ids = [row[0] for row in db.execute("SELECT spec_id FROM cells ORDER BY spec_id")]
    assert ids == ["user/many#1", "user/many#167", "user/many#334"]


# --- where the run goes: addresses and output paths checked before any work ------------


@pytest.mark.parametrize("address", ["localhost", "not a url", "tcp://host:99999"])
def test_a_scheduler_address_is_checked_up_front(tmp_path: Path, address: str) -> None:
    for command in ("bench", "diff", "check"):
        argv = ["--executor", "dask", "--scheduler", address, "--regex", "a+", "--vocab", "gpt2"]
        one_line(tokensieve(command, *argv, cwd=tmp_path), 2, "--scheduler", repr(address))
        assert not (tmp_path / "reports").exists()


def test_junit_xml_needs_an_existing_directory(tmp_path: Path) -> None:
    target = tmp_path / "nonexistent" / "dir" / "x.xml"
    argv = ["check", "--regex", "a+", "--vocab", "gpt2", "--junit-xml"]
    one_line(tokensieve(*argv, str(target), cwd=tmp_path), 2, "--junit-xml", "does not exist")
    (tmp_path / "file").write_text("")
    one_line(tokensieve(*argv, str(tmp_path / "file" / "x.xml")), 2, "is not a directory")
    assert not (tmp_path / "nonexistent").exists() and not (tmp_path / "reports").exists()


def test_resume_into_a_missing_reports_dir_creates_nothing(tmp_path: Path) -> None:
    for command in ("bench", "diff", "jumpforward", "check"):
        done = tokensieve(command, "--resume", "--reports-dir", "nowhere", cwd=tmp_path)
        one_line(done, 2, "--resume", "no results database")
    assert not (tmp_path / "nowhere").exists()


def test_jumpforward_of_engines_without_it(tmp_path: Path) -> None:
    done = tokensieve("jumpforward", "--engines", "naive", "--regex", "ab+", cwd=tmp_path)
    one_line(done, 2, "no jump-forward", "naive", "tokensdfa")
