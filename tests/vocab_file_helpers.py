"""What the tests of vocabularies from model files share (tests/test_vocab_file*.py):
sample texts, the comparison with the built-in vocabularies, a temporary cache, and the
files built from the built-in vocabularies with the official libraries (`tokenizers`,
`gguf`'s writer, tiktoken's rank-line format, Mistral's own SentencePiece model).
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.vocab import Vocabulary, builtin, gguf_file
from harness.vocab import load as load_builtin
from harness.vocab import sentencepiece as spm_module

TEXTS = [
    "hello world",
    "Hello, World! The year 2024 had 366 days; 1234567890 and 3.14159.",
    "é 中文 🙂 naïve café — “quotes” ‘single’ …",
    "日本語のテキストと한국어 텍스트, Ελληνικά, русский",
    "🙂🙃👍🏽👨‍👩‍👧 flags 🇫🇷",
    '{"name": "x\\u00e9", "values": [1, 2.5e-3, -7], "ok": true}',
    "  leading and trailing spaces  ",
    "tabs\tand\nnewlines\r\n\n\nend      wide    runs",
    "<|endoftext|></s><s>[INST]<|eot_id|><unk>",
    "a" * 200 + " " * 40 + "1" * 30,
    "",
]


def temporary_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """TOKENSIEVE_CACHE set to a fresh directory while the caller's fixture lives."""
    root = tmp_path_factory.mktemp("tokensieve-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKENSIEVE_CACHE", str(root))
        yield root


_BUILTIN: dict[str, Vocabulary] = {}


def builtin_vocab(name: str) -> Vocabulary:
    if name not in _BUILTIN:
        _BUILTIN[name] = load_builtin(name)
    return _BUILTIN[name]


def assert_same(vocab: Vocabulary, reference: Vocabulary, texts: list[str] = TEXTS) -> None:
    assert vocab.size == reference.size
    assert vocab.tokens == reference.tokens
    assert vocab.special_ids == reference.special_ids
    assert vocab.eos_id == reference.eos_id
    for text in texts:
        assert vocab.encode(text) == reference.encode(text), text


def assert_exact(vocab: Vocabulary, texts: list[str] = TEXTS) -> None:
    for text in texts:
        ids = vocab.encode(text)
        assert vocab.decode(ids) == text.encode(), text
        assert not set(ids) & vocab.special_ids, text


# --- Building files from the built-in vocabularies ------------------------------------------

_TO_CHAR = {byte: char for char, byte in builtin._gpt2_byte_decoder().items()}


def byte_level(token: bytes) -> str:
    return "".join(_TO_CHAR[byte] for byte in token)


def merges_of(tokens: list[bytes]) -> list[tuple[str, str]]:
    """BPE merges reproducing rank-ordered merging: every split of each token into two
    lower-ranked tokens, ordered by the rank of the result (rank = id here)."""
    ids = {token: i for i, token in enumerate(tokens)}
    merges = []
    for rank, token in enumerate(tokens):
        pairs = [(token[:k], token[k:]) for k in range(1, len(token))]
        pairs = [(a, b) for a, b in pairs if ids.get(a, rank) < rank and ids.get(b, rank) < rank]
        pairs.sort(key=lambda pair: (ids[pair[0]], ids[pair[1]]))
        merges += [(byte_level(a), byte_level(b)) for a, b in pairs]
    return merges


def llama3_parts() -> tuple[list[bytes], list[str], list[tuple[str, str]]]:
    """(ordinary tokens, special texts, merges) of the built-in llama3."""
    vocab = builtin_vocab("llama3")
    ordinary = vocab.tokens[:128_000]
    return ordinary, [t.decode() for t in vocab.tokens[128_000:]], merges_of(ordinary)


def gpt2_files() -> tuple[dict[str, int], list[tuple[str, str]]]:
    encoder_json, vocab_bpe = builtin.package_files("gpt2", builtin.SOURCES["gpt2"])
    lines = vocab_bpe.read_text(encoding="utf-8").splitlines()[1:]
    return json.loads(encoder_json.read_bytes()), [tuple(line.split()) for line in lines if line]


def mistral_model() -> Path:
    return builtin.package_files("mistral-spm", builtin.SOURCES["mistral-spm"])[0]


