"""llama.cpp GGUF files as canonical vocabularies, from the tokenizer metadata alone (the
weights are never read; a GGUF with no tensors is fine). See `harness.vocab.files` for the
dispatch, EOS and cache.

Two tokenizer models (`tokenizer.ggml.model`):
- "gpt2", byte-level BPE: normal tokens are byte-level strings (GPT-2's byte-to-unicode
  alphabet); the encoder is a `tokenizers` BPE built from the tokens and
  `tokenizer.ggml.merges`, split by the pattern that `tokenizer.ggml.pre` names;
- "llama", SentencePiece: `\u2581` is a space and byte pieces `<0xNN>` are that byte; the
  encoder is sentencepiece over a model protobuf built from the pieces, scores and types.
By token type: control, unknown and unused tokens are special ids (their text, never
matched); user-defined tokens are ordinary text, matched whole by the encoder.
"""

from __future__ import annotations

import functools
import mmap
import struct
from pathlib import Path
from typing import Any

from harness.errors import BadInput
from harness.vocab import sentencepiece
from harness.vocab.cache import Parsed
from harness.vocab.hf import byte_level_bytes
from harness.vocab.model import Encoder
from harness.vocab.sentencepiece import (
    PIECE_BYTE,
    PIECE_CONTROL,
    PIECE_NORMAL,
    PIECE_UNKNOWN,
    PIECE_UNUSED,
    PIECE_USER_DEFINED,
)

MODEL, PRE = "tokenizer.ggml.model", "tokenizer.ggml.pre"
TOKENS, TYPES = "tokenizer.ggml.tokens", "tokenizer.ggml.token_type"
SCORES, MERGES = "tokenizer.ggml.scores", "tokenizer.ggml.merges"
EOS = "tokenizer.ggml.eos_token_id"
REMOVE_EXTRA_WS = "tokenizer.ggml.remove_extra_whitespaces"
_SPECIAL_TYPES = (PIECE_CONTROL, PIECE_UNKNOWN, PIECE_UNUSED)

