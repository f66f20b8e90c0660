"""Mistral's SentencePiece model as a canonical vocabulary: byte-fallback pieces `<0xNN>`
become that byte, `\u2581` becomes a space, control and unknown pieces are special. The
encoder is sentencepiece itself, with its "dummy prefix" switched off by editing the model
protobuf by hand (no protobuf runtime is installed).
"""

from __future__ import annotations

import functools
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
