"""The two ways of applying a bitmask to logits, behind one signature: `apply(logits,
bitmask, call)` sets, in place, every logit the bitmask refuses to -inf and leaves the
others, in the rows `call.indices` (all when None).

`call.vocab_size` is passed to xgrammar as given (its own contract: only
`logits[..., :vocab_size]` is touched, the rest left alone); the torch way has no such
argument and masks the whole width, reading ids past the bitmask's last word as refused,
which is what the padding ids of a padded vocabulary need.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import xgrammar

from harness.logits.options import METHODS


@dataclass(frozen=True)
class Call:
    """The arguments of one application beside the logits and the bitmask: xgrammar's
    `vocab_size=` (None: it infers min(logits width, 32 x bitmask words)) and the rows
    to mask (`indices=`; None: every row)."""

    vocab_size: int | None = None
    indices: tuple[int, ...] | None = None


Apply = Callable[[torch.Tensor, torch.Tensor, Call], None]


def apply_xgrammar(logits: torch.Tensor, bitmask: torch.Tensor, call: Call) -> None:
    """xgrammar's kernel, the call a server makes (backend chosen by the device: its C++
    kernel on CPU, Triton on CUDA)."""
    indices = None if call.indices is None else list(call.indices)
    xgrammar.apply_token_bitmask_inplace(
        logits, bitmask, vocab_size=call.vocab_size, indices=indices
    )


# The 32 shifts that unpack a word, made once per device as vLLM's fallback makes them
# once (a fresh arange per call would time an allocation, and a launch on CUDA).
_SHIFTS: dict[torch.device, torch.Tensor] = {}


def _shifts(device: torch.device) -> torch.Tensor:
    if device not in _SHIFTS:
        _SHIFTS[device] = torch.arange(32, dtype=torch.int32, device=device)
    return _SHIFTS[device]


def unpack(bitmask: torch.Tensor, width: int) -> torch.Tensor:
    """[rows, width] bool on the bitmask's device: bit i % 32 of word i // 32 of a row is
    token i; ids past the last word are refused."""
    bits = (bitmask.unsqueeze(-1) >> _shifts(bitmask.device)) & 1
    allowed = bits.reshape(bitmask.shape[0], -1).bool()
    if allowed.shape[1] >= width:
        return allowed[:, :width]
    out = torch.zeros((bitmask.shape[0], width), dtype=torch.bool, device=bitmask.device)
    out[:, : allowed.shape[1]] = allowed
    return out


def apply_torch(logits: torch.Tensor, bitmask: torch.Tensor, call: Call) -> None:
    """The fallback: unpack the words to a bool tensor and `masked_fill_` the refused
    logits with -inf; with indices, those rows only (gathered, masked, written back)."""
    allowed = unpack(bitmask, logits.shape[-1])
    if call.indices is None:
        logits.masked_fill_(~allowed, float("-inf"))
        return
    rows = torch.tensor(call.indices, dtype=torch.long, device=logits.device)
    logits[rows] = logits[rows].masked_fill_(~allowed[rows], float("-inf"))


# in METHODS order: the table's columns and the ratio xgrammar / torch
APPLY: dict[str, Apply] = dict(zip(METHODS, (apply_xgrammar, apply_torch), strict=True))
