"""Where the logits lie and how each method is called on them: the layouts every case is
checked in, each against the numpy reference (`harness.logits.reference`).

A layout is a base tensor, the logits as a view of it, the width the bitmask covers and
the call's `vocab_size=` / `indices=`. The result is compared over the whole base, so a
method that writes outside its view (into a neighbouring row or column) is caught too.
Servers pass logits as views (a column slice of a wider padded output, a subset of the
batch's rows), and a model's logits are often wider than its tokenizer: every id past
the tokenizer is padding, which must come out -inf.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from harness.logits import reference
from harness.logits.methods import Apply, Call
from harness.logits.reference import View

TORCH_DTYPE = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
TORCH_BITS = {"float32": torch.int32, "bfloat16": torch.int16, "float16": torch.int16}
ALL: View = (slice(None),)


@dataclass(frozen=True)
class Case:
    """One measured case: `tokens` ids in the tokenizer, `batch` rows, `dtype` logits."""

    tokens: int
    batch: int
    dtype: str

    def label(self) -> str:
        return f"{self.tokens} x{self.batch} {self.dtype}"


@dataclass(frozen=True)
class Layout:
    """The base tensor's `shape`, the logits `view` of it, the ids the bitmask covers
    (`width`: words(width) int32 words a row, ids from `tokens` on refused) and the
    call's arguments."""

    name: str
    shape: tuple[int, int]
    view: View
    width: int
    call: Call


@dataclass(frozen=True)
class Check:
    """How one method did on one layout of one case: "ok", "wrong" (`detail` says what
    differs) or "error" (`detail` is the exception); warnings the call raised are in
    `detail` too."""

    case: Case
    layout: str
    method: str
    status: str
    detail: str = ""


def layouts(case: Case, padding: int) -> list[Layout]:
    """The layouts of `case`: dense first (the one timed); the padded ones only with
    `padding` > 0. `padded` is the call that refuses the padding ids (a bitmask as wide
    as the logits, vocab_size = the logits' width); `padded-vocab-size` passes the
    tokenizer's size, as xgrammar's docstring suggests for padded logits;
    `padded-short-bitmask` gives a bitmask covering the tokenizer only and no
    vocab_size. `indices` masks every other row, in descending order."""
    n, b = case.tokens, case.batch
    wide = n + padding
    out = [Layout("dense", (b, n), ALL, n, Call(n))]
    if padding:
        out += [
            Layout("padded", (b, wide), ALL, wide, Call(wide)),
            Layout("padded-vocab-size", (b, wide), ALL, wide, Call(n)),
            Layout("padded-short-bitmask", (b, wide), ALL, n, Call(None)),
        ]
    every_other = tuple(range(b - 1, -1, -2))
    column_slice = (slice(None), slice(0, n))
    return [
        *out,
        Layout("rows-strided", (2 * b, n), (slice(None, None, 2),), n, Call(n)),
        Layout("column-slice", (b, n + max(padding, 32)), column_slice, n, Call(n)),
        Layout("column-strided", (b, 2 * n), (slice(None), slice(None, None, 2)), n, Call(n)),
        Layout("indices", (b, n), ALL, n, Call(n, every_other)),
    ]


def make_data(
    case: Case, layout: Layout, allowed: float, seed: int
) -> tuple[torch.Tensor, np.ndarray]:
    """(base logits on the CPU: uniform in [0, 1), never -inf, and cheaper to draw than
    normal values at 67M a case; the bitmask), the same for every method and every device
    for one seed."""
    key = [seed, case.tokens, case.batch, *map(ord, case.dtype + layout.name)]
    rng = np.random.default_rng(key)
    gen = torch.Generator().manual_seed(int(rng.integers(1 << 62)))
    base = torch.rand(layout.shape, generator=gen).to(TORCH_DTYPE[case.dtype])
    bitmask = reference.random_bitmask(rng, case.batch, case.tokens, layout.width, allowed)
    return base, bitmask


def bits(tensor: torch.Tensor, dtype: str) -> np.ndarray:
    """The bit patterns of a contiguous logits tensor, as numpy integers on the CPU."""
    return tensor.detach().cpu().contiguous().view(TORCH_BITS[dtype]).numpy()


def check(
    case: Case,
    layout: Layout,
    methods: dict[str, Apply],
    device: torch.device,
    data: tuple[torch.Tensor, np.ndarray],
    sync: Callable[[], None],
) -> list[Check]:
    """Each method applied once to a fresh copy of the layout's base on `device`, its
    result held to the reference over the whole base; never raises for a method's own
    failure (that is the check's "error")."""
    base, bitmask = data
    before = bits(base, case.dtype)
    want = reference.expected(before, layout.view, bitmask, layout.call.indices, case.dtype)
    out = []
    for name, apply in methods.items():
        work = base.to(device, copy=True)
        try:
            warned = _apply(apply, work[layout.view], torch.from_numpy(bitmask), layout, sync)
        except Exception as exc:  # the method's failure is the finding
            out.append(Check(case, layout.name, name, "error", _one_line(exc)))
            continue
        got = bits(work, case.dtype)
        if np.array_equal(got, want):
            out.append(Check(case, layout.name, name, "ok", warned))
            continue
        what = reference.differences(got, want, before, layout.view, case.tokens)
        out.append(Check(case, layout.name, name, "wrong", "; ".join(filter(None, (what, warned)))))
    return out


def _apply(
    apply: Apply,
    logits: torch.Tensor,
    bitmask: torch.Tensor,
    layout: Layout,
    sync: Callable[[], None],
) -> str:
    """Apply once with the bitmask on the logits' device; the warnings raised, as text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        apply(logits, bitmask.to(logits.device), layout.call)
        sync()
    return "; ".join(f"warned: {_squash(str(w.message))}" for w in caught)


def _one_line(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {_squash(str(exc))}"


def _squash(text: str, limit: int = 240) -> str:
    """`text` on one line, at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