# Split patterns of the pre-tokenizers llama.cpp names, as the models' own files state them:
# Llama 3 from llama_models/llama3/tokenizer.py (`Tokenizer.pat_str`), GPT-2 from
# tiktoken_ext/openai_public.py (the commented original of r50k, which is also the regex of
# the `tokenizers` ByteLevel pre-tokenizer), Qwen2 from Qwen2's tokenizer.json (quoted in
# llama.cpp's llama-vocab.cpp). Tests check the first two against their sources. The flag
# is llama.cpp's `ignore_merges`: a pre-token that is itself a token is not merged.
LLAMA3_PAT_STR = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"""
    r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
GPT2_PAT_STR = r"""'s|'t|'re|'ve|'m|'ll|'d| ?[\p{L}]+| ?[\p{N}]+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
QWEN2_PAT_STR = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"""
    r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
PRE_SPLITS: dict[str, tuple[str, bool]] = {
    "llama-bpe": (LLAMA3_PAT_STR, True),
    "llama3": (LLAMA3_PAT_STR, True),
    "llama-v3": (LLAMA3_PAT_STR, True),
    "gpt-2": (GPT2_PAT_STR, False),
    "qwen2": (QWEN2_PAT_STR, False),
}


# --- Metadata ------------------------------------------------------------------------------

# The key-value section is read here rather than with gguf's `GGUFReader`, which builds two
# numpy arrays per string and takes ~7 s for Llama 3's 128k tokens and 280k merges (this
# takes ~0.3 s); a test checks that both read the same values.
_SCALARS = dict(zip((0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12), "BbHhIif?Qqd", strict=True))
_STRING, _ARRAY = 8, 9
VOCAB_KEYS = frozenset({MODEL, PRE, TOKENS, TYPES, SCORES, MERGES, EOS, REMOVE_EXTRA_WS})


def metadata(path: Path, keys: frozenset[str] = frozenset()) -> tuple[bytes, dict[str, Any]]:
    """The file's header and key-value section (all the vocabulary comes from, none of the
    tensors), and the values of `keys` plus every string-valued key."""
    try:
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            end, values = _scan(path, data, keys)
            return data[:end], values
    except OSError as error:
        raise BadInput(f"{path}: cannot read it: {error.strerror}") from None
    except ValueError:  # mmap refuses an empty file
        raise BadInput(f"{path}: not a GGUF file (it is empty)") from None


def _scan(path: Path, data: Any, keys: frozenset[str]) -> tuple[int, dict[str, Any]]:
    if data[:4] != b"GGUF":
        raise BadInput(f"{path}: not a GGUF file (bad magic {data[:4]!r})")
    if len(data) < 24:
        raise BadInput(f"{path}: GGUF header truncated")
    order = "<" if struct.unpack_from("<I", data, 4)[0] & 0xFFFF else ">"
    version, _, count = struct.unpack_from(order + "IQQ", data, 4)
    if version not in (2, 3):
        raise BadInput(f"{path}: GGUF version {version} is not supported (2 or 3)")
    pos, values = 24, {}
    try:
        for _ in range(count):
            key, pos = _value(data, pos, _STRING, order, True)
            (kind,) = struct.unpack_from(order + "I", data, pos)
            value, pos = _value(data, pos + 4, kind, order, kind == _STRING or key in keys)
            if value is not None:
                values[key] = value
    except (struct.error, KeyError):
        raise BadInput(f"{path}: damaged GGUF metadata near byte {pos}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: GGUF metadata near byte {pos} is not UTF-8") from None
    if pos > len(data):
        raise BadInput(f"{path}: GGUF metadata truncated")
    return pos, values


def _value(data: Any, pos: int, kind: int, order: str, decode: bool) -> tuple[Any, int]:
    """(the value at `pos` if `decode` else None, the position after it)."""
    if kind in _SCALARS:
        end = pos + struct.calcsize(_SCALARS[kind])
        return struct.unpack_from(order + _SCALARS[kind], data, pos)[0] if decode else None, end
    if kind == _STRING:
        (length,) = struct.unpack_from(order + "Q", data, pos)
        end = pos + 8 + length
        if end > len(data):
            raise struct.error("string past the end of the file")
        return data[pos + 8 : end].decode() if decode else None, end
    if kind != _ARRAY:
        raise KeyError(kind)
    item, count = struct.unpack_from(order + "IQ", data, pos)
    pos += 12
    if item in _SCALARS:
        end = pos + count * struct.calcsize(_SCALARS[item])
        if not decode:
            return None, end
        return list(struct.unpack_from(f"{order}{count}{_SCALARS[item]}", data, pos)), end
    items = []
    for _ in range(count):
        value, pos = _value(data, pos, item, order, decode)
        items.append(value)
    return items if decode else None, pos


def split_settings(path: Path, strings: dict[str, Any], given: str | None) -> tuple[str, bool]:
    """(split pattern, ignore merges) for a "gpt2" model; ("", False) for "llama". BadInput
    for a file without a tokenizer, another model, or an unknown pre-tokenizer without
    `given`."""
    model = strings.get(MODEL)
    if model is None:
        raise BadInput(f"{path}: the GGUF file has no tokenizer (no {MODEL})")
    if model == "llama":
        if given is not None:
            raise BadInput(f"{path}: a split pattern applies only to 'gpt2' (BPE) tokenizers")
        return "", False
    if model != "gpt2":
        raise BadInput(f"{path}: tokenizer model {model!r} is not supported ('gpt2' or 'llama')")
    pre = strings.get(PRE, "default")
    known = PRE_SPLITS.get(pre)
    if given is not None:
        return given, known[1] if known else False
    if known is None:
        raise BadInput(
            f"{path}: pre-tokenizer {pre!r} is not one of {', '.join(PRE_SPLITS)}; give its "
            "split pattern (--split-pattern REGEX)"
        )
    return known


# --- Vocabulary --------------------------------------------------------------------------


def _table(path: Path) -> tuple[dict[str, Any], list[str], list[int]]:
    """(the tokenizer's metadata, token strings, token types), checked."""
    _, values = metadata(path, VOCAB_KEYS)
    tokens = values.get(TOKENS)
    if not isinstance(tokens, list) or not tokens or not isinstance(tokens[0], str):
        raise BadInput(f"{path}: no token list ({TOKENS})")
    types = values.get(TYPES, [PIECE_NORMAL] * len(tokens))
    if not isinstance(types, list) or len(types) != len(tokens):
        raise BadInput(f"{path}: {TYPES} must give a type for each of {len(tokens)} tokens")
    if not all(isinstance(kind, int) and 0 <= kind <= PIECE_BYTE for kind in types):
        raise BadInput(f"{path}: {TYPES} has a type outside 0..6")
    eos = values.get(EOS)
    if eos is not None and not (isinstance(eos, int) and 0 <= eos < len(tokens)):
        raise BadInput(f"{path}: {EOS} {eos} is not a token id (0..{len(tokens) - 1})")
    return values, tokens, [kind or PIECE_NORMAL for kind in types]


def parse(path: Path) -> Parsed:
    """The vocabulary of the GGUF at `path`; `eos_id` is -1 when the file names none."""
    values, tokens, types = _table(path)
    gpt2 = values.get(MODEL) == "gpt2"
    out: list[bytes] = []
    for text, kind in zip(tokens, types, strict=True):
        if kind == PIECE_BYTE and len(text) == 6 and text.startswith("<0x"):
            out.append(bytes([int(text[3:5], 16)]))
        elif kind in _SPECIAL_TYPES:
            out.append(text.encode())
        elif gpt2:
            # llama.cpp's converter stores user-defined (added) tokens as plain text.
            out.append(text.encode() if kind == PIECE_USER_DEFINED else byte_level_bytes(text))
        else:
            out.append(text.replace("\u2581", " ").encode())
    special = frozenset(i for i, kind in enumerate(types) if kind in _SPECIAL_TYPES)
    return Parsed(out, values.get(EOS, -1), special)


# --- Encoders ----------------------------------------------------------------------------


def encoder(path: Path, pattern: str, ignore_merges: bool) -> Encoder:
    """The tokenizer the metadata describes (see the module docstring)."""
    values, tokens, types = _table(path)
    if values.get(MODEL) == "gpt2":
        return _bpe_encoder(path, values, tokens, types, pattern, ignore_merges)
    return _spm_encoder(path, values, tokens, types)


def _bpe_encoder(
    path: Path,
    values: dict[str, Any],
    tokens: list[str],
    types: list[int],
    pattern: str,
    ignore_merges: bool,
) -> Encoder:
    from tokenizers import AddedToken, Regex, Tokenizer, models, pre_tokenizers

    vocab: dict[str, int] = {}
    for token_id, (text, kind) in enumerate(zip(tokens, types, strict=True)):
        if kind in (PIECE_NORMAL, PIECE_BYTE):
            vocab.setdefault(text, token_id)
    user = [i for i, kind in enumerate(types) if kind == PIECE_USER_DEFINED]
    for token_id in user:  # in the model's table so that `add_tokens` keeps their ids
        vocab.setdefault(tokens[token_id], token_id)
    merges = values.get(MERGES, [])
    if not isinstance(merges, list) or not all(isinstance(m, str) and " " in m for m in merges):
        raise BadInput(f"{path}: {MERGES} must be a list of 'left right' strings")
    pairs = [tuple(merge.split(" ", 1)) for merge in merges]
    for number, (left, right) in enumerate(pairs):
        # tokenizers panics on a merge outside the table; say which one instead.
        if left not in vocab or right not in vocab or left + right not in vocab:
            raise BadInput(f"{path}: merge {number} {left} {right!r} joins or makes no token")
    try:
        tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=pairs, ignore_merges=ignore_merges))
        split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    except Exception as error:  # tokenizers raises plain Exception
        raise BadInput(f"{path}: cannot build its BPE: {' '.join(str(error).split())}") from None
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([split, byte_level])
    tokenizer.add_tokens([AddedToken(tokens[i], special=False, normalized=False) for i in user])
    return functools.partial(_tokenizers_encode, tokenizer)


def _tokenizers_encode(tokenizer: Any, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False).ids


def _spm_encoder(
    path: Path, values: dict[str, Any], tokens: list[str], types: list[int]
) -> Encoder:
    import sentencepiece as spm

    scores = values.get(SCORES)
    if not isinstance(scores, list) or len(scores) != len(tokens):
        raise BadInput(f"{path}: a 'llama' tokenizer needs a score for each token ({SCORES})")
    proto = sentencepiece.model_proto(
        tokens,
        [float(score) for score in scores],
        types,
        eos_id=values.get(EOS, -1),
        remove_extra_whitespaces=bool(values.get(REMOVE_EXTRA_WS)),
    )
    try:
        processor = spm.SentencePieceProcessor(model_proto=proto)
    except RuntimeError as error:
        raise BadInput(f"{path}: sentencepiece rejects its pieces: {error}") from None
    return functools.partial(sentencepiece._spm_encode, processor)
