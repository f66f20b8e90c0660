"""Mistral's SentencePiece model as a canonical vocabulary: byte-fallback pieces `<0xNN>`
become that byte, `\u2581` becomes a space, control and unknown pieces are special. The
encoder is sentencepiece itself, with its "dummy prefix" switched off by editing the model
protobuf by hand (no protobuf runtime is installed).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.vocab.cache import Parsed
from harness.vocab.model import Encoder


def parse(paths: list[Path]) -> Parsed:
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(paths[0]))
    tokens: list[bytes] = []
    special: set[int] = set()
    for token_id in range(processor.get_piece_size()):
        piece = processor.id_to_piece(token_id)
        if processor.is_byte(token_id):
            tokens.append(bytes([int(piece[3:5], 16)]))  # byte-fallback piece "<0xNN>"
        elif processor.is_control(token_id) or processor.is_unknown(token_id):
            tokens.append(piece.encode())
            special.add(token_id)
        else:
            # Normal and user-defined pieces. User-defined ones ([REFERENCE_DOC_n]) are
            # matched in input text by sentencepiece itself, so they are ordinary text
            # here; making them special would let the encoder emit special ids.
            tokens.append(piece.replace("\u2581", " ").encode())
    return Parsed(tokens, processor.eos_id(), frozenset(special))


def encoder(paths: list[Path]) -> Encoder:
    import sentencepiece

    # sentencepiece prepends a space ("dummy prefix") to every input, so decode(encode(t))
    # would gain a leading space; the model proto turns that off (no protobuf runtime is
    # installed, hence the hand edit). Caveat: text containing U+2581 itself cannot
    # round-trip, since sentencepiece writes spaces as that same character.
    model = without_dummy_prefix(paths[0].read_bytes())
    processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    return functools.partial(_spm_encode, processor)


def _spm_encode(processor: Any, text: str) -> list[int]:
    # add_bos/add_eos default to off, so only text pieces come back.
    return list(processor.encode(text))


# Protobuf field numbers from sentencepiece_model.proto.
_MODEL_NORMALIZER_SPEC = 3
_NORMALIZER_ADD_DUMMY_PREFIX = 3
_VARINT, _LEN = 0, 2


def without_dummy_prefix(model: bytes) -> bytes:
    out = bytearray()
    for field, wire, start, end, payload in proto_fields(model):
        if field == _MODEL_NORMALIZER_SPEC and wire == _LEN:
            spec = _proto_set_varint(model[payload:end], _NORMALIZER_ADD_DUMMY_PREFIX, 0)
            out += _varint((field << 3) | _LEN) + _varint(len(spec)) + spec
        else:
            out += model[start:end]
    return bytes(out)


def _proto_set_varint(message: bytes, field: int, value: int) -> bytes:
    kept = b"".join(
        message[start:end]
        for number, wire, start, end, _ in proto_fields(message)
        if not (number == field and wire == _VARINT)
    )
    return kept + _varint(field << 3 | _VARINT) + _varint(value)


def proto_fields(data: bytes) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, start, end, payload start) for each top-level field."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _read_varint(data, pos)
        wire = key & 7
        payload = pos
        if wire == _VARINT:
            _, pos = _read_varint(data, pos)
        elif wire == _LEN:
            length, payload = _read_varint(data, pos)
            pos = payload + length
        elif wire == 1:  # fixed 64-bit
            pos += 8
        elif wire == 5:  # fixed 32-bit
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} at offset {start}")
        if pos > len(data):
            raise ValueError("truncated protobuf message")
        yield key >> 3, wire, start, pos, payload


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


# --- Building a model from a piece table (GGUF "llama" vocabularies) -----------------------

# sentencepiece_model.proto: ModelProto.pieces = 1, .trainer_spec = 2, .normalizer_spec = 3;
# SentencePiece.piece = 1, .score = 2 (float), .type = 3; TrainerSpec.model_type = 3 (BPE = 2),
# .vocab_size = 4, .treat_whitespace_as_suffix = 24, .allow_whitespace_only_pieces = 26,
# .byte_fallback = 35, .unk_id = 40, .bos_id = 41, .eos_id = 42, .pad_id = 43;
# NormalizerSpec.name = 1, .add_dummy_prefix = 3, .remove_extra_whitespaces = 4,
# .escape_whitespaces = 5.
# SentencePiece.Type, which GGUF's tokenizer.ggml.token_type shares.
PIECE_NORMAL, PIECE_UNKNOWN, PIECE_CONTROL = 1, 2, 3
PIECE_USER_DEFINED, PIECE_UNUSED, PIECE_BYTE = 4, 5, 6
_FIXED32 = 5


def model_proto(
    pieces: list[str],
    scores: list[float],
    types: list[int],
    *,
    eos_id: int = -1,
    remove_extra_whitespaces: bool = False,
) -> bytes:
    """A serialized BPE `ModelProto` for `SentencePieceProcessor(model_proto=...)`.

    The trainer flags that matter when encoding are those of the Llama and Mistral models
    (whitespace-only pieces allowed, whitespace as a prefix), byte fallback is on when the
    table has byte pieces, and there is no dummy prefix (so encodings are exact). The
    processor itself rejects a table without exactly one unknown piece, or with duplicates.
    """
    out = bytearray()
    for piece, score, kind in zip(pieces, scores, types, strict=True):
        message = (
            _len_field(1, piece.encode())
            + _varint(2 << 3 | _FIXED32)
            + struct.pack("<f", score)
            + _varint_field(3, kind)
        )
        out += _len_field(1, message)
    unk_id = types.index(PIECE_UNKNOWN) if PIECE_UNKNOWN in types else 0
    trainer = b"".join(
        _varint_field(field, value)
        for field, value in (
            (3, 2),
            (4, len(pieces)),
            (24, 0),
            (26, 1),
            (35, int(PIECE_BYTE in types)),
            (40, unk_id),
            (41, -1),
            (42, eos_id),
            (43, -1),
        )
    )
    normalizer = (
        _len_field(1, b"identity")
        + _varint_field(3, 0)
        + _varint_field(4, int(remove_extra_whitespaces))
        + _varint_field(5, 1)
    )
    out += _len_field(2, trainer) + _len_field(3, normalizer)
    return bytes(out)


def _len_field(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | _LEN) + _varint(len(payload)) + payload


def _varint_field(field: int, value: int) -> bytes:
    # Negative int32 values are sign-extended to 64 bits on the wire (ten bytes).
    return _varint(field << 3 | _VARINT) + _varint(value & 0xFFFF_FFFF_FFFF_FFFF)
