"""The user's own specs (every file format, good and malformed) and vocabulary references
with padding ids, which every engine must refuse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness import engines, vocab
from harness.corpora import user
from harness.engines.base import allowed_ids
from harness.errors import BadInput
from harness.spec import Spec
from harness.store import Store

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_a_schema_file(tmp_path: Path) -> None:
    (tmp_path / "order.json").write_text(json.dumps(SCHEMA))
    (entry,) = user.load([tmp_path / "order.json"])
    assert entry.spec.id == "user/order" and entry.spec.kind == "json_schema"


def test_a_directory_of_schemas_and_maskbench_files(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(SCHEMA))
    tests = [{"data": {"n": 1}, "valid": True}, {"data": {"n": "x"}, "valid": False}]
    # as the MaskBench dataset ships its files: a description and meta beside the schema
    maskbench = {"description": "b", "meta": {"full_size": 1}, "schema": SCHEMA, "tests": tests}
    (folder / "b.json").write_text(json.dumps(maskbench))
    found = {e.spec.id: e for e in user.load([folder])}
    assert sorted(found) == ["user/mine/a", "user/mine/b"]
    assert found["user/mine/b"].valid == ({"n": 1},)
    assert found["user/mine/b"].invalid == ({"n": "x"},)
    assert found["user/mine/b"].spec.examples == ('{"n":1}',)
    assert json.loads(found["user/mine/b"].spec.text) == SCHEMA


def test_a_regex_file_and_regexes(tmp_path: Path) -> None:
    path = tmp_path / "patterns.txt"
    path.write_text("# dates\n[0-9]{4}-[0-9]{2}\n\n(a|b)+\\d\n")
    found = user.load([path], regexes=["x+"])
    assert [e.spec.id for e in found] == ["user/patterns#1", "user/patterns#2", "user/regex#1"]
    assert found[1].spec.features == frozenset({"unicode-classes"})
    assert found[1].source == f"{path} line 4"


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_entry_files(tmp_path: Path, suffix: str) -> None:
    items = [
        {"id": "w", "schema": SCHEMA, "valid": [{"n": 2}], "invalid": [{}]},
        {"regex": "[a-z]+", "valid": ["abc"]},
    ]
    path = tmp_path / f"entries{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(items))
    else:
        path.write_text("\n".join(json.dumps(i) for i in items) + "\n")
    w, r = user.load([path])
    assert (w.spec.id, w.valid, w.invalid) == ("user/entries/w", ({"n": 2},), ({},))
    assert (r.spec.id, r.spec.examples) == ("user/entries#2", ("abc",))


def test_a_file_of_one_entry(tmp_path: Path) -> None:
    """An object of entry keys naming `schema` or `regex` is one entry, not a schema
    (whose unknown keywords would make it accept any value)."""
    path = tmp_path / "billing.json"
    item = {"id": "b", "schema": SCHEMA, "valid": [{"n": 2}], "invalid": [{}]}
    path.write_text(json.dumps(item))
    (entry,) = user.load([path])
    assert (entry.spec.id, entry.valid, entry.invalid) == ("user/billing/b", ({"n": 2},), ({},))
    assert json.loads(entry.spec.text) == SCHEMA
    path.write_text(json.dumps({"regex": "[0-9]+", "valid": ["12"]}))
    (entry,) = user.load([path])
    assert entry.spec.kind == "regex" and entry.spec.examples == ("12",)


MALFORMED = [
    ("bad.json", '{"type": "object",\n "properties": ', "bad.json: not valid JSON at line 2"),
    ("list.json", '[{"regex": "a", "colour": 1}]', "list.json entry 1: unknown key 'colour'"),
    ("list.json", '[{"valid": []}]', "entry 1: an entry needs exactly one of"),
    ("lines.jsonl", '{"regex": "a("}\n', "lines.jsonl line 1: regex does not parse"),
    ("lines.jsonl", '{"regex": "a"}\nnot json\n', "lines.jsonl line 2: not valid JSON"),
    ("p.txt", "ok\n(unclosed\n", "p.txt line 2: regex does not parse"),
    ("p.txt", "# only a comment\n", "p.txt: no regex"),
    ("s.json", '{"type": 12}', "s.json: not a valid JSON schema"),
    ("e.json", '[{"regex": "[0-9]+", "valid": ["abc"]}]', "example 'abc' does not match"),
    ("n.json", "3", "want a JSON schema"),
    ("one.json", '{"regex": "a", "valid": 3}', "one.json: `valid` must be"),
    ("nan.json", '{"type": "number", "minimum": NaN}', "nan.json: not valid JSON: NaN is not"),
]


@pytest.mark.parametrize(("name", "text", "expected"), MALFORMED, ids=[m[2] for m in MALFORMED])
def test_malformed_files_are_one_line_naming_them(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(BadInput) as info:
        user.load([path])
    assert expected in str(info.value) and "\n" not in str(info.value)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "bench",
            "--spec",
            str(path),
            "--engines",
            "naive",
            "--vocab",
            "synthetic-1000-0",
            "--reports-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr and "Traceback" not in done.stderr


def test_missing_and_duplicate_spec_files(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such spec file"):
        user.load([tmp_path / "nope.json"])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "x.txt").write_text("a+\n")
    # two files of one name: told apart by their directories (issue 41), not refused
    found = user.load([tmp_path / "a" / "x.txt", tmp_path / "b" / "x.txt"])
    assert [e.spec.id for e in found] == ["user/a/x#1", "user/b/x#1"]
    # two different specs under one id in one file can only be refused
    clash = tmp_path / "clash.json"
    clash.write_text('[{"id": "k", "regex": "a+"}, {"id": "k", "regex": "b+"}]')
    with pytest.raises(BadInput, match="two different specs have the id user/clash/k"):
        user.load([clash])


def test_a_bench_of_user_specs_resumes_without_the_files(tmp_path: Path) -> None:
    path = tmp_path / "mine.txt"
    path.write_text("[a-c]{2,3}\n")
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "bench",
        "--spec",
        str(path),
        "--regex",
        "x|yz",
        "--engines",
        "naive,tokensdfa",
        "--vocab",
        "synthetic-1000-0",
        "--reports-dir",
        str(tmp_path / "r"),
        "--run",
        "u",
        "--no-report",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    with Store(tmp_path / "r" / "results.sqlite", readonly=True) as store:
        assert {c.spec_id for c in store.cells("u")} == {"user/mine#1", "user/regex#1"}
    path.unlink()
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "bench",
            "--resume",
            "--run",
            "u",
            "--reports-dir",
            str(tmp_path / "r"),
            "--no-report",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert again.returncode == 0 and "all 4 cells are already measured" in again.stderr


# --- vocabulary references and padding -----------------------------------------------------


def test_references_are_canonical_and_checked(tmp_path: Path) -> None:
    assert vocab.reference("gpt2", size=50304) == "gpt2;size=50304"
    assert vocab.reference("synthetic-1000-0") == "synthetic-1000-0"
    with pytest.raises(BadInput, match="smaller than"):
        vocab.load("synthetic-1000-0;size=10")
    with pytest.raises(BadInput, match="unknown option"):
        vocab.check("gpt2;colour=red")
    with pytest.raises(BadInput, match="apply to tokenizer files"):
        vocab.check("gpt2;eos=3")


def test_padding_ids_are_special_and_empty() -> None:
    padded = vocab.load("synthetic-1000-0;size=1056")
    assert padded.size == 1056 and padded.mask_words == 33
    assert all(padded.tokens[i] == b"" and i in padded.special_ids for i in range(1000, 1056))
    assert padded.encode("abc") == vocab.load("synthetic-1000-0").encode("abc")


@pytest.mark.parametrize("name", engines.ENGINE_NAMES)
def test_every_engine_refuses_padding_ids_at_every_step(name: str) -> None:
    engine = engines.get(name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(why)
    padded = vocab.load("synthetic-1000-0;size=1100")
    prepared = engine.prepare(padded)
    specs = [Spec.regex("t/pad", "[a-c]+[xyz]"), Spec.schema("t/pads", SCHEMA)]
    if not engine.capabilities.regex:  # a grammar-only engine: the same language
        specs = [Spec.grammar("t/padg", "root ::= [a-c]+ [xyz]\n", "gbnf")]
    for spec in specs:
        matcher = engine.compile(prepared, spec).matcher()
        mask = np.zeros(padded.mask_words, dtype=np.int32)
        for _ in range(8):  # along the engine's own masks: the longest allowed token
            matcher.fill_mask(mask)
            allowed = [int(i) for i in allowed_ids(mask, padded.size)]
            assert not any(i >= 1000 for i in allowed), (name, spec.id)
            assert not matcher.advance(1050)  # a padding id is refused, state unchanged
            text = [i for i in allowed if i != padded.eos_id]
            if not text:
                break
            assert matcher.advance(max(text, key=lambda i: (len(padded.tokens[i]), i)))
