"""Token paths: deterministic texts, real-encoder tokenization, the disk cache, layouts,
and the walk through the reference index."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from harness import corpora
from harness.corpora import paths, schema_order, texts
from harness.errors import MissingData, UnsupportedSpec
from harness.language import converter, reference
from harness.spec import Spec
from harness.vocab import Vocabulary

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path) -> Iterator[Path]:
    """A fresh cache per test, so every test generates its own paths."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKENSIEVE_CACHE", str(tmp_path / "cache"))
        yield tmp_path / "cache"


def byte_vocab(name: str = "bytes+merges") -> Vocabulary:
    """Every byte plus a few merged tokens, with an encoder that merges "ab" and "@": small
    enough to build reference indexes in milliseconds, real enough to have merges."""
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"com", b"<eos>"]
    merged = {b"ab": 256, b"com": 257}

    def encode(text: str) -> list[int]:
        data = text.encode("utf-8")
        ids, i = [], 0
        while i < len(data):
            for piece, token_id in merged.items():
                if data.startswith(piece, i):
                    ids.append(token_id)
                    i += len(piece)
                    break
            else:
                ids.append(data[i])
                i += 1
        return ids

    return Vocabulary(name, tokens, 258, frozenset({258}), encoder_factory=lambda: encode)


def synthetic_or_skip(size: int = 1024) -> Vocabulary:
    from harness import vocab

    if not hasattr(vocab, "synthetic"):
        pytest.skip("harness.vocab.synthetic is not available yet")
    return vocab.synthetic(size, 7)


SAMPLE = [
    "outlines-bench/email",
    "outlines-bench/complex_span_constrained_relation_extraction",
    "llm-formats/uuid-v4-flag",
    "llm-formats/ipv6-compressed",
    "pathological/unicode-cyrillic-range",
    "pathological/unicode-letters",
    "literal-heavy/react-step",
    "handwritten/function-get-weather",
    "handwritten/shape-anyof",
]


def test_regex_paths_match_and_mix_examples_with_draws() -> None:
    spec = corpora.get("llm-formats/ipv4-strict")
    got = paths.paths_for(spec, byte_vocab(), seed=0, n=6)
    assert len(got) == 6
    assert {p.source for p in got} == {"example", "hypothesis"}
    for p in got:
        assert re.fullmatch(spec.text, p.text)
        assert p.layout == "verbatim" and p.exact
        assert p.ids and bytes(b"".join(byte_vocab().tokens[i] for i in p.ids)) == p.text.encode()
    assert len({p.text for p in got}) == 6


def test_paths_use_the_vocabularys_own_encoder() -> None:
    spec = Spec.regex("t/merge", "ab+c", examples=("abbc",))
    (path,) = paths.paths_for(spec, byte_vocab(), n=1)
    assert path.ids == (256, ord("b"), ord("c"))


def test_same_seed_same_paths_across_processes(private_cache: Path) -> None:
    """A fresh interpreter with an empty cache, asking in the opposite order, must draw
    the same texts and ids."""
    vocab = byte_vocab()
    here = {sid: paths.paths_for(corpora.get(sid), vocab, seed=3) for sid in SAMPLE}
    script = (
        "import json, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_paths import byte_vocab, SAMPLE\n"
        "from harness import corpora\n"
        "from harness.corpora import paths\n"
        "v = byte_vocab()\n"
        "def row(s):\n"
        "    got = paths.paths_for(corpora.get(s), v, seed=3)\n"
        "    return [[p.text, list(p.ids), p.source] for p in got]\n"
        "out = {s: row(s) for s in reversed(SAMPLE)}\n"
        "print(json.dumps(out))\n"
    )
    env_cache = private_cache.parent / "other-cache"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "TOKENSIEVE_CACHE": str(env_cache)},
        check=True,
    )
    there = json.loads(done.stdout)
    for sid, got in here.items():
        assert [[p.text, list(p.ids), p.source] for p in got] == there[sid], sid
    assert (env_cache / "paths").is_dir()


def test_different_seeds_draw_different_texts() -> None:
    spec = corpora.get("llm-formats/uuid-lower")
    a = {p.text for p in paths.paths_for(spec, byte_vocab(), seed=0) if p.source == "hypothesis"}
    b = {p.text for p in paths.paths_for(spec, byte_vocab(), seed=1) if p.source == "hypothesis"}
    assert a and b and a != b


