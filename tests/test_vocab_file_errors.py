"""Malformed vocabulary files and options: each is a one-line BadInput naming the file
(or the neighbouring file) at fault."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from vocab_file_helpers import made_files, temporary_cache

from harness.errors import BadInput
from harness.vocab import files, gguf_file


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from temporary_cache(tmp_path_factory)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_files(tmp_path_factory)


# --- Malformed files: one line naming the file ------------------------------------------------


def _gguf(path: Path, model: str | None, **extra: object) -> bytes:
    from gguf import GGUFWriter

    writer = GGUFWriter(path, "llama")
    if model is not None:
        writer.add_tokenizer_model(model)
        writer.add_token_list(["a", "b", "ab", "<unk>"])
        writer.add_token_types([1, 1, 1, 2])
        writer.add_token_scores([0.0, 0.0, 1.0, 0.0])
        writer.add_token_merges([str(extra.pop("merge", "a b"))])
    for key, value in extra.items():
        writer.add_string(key, value) if isinstance(value, str) else writer.add_uint32(key, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path.read_bytes()


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


_BPE = {"type": "BPE", "vocab": {"a": 0}, "merges": []}
_ANY = {"eos": "0", "split_pattern": "."}
BROKEN = [
    ("tokenizer.json", b'{\n  "model": {\n    "type": "BPE",\n', {}, "not JSON at line 4"),
    ("tokenizer.json", _json({"version": "1.0"}), {}, 'no "model"'),
    ("tokenizer.json", _json({"model": {"type": "Foo", "vocab": {}}}), {}, "unknown model type"),
    ("tokenizer.json", _json({"model": {"type": "WordPiece", "vocab": {"a": 0}}}), {}, "context"),
    ("tokenizer.json", _json({"model": _BPE}), {}, "neither byte-level nor"),
    (
        "tokenizer.json",
        _json({"model": {**_BPE, "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel"}}),
        {},
        "tokenizers cannot load it",
    ),
    ("x.tiktoken", b"QQ== 0\nQg== 1\n!!! 2\n", _ANY, ":3: the token does not decode"),
    ("x.tiktoken", b"QQ== 0\nQg==\n", _ANY, ":2: 'Qg==' is not"),
    ("x.tiktoken", b"QQ== 0\nQg== 0\n", _ANY, ":2: rank 0 appears twice"),
    ("x.tiktoken", b"QQ== 0\nQQ== 1\n", _ANY, ":2: token b'A' appears twice"),
    ("x.tiktoken", b"QQ== 0\n", {}, "--split-pattern"),
    ("x.tiktoken", b"QQ== 0\n", {"split_pattern": ".", "eos": "<nope>"}, "names no token"),
    ("x.tiktoken", b"QQ== 0\n", {"split_pattern": "."}, "--eos"),
    ("x.tiktoken", b"QQ== 0\n", {"split_pattern": ".", "eos": "7"}, "is not a token id"),
    ("tokenizer.model", b"\x0a\x05hello", {}, "not a SentencePiece model"),
    ("x.gguf", b"GGUX" + bytes(40), {}, "not a GGUF file"),
    ("x.gguf", b"GGUF\x03\x00\x00\x00" + bytes(4), {}, "GGUF header truncated"),
    ("x.gguf", b"GGUF\x03\x00\x00\x00" + bytes(8) + b"\x05" + bytes(7), {}, "damaged GGUF"),
    ("x.gguf", None, {}, "no tokenizer"),
    ("x.gguf", "bert", {}, "'bert' is not supported"),
    ("x.gguf", "gpt2", {}, "pre-tokenizer 'default'"),
    ("x.gguf", "llama", {"split_pattern": "."}, "applies only to 'gpt2'"),
    ("x.bin", b"\x00\x01garbage", {}, "unknown vocabulary file format"),
    ("x.bin", b"", {}, "empty"),
]


@pytest.mark.parametrize(("name", "content", "options", "message"), BROKEN)
def test_malformed_file(
    tmp_path: Path, name: str, content: bytes | str | None, options: dict[str, str], message: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        _gguf(path, content)
    assert_bad(path, message, **options)


def assert_bad(path: Path, message: str, **options: object) -> None:
    with pytest.raises(BadInput) as caught:
        files.load(path, **options)
        pytest.fail("loaded")
    text = str(caught.value)
    assert "\n" not in text
    assert str(path) in text
    assert message in text


def test_malformed_options_and_neighbours(made: Path, tmp_path: Path) -> None:
    gpt2 = made / "gpt2" / "tokenizer.json"
    assert_bad(tmp_path / "missing.json", "cannot read it")
    assert_bad(gpt2, "--special-tokens applies only", special_tokens=made / "o200k-specials.json")
    assert_bad(gpt2, "--split-pattern applies only", split_pattern=".")
    assert_bad(gpt2, "'<nope>' names no token", eos="<nope>")
    # No EOS anywhere, then a broken generation_config.json beside the file.
    shutil.copy(gpt2, tmp_path / "tokenizer.json")
    assert_bad(tmp_path / "tokenizer.json", "--eos")
    (tmp_path / "generation_config.json").write_text('{"eos_token_id": ')
    with pytest.raises(BadInput, match=r"generation_config\.json: not JSON at line 1"):
        files.load(tmp_path / "tokenizer.json")
    (tmp_path / "generation_config.json").write_text('{"eos_token_id": 999999}')
    with pytest.raises(BadInput, match="eos_token_id 999999 is not a token id"):
        files.load(tmp_path / "tokenizer.json")
    # Special tokens: not JSON, and an id that is already a rank.
    rank_file = made / "o200k.tiktoken"
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(BadInput, match=r"bad\.json: special tokens must be a JSON object"):
        files.load(rank_file, special_tokens=tmp_path / "bad.json")
    (tmp_path / "clash.json").write_text('{"<|x|>": 5}')
    with pytest.raises(BadInput, match=r"clash\.json: special token '<\|x\|>' has id 5"):
        files.load(rank_file, special_tokens=tmp_path / "clash.json", eos="<|x|>")
    # A split pattern the encoder cannot compile fails when the encoder is built.
    vocab = files.load(rank_file, eos="0", split_pattern="(unclosed")
    with pytest.raises(BadInput, match="split pattern does not compile"):
        vocab.encode("x")


def test_truncated_gguf(made: Path, tmp_path: Path) -> None:
    data = (made / "llama3.gguf").read_bytes()
    (tmp_path / "cut.gguf").write_bytes(data[: len(data) // 2])
    assert_bad(tmp_path / "cut.gguf", "GGUF metadata")
    _gguf(tmp_path / "eos.gguf", "llama", **{gguf_file.EOS: 9})
    assert_bad(tmp_path / "eos.gguf", "tokenizer.ggml.eos_token_id 9 is not a token id")
    _gguf(tmp_path / "pre.gguf", "gpt2", **{gguf_file.PRE: "exotic"})
    assert_bad(tmp_path / "pre.gguf", "pre-tokenizer 'exotic'", eos="0")
    vocab = files.load(tmp_path / "pre.gguf", eos="0", split_pattern=r"\w+|\s+")
    assert vocab.encode("ab") == [2] and vocab.encode("ba") == [1, 0]
    _gguf(tmp_path / "merge.gguf", "gpt2", merge="a x", **{gguf_file.PRE: "gpt-2"})
    vocab = files.load(tmp_path / "merge.gguf", eos="0")
    with pytest.raises(BadInput, match=r"merge\.gguf: merge 0 a 'x' joins or makes no token"):
        vocab.encode("ab")
