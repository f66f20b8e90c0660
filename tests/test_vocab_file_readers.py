"""The readers' own parts beside the libraries they stand in for: restated constants
(split patterns) match their sources, default split patterns, the GGUF metadata reader
agrees with gguf's own, a big-endian GGUF loads as the little-endian one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from vocab_file_helpers import assert_same, made_files, mistral_pieces, temporary_cache

from harness.errors import BadInput
from harness.vocab import builtin, files, gguf_file, tiktoken_file


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from temporary_cache(tmp_path_factory)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_files(tmp_path_factory)


# --- Sources of restated constants -----------------------------------------------------------


def test_restated_patterns_match_their_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    from llama_models.llama3.tokenizer import Tokenizer
    from tiktoken_ext import openai_public

    assert Tokenizer.pat_str == gguf_file.LLAMA3_PAT_STR
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    assert openai_public.cl100k_base()["pat_str"] == tiktoken_file.CL100K_PAT_STR
    source = Path(openai_public.__file__).read_text()
    assert f'# r"""{gguf_file.GPT2_PAT_STR}"""' in source


def test_default_split_patterns(tmp_path: Path) -> None:
    path = tmp_path / "x.tiktoken"
    lines = b"\n".join(b"QQ== %d" % i for i in range(100_256))
    assert tiktoken_file.split_pattern(path, lines, None) == tiktoken_file.CL100K_PAT_STR
    lines = b"\n".join(b"QQ== %d" % i for i in range(199_998))
    assert tiktoken_file.split_pattern(path, lines, None) == builtin.O200K_PAT_STR
    assert tiktoken_file.split_pattern(path, lines, "x+") == "x+"
    with pytest.raises(BadInput, match="--split-pattern"):
        tiktoken_file.split_pattern(path, b"QQ== 0\n", None)


# --- The metadata reader agrees with gguf's own ------------------------------------------------


# Not llama3.gguf: GGUFReader takes ~12 s over its 128k tokens and 230k merges.
@pytest.mark.parametrize("name", ["gpt2.gguf", "mistral.gguf"])
def test_metadata_matches_gguf_reader(made: Path, name: str) -> None:
    from gguf import GGUFReader

    reader = GGUFReader(made / name)
    content, values = gguf_file.metadata(made / name, gguf_file.VOCAB_KEYS)
    expected = {
        key: reader.fields[key].contents() for key in gguf_file.VOCAB_KEYS if key in reader.fields
    }
    assert {k: v for k, v in values.items() if k in gguf_file.VOCAB_KEYS} == expected
    assert len(content) <= reader.data_offset


def test_big_endian_gguf(made: Path, tmp_path: Path) -> None:
    from gguf import GGUFEndian, GGUFWriter

    pieces, scores, types = mistral_pieces()
    writer = GGUFWriter(tmp_path / "big.gguf", "llama", endianess=GGUFEndian.BIG)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_eos_token_id(2)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    assert_same(files.load(tmp_path / "big.gguf"), files.load(made / "mistral.gguf"))