def test_cache_hit_returns_identical_paths_and_is_keyed_by_vocab_and_seed(
    private_cache: Path,
) -> None:
    spec = corpora.get("outlines-bench/ssn")
    first = paths.paths_for(spec, byte_vocab(), seed=5)
    files = sorted((private_cache / "paths" / "outlines-bench").rglob("*.json"))
    assert files and all(not f.name.startswith(".") for f in files)
    again = paths.paths_for(spec, byte_vocab(), seed=5)
    assert again == first
    assert sorted((private_cache / "paths" / "outlines-bench").rglob("*.json")) == files
    # A vocabulary with the same name but other tokens gets its own cache directory.
    other = byte_vocab()
    other.tokens[256] = b"zz"
    paths.paths_for(spec, other, seed=5)
    vocab_dirs = {p.name for p in (private_cache / "paths" / "outlines-bench").iterdir()}
    assert len(vocab_dirs - {"texts"}) == 2
    paths.paths_for(spec, byte_vocab(), seed=6)
    seeds = {p.parent.name for p in (private_cache / "paths" / "outlines-bench").rglob("*.json")}
    assert seeds == {"seed-5", "seed-6"}


def test_n_bounds_the_number_of_paths() -> None:
    spec = corpora.get("llm-formats/hex-color-6")
    assert len(paths.paths_for(spec, byte_vocab(), n=3)) == 3
    assert len(paths.paths_for(spec, byte_vocab())) == texts.DEFAULT_N["regex"]


def test_python_incompatible_regex_keeps_its_examples_only() -> None:
    spec = corpora.get("pathological/unicode-letters")
    drawn = texts.texts_for(spec)
    assert [t for t, _ in drawn.items] == list(spec.examples)
    assert drawn.notes and "cannot compile" in drawn.notes[0]


def test_non_ascii_patterns_fall_back_to_unicode_draws() -> None:
    spec = corpora.get("pathological/unicode-emoji-range")
    drawn = [t for t, s in texts.texts_for(spec).items if s == "hypothesis"]
    assert drawn and all(re.fullmatch(spec.text, t) for t in drawn)


def test_schema_layouts_and_sources() -> None:
    spec = corpora.get("handwritten/function-get-weather")
    vocab = byte_vocab()
    compact = paths.paths_for(spec, vocab, layout="compact")
    spaced = paths.paths_for(spec, vocab, layout="spaced")
    pretty = paths.paths_for(spec, vocab, layout="pretty")
    assert len(compact) == texts.DEFAULT_N["json_schema"]
    assert [p.source for p in compact][:2] == ["example", "example"]
    assert "generated" in {p.source for p in compact}
    for c, s, p in zip(compact, spaced, pretty, strict=True):
        value = json.loads(c.text)
        assert json.loads(s.text) == json.loads(p.text) == value
        assert c.text == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        assert s.text == json.dumps(value, ensure_ascii=False)
        assert p.text == json.dumps(value, indent=2, ensure_ascii=False)
    # outlines-core's whitespace `[ ]?` accepts compact and spaced, not pretty.
    regex = converter.schema_to_regex(spec)
    assert all(re.fullmatch(regex, p.text) for p in compact + spaced)
    assert not any(re.fullmatch(regex, p.text) for p in pretty)
    assert paths.POLICY_LAYOUTS["regex-builder"] == ("compact", "spaced")


def test_generated_instances_are_valid_and_in_schema_order() -> None:
    from jsonschema.validators import validator_for

    for sid in (
        "handwritten/shape-anyof",
        "handwritten/person-nested",
        "handwritten/order-shared-defs",
    ):
        spec = corpora.get(sid)
        schema = json.loads(spec.text)
        validator = validator_for(schema)(schema)
        got = paths.paths_for(spec, byte_vocab(), n=6)
        generated = [p for p in got if p.source == "generated"]
        assert generated, sid
        regex = converter.schema_to_regex(spec)
        for p in generated:
            assert validator.is_valid(json.loads(p.text)), (sid, p.text)
        # The converted regex fixes property order; ordering makes the first ones match.
        assert re.fullmatch(regex, generated[0].text), (sid, generated[0].text)