def mistral_pieces() -> tuple[list[str], list[float], list[int]]:
    """Pieces, scores and types read from the model protobuf itself."""
    import struct

    data = mistral_model().read_bytes()
    pieces, scores, types = [], [], []
    for field, _, _, end, start in spm_module.proto_fields(data):
        if field != 1:
            continue
        values = {f: (s, e) for f, _, _, e, s in spm_module.proto_fields(data[start:end])}
        message = data[start:end]
        pieces.append(message[slice(*values[1])].decode())
        scores.append(struct.unpack("<f", message[slice(*values[2])])[0])
        kind = spm_module._read_varint(message, values[3][0])[0] if 3 in values else 1
        types.append(kind)
    return pieces, scores, types


_MADE: dict[str, Path] = {}


def made_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of files made from the built-in vocabularies, built once per session
    (about 10 s) however many test modules ask for it."""
    if "root" not in _MADE:
        _MADE["root"] = _make(tmp_path_factory.mktemp("made"))
    return _MADE["root"]


def _make(root: Path) -> Path:
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    ordinary, specials, merges = llama3_parts()
    # Llama 3 as tokenizer.json, EOS from generation_config.json (a list: the first wins).
    (root / "llama3").mkdir()
    vocab = {byte_level(token): i for i, token in enumerate(ordinary)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(gguf_file.LLAMA3_PAT_STR), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(text, special=True, normalized=False) for text in specials])
    tok.save(str(root / "llama3" / "tokenizer.json"))
    (root / "llama3" / "generation_config.json").write_text('{"eos_token_id": [128001, 128009]}')
    # GPT-2 as tokenizer.json with a prefix space (as RoBERTa's), EOS from tokenizer_config.
    (root / "gpt2").mkdir()
    gpt2_vocab, gpt2_merges = gpt2_files()
    tok = Tokenizer(models.BPE(vocab=gpt2_vocab, merges=gpt2_merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    tok.save(str(root / "gpt2" / "tokenizer.json"))
    (root / "gpt2" / "tokenizer_config.json").write_text('{"eos_token": "<|endoftext|>"}')
    # Rank files and their special tokens.
    lines = [base64.b64encode(t) + b" %d" % i for i, t in enumerate(ordinary)]
    (root / "llama3.tiktoken").write_bytes(b"\n".join(lines) + b"\n")
    llama3_specials = {text: 128_000 + i for i, text in enumerate(specials)}
    (root / "llama3-specials.json").write_text(json.dumps(llama3_specials))
    o200k = builtin_vocab("o200k").tokens[:199_998]
    lines = [base64.b64encode(t) + b" %d" % i for i, t in enumerate(o200k)]
    (root / "o200k.tiktoken").write_bytes(b"\n".join(lines))
    (root / "o200k-specials.json").write_text(json.dumps(builtin.O200K_SPECIAL_TOKENS))
    # Mistral's SentencePiece model, as it ships.
    shutil.copy(mistral_model(), root / "tokenizer.model")
    write_ggufs(root, ordinary, specials, merges)
    return root


def write_ggufs(
    root: Path, ordinary: list[bytes], specials: list[str], merges: list[tuple[str, str]]
) -> None:
    """A llama3-like and a gpt2-like 'gpt2' GGUF, and a mistral-spm-like 'llama' GGUF."""
    from gguf import GGUFWriter, TokenType

    def write(name: str, model: str, pre: str | None, tokens: list[str], **arrays: Any) -> None:
        writer = GGUFWriter(root / name, "llama")
        writer.add_tokenizer_model(model)
        if pre is not None:
            writer.add_tokenizer_pre(pre)
        writer.add_token_list(tokens)
        writer.add_token_types(arrays["types"])
        if "merges" in arrays:
            writer.add_token_merges([f"{a} {b}" for a, b in arrays["merges"]])
        if "scores" in arrays:
            writer.add_token_scores(arrays["scores"])
        writer.add_eos_token_id(arrays["eos"])
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()

    normal, control = int(TokenType.NORMAL), int(TokenType.CONTROL)
    tokens = [byte_level(t) for t in ordinary] + specials
    types = [normal] * len(ordinary) + [control] * len(specials)
    write("llama3.gguf", "gpt2", "llama-bpe", tokens, types=types, merges=merges, eos=128_001)
    gpt2_vocab, gpt2_merges = gpt2_files()
    tokens = sorted(gpt2_vocab, key=gpt2_vocab.get)
    types = [normal] * 50_256 + [control]
    write("gpt2.gguf", "gpt2", "gpt-2", tokens, types=types, merges=gpt2_merges, eos=50_256)
    pieces, scores, types = mistral_pieces()
    write("mistral.gguf", "llama", None, pieces, types=types, scores=scores, eos=2)
