"""The data of a case and the plain numpy reference every method is held to.

Logits are compared as their bit patterns (int32 for float32, int16 for bfloat16 and
float16), so "unchanged" means bit for bit and -inf is one pattern per dtype; numpy has
no bfloat16, and comparing bits needs none. The reference never calls torch: a bug in
torch's unpacking or in `masked_fill_` cannot hide in both a method and its reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# -inf as the bits of each dtype: float32 0xFF800000, float16 0xFC00, and bfloat16 the
# upper half of float32's (0xFF80).
_F32_NEG_INF = int(np.array(-np.inf, dtype=np.float32).view(np.int32))
NEG_INF_BITS: dict[str, int] = {
    "float32": _F32_NEG_INF,
    "float16": int(np.array(-np.inf, dtype=np.float16).view(np.int16)),
    "bfloat16": int(np.int32(_F32_NEG_INF) >> 16),
}
BITS_DTYPE: dict[str, type[np.signedinteger]] = {
    "float32": np.int32,
    "float16": np.int16,
    "bfloat16": np.int16,
}

# A view of a 2-D array as an index of slices, which numpy and torch take the same way
# (`x[::2]` is `x[(slice(None, None, 2),)]`): the layout of the logits in a bigger tensor.
View = tuple[slice, ...]


def words(tokens: int) -> int:
    """The int32 words of a bitmask row covering `tokens` ids."""
    return -(-tokens // 32)


def random_bitmask(
    rng: np.random.Generator, rows: int, tokens: int, width: int, allowed: float
) -> np.ndarray:
    """A [rows, words(width)] int32 bitmask allowing each of the first `tokens` ids with
    probability `allowed` and refusing every id from `tokens` on (the padding ids and the
    bits past the last id, as the engines here clear them)."""
    bits = rng.random((rows, words(width) * 32), dtype=np.float32) < allowed
    bits[:, tokens:] = False
    packed = np.packbits(bits, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<i4").astype(np.int32, copy=False)


def unpack(bitmask: np.ndarray, width: int) -> np.ndarray:
    """[rows, width] bool: token i of a row allowed when its bit is set; ids past the
    bitmask's last word are refused (a bitmask narrower than the logits refuses the rest,
    which is what the padding ids of a model need)."""
    as_bytes = np.ascontiguousarray(bitmask.astype("<i4", copy=False)).view(np.uint8)
    bits = np.unpackbits(as_bytes, axis=1, bitorder="little").astype(bool)
    if bits.shape[1] >= width:
        return bits[:, :width]
    out = np.zeros((bits.shape[0], width), dtype=bool)
    out[:, : bits.shape[1]] = bits
    return out


def expected(
    base: np.ndarray,
    view: View,
    bitmask: np.ndarray,
    rows: Sequence[int] | None,
    dtype: str,
) -> np.ndarray:
    """The bits of the whole `base` array after the mask is applied to `view(base)`: in
    the rows `rows` (all when None) of the view, each refused logit -inf and each allowed
    one unchanged; everything else, outside the view or in other rows, unchanged."""
    out = base.copy()
    logits = out[view]
    allowed = unpack(bitmask, logits.shape[1])
    chosen = slice(None) if rows is None else list(rows)
    logits[chosen] = np.where(allowed[chosen], logits[chosen], NEG_INF_BITS[dtype])
    return out


def differences(
    got: np.ndarray, want: np.ndarray, before: np.ndarray, view: View, tokens: int
) -> str:
    """What differs between a method's result `got` and the reference `want` (the bits of
    the whole base array; `before` the bits before the call), in words: refused ids left
    unmasked (how many are padding ids, from column `tokens` of the view on), allowed ids
    set to -inf, other values, and values written outside the view."""
    inside = np.zeros(got.shape, dtype=bool)
    inside[view] = True
    parts: list[str] = []
    outside = int(np.count_nonzero((got != want) & ~inside))
    g, w, b = got[view], want[view], before[view]
    unmasked = (g == b) & (w != b)
    padding = int(np.count_nonzero(unmasked[:, tokens:]))
    count = int(np.count_nonzero(unmasked))
    if count:
        of = f" ({padding:,} of them padding ids)" if padding else ""
        parts.append(f"{count:,} refused ids left unmasked{of}")
    overmasked = int(np.count_nonzero((w == b) & (g != b)))
    if overmasked:
        parts.append(f"{overmasked:,} allowed ids changed")
    other = int(np.count_nonzero((g != w) & (g != b) & (w != b)))
    if other:
        parts.append(f"{other:,} other values")
    if outside:
        parts.append(f"{outside:,} values outside the logits view overwritten")
    inside_count = int(np.count_nonzero(g != w))
    return f"{inside_count:,} of {w.size:,} logits differ from the reference: " + ", ".join(parts)