def test_schema_order_follows_properties_refs_and_branches() -> None:
    schema = {
        "$defs": {"pt": {"properties": {"x": {}, "y": {}}}},
        "properties": {
            "b": {"$ref": "#/$defs/pt"},
            "a": {"type": "array", "items": {"$ref": "#/$defs/pt"}},
            "c": {"anyOf": [{"properties": {"q": {}, "p": {}}}]},
        },
    }
    value = {"a": [{"y": 1, "x": 2}], "c": {"p": 1, "q": 2}, "b": {"y": 0, "x": 0}, "z": 9}
    ordered = schema_order.schema_order(value, schema)
    assert json.dumps(ordered) == (
        '{"b": {"x": 0, "y": 0}, "a": [{"x": 2, "y": 1}], "c": {"q": 2, "p": 1}, "z": 9}'
    )


def test_schema_order_chooses_the_branch_an_array_matches() -> None:
    """MaskBench Github_medium---o65942's shape: a oneOf over arrays whose items differ.
    The items are ordered by the branch the array matches, as for objects, not by the
    first branch's items (the sampled instances the compiler refused were only in the
    other branch's key order)."""
    schema = {
        "type": "array",
        "oneOf": [
            {"items": {"properties": {"kind": {"const": "a"}, "x": {}}, "required": ["kind"]}},
            {"items": {"properties": {"y": {}, "kind": {"const": "b"}}, "required": ["kind"]}},
        ],
    }
    ordered = schema_order.schema_order([{"kind": "b", "y": 1}], schema)
    assert json.dumps(ordered) == '[{"y": 1, "kind": "b"}]'


def test_schema_order_merges_a_keys_schemas_across_all_of() -> None:
    """MaskBench Github_medium---o39168's shape: the value of "p" is declared in three
    allOf parts; its keys follow their merge (the compiler's order), not the first
    part's `properties` alone, which names none of them."""
    schema = {
        "allOf": [
            {"type": "object", "properties": {"t": {}, "p": {"type": "object"}}},
            {"properties": {"p": {"properties": {"id": {}}}}},
            {"properties": {"p": {"properties": {"m": {}, "f": {}}}}},
            {"patternProperties": {"^p$": {"properties": {"z": {}}}}},
        ]
    }
    value = {"p": {"z": 0, "f": 1, "x": 2, "m": 3, "id": 4}, "t": 5}
    ordered = schema_order.schema_order(value, schema)
    assert json.dumps(ordered) == '{"t": 5, "p": {"id": 4, "m": 3, "f": 1, "z": 0, "x": 2}}'


def test_maskbench_paths_use_its_valid_instances() -> None:
    try:
        found = corpora.entries("maskbench")
    except MissingData as exc:
        pytest.skip(str(exc))
    entry = next(e for e in found if len(e.valid) >= 2)
    got = paths.paths_for(entry.spec, byte_vocab(), n=2)
    assert [p.source for p in got] == ["maskbench-valid", "maskbench-valid"]
    assert [json.loads(p.text) for p in got] == list(entry.valid[:2])


def test_synthetic_vocabulary_paths_are_exact_and_reproducible() -> None:
    vocab = synthetic_or_skip()
    for sid in SAMPLE:
        spec = corpora.get(sid)
        first = paths.paths_for(spec, vocab, seed=0)
        assert first, sid
        for p in first:
            assert vocab.decode(p.ids) == p.text.encode("utf-8")
            assert p.exact
    # Same texts from the cache-free path: clear the in-memory fingerprint and recompute.
    paths._fingerprints.clear()
    assert paths.paths_for(corpora.get(SAMPLE[0]), vocab, seed=0) == paths.paths_for(
        corpora.get(SAMPLE[0]), vocab, seed=0
    )


# --- the reference check ---------------------------------------------------------------


class DictIndex:
    """A hand-built token-level index: accepts exactly the token sequences (1, 2) and
    (1, 2, 2)."""

    initial_state = 0
    edges: ClassVar[dict[tuple[int, int], int]] = {(0, 1): 1, (1, 2): 2, (2, 2): 3}
    accepting: ClassVar[set[int]] = {2, 3}

    def next_state(self, state: int, token: int) -> int | None:
        return self.edges.get((state, token))

    def is_accepting(self, state: int) -> bool:
        return state in self.accepting


def test_check_path_walks_and_reports_the_failing_step() -> None:
    index = DictIndex()
    assert paths.check_path(index, [1, 2]) == (True, None)
    assert paths.check_path(index, [1, 2, 2]) == (True, None)
    assert paths.check_path(index, [2]) == (False, 0)
    assert paths.check_path(index, [1, 2, 2, 2]) == (False, 3)
    # Every token allowed but the text is not complete: the failure is at the end.
    assert paths.check_path(index, [1]) == (False, 1)
    assert paths.check_path(index, []) == (False, 0)


def test_reference_accepts_real_paths_and_rejections_are_recorded(
    private_cache: Path,
) -> None:
    pytest.importorskip("tokensdfa", reason="the tokensdfa extension is not built")
    vocab = byte_vocab()
    spec = corpora.get("outlines-bench/email")
    got = paths.paths_for(spec, vocab, check=True)
    assert got and all(p.reference is True and p.failed_step is None for p in got)
    # The same paths walked through a narrower language: "a+b@mail.co.uk" fails at "+".
    narrow = Spec.regex("t/narrow", "[a-z.]+@[a-z.]+", examples=())
    index = converter.reference_index(narrow, vocab)
    by_text = {p.text: paths.check_path(index, p) for p in got}
    assert by_text["a+b@mail.co.uk"] == (False, 1)
    assert by_text["john.doe@example.com"] == (True, None)
    # Verdicts are stored in the cache file and come back without a new check.
    record = next((private_cache / "paths" / "outlines-bench").rglob("email.verbatim.*.json"))
    stored = json.loads(record.read_text())
    assert len(stored["reference"]["verdicts"]) == len(got)
    assert paths.paths_for(spec, vocab) == got


def test_reference_rejection_is_kept_on_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    vocab = byte_vocab()
    spec = Spec.regex("t/two", "ab|abc", examples=("ab", "abc"))
    monkeypatch.setattr(reference, "version", lambda: "fake-1")
    monkeypatch.setattr(converter, "reference_index", lambda s, v: RejectAbc())
    got = paths.paths_for(spec, vocab, check=True)
    assert [p.text for p in got] == ["ab", "abc"]
    assert [p.reference for p in got] == [True, False]
    assert got[1].failed_step == 1
    assert paths.rejected(got) == [got[1]]


class RejectAbc:
    """Accepts the token sequence for "ab" (the merged token 256) and nothing longer."""

    initial_state = 0

    def next_state(self, state: int, token: int) -> int | None:
        return 1 if (state, token) == (0, 256) else None

    def is_accepting(self, state: int) -> bool:
        return state == 1


def test_reference_unavailable_features_raise_unsupported() -> None:
    pytest.importorskip("tokensdfa", reason="the tokensdfa extension is not built")
    spec = corpora.get("pathological/lookahead-negative")
    with pytest.raises(UnsupportedSpec, match="look-around"):
        paths.paths_for(spec, byte_vocab(), check=True)
    # Without the check the paths still exist.
    assert paths.paths_for(spec, byte_vocab())


def test_real_vocabulary_paths_decode_exactly_and_pass_the_reference() -> None:
    from harness import vocab

    try:
        gpt2 = vocab.load("gpt2")
    except (MissingData, ImportError) as exc:
        pytest.skip(f"gpt2 vocabulary unavailable: {exc}")
    for sid in ("outlines-bench/ssn", "llm-formats/uuid-lower", "handwritten/classification-enum"):
        got = paths.paths_for(corpora.get(sid), gpt2)
        assert got, sid
        assert all(p.exact for p in got), sid
        # Real BPE merges: fewer tokens than bytes on these ASCII texts.
        assert sum(len(p.ids) for p in got) < sum(len(p.text.encode()) for p in got)
    if importlib.util.find_spec("tokensdfa") is None:
        return
    checked = paths.paths_for(corpora.get("outlines-bench/ssn"), gpt2, check=True)
    assert [p.reference for p in checked] == [True] * len(checked)
