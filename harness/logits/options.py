"""What a `tokensieve logits` run measures (`LogitsOptions`), checked when it is made so
that a bad value ends the command before anything is allocated.

No torch here: the command line builds this from its arguments before torch is imported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import BadInput

# Tokenizer sizes of the models that matter: Llama-2/Mistral, Llama-3, Qwen2, Gemma-3.
DEFAULT_VOCABS = (32000, 128256, 151936, 262144)
DEFAULT_BATCHES = (1, 16, 64, 256)
DTYPES = ("float32", "bfloat16", "float16")
METHODS = ("xgrammar", "torch")
# The padding of the padded layouts: 128,256 tokens in logits 128,320 wide.
DEFAULT_PADDING = 64
DEFAULT_OUT = Path("reports") / "logits"


@dataclass(frozen=True)
class LogitsOptions:
    """One run: every vocabulary size (the tokenizer's ids) x batch size x dtype is a case,
    timed `reps` times per method after `warmup` untimed calls, on `device` ("cpu",
    "cuda", "cuda:N"). `padding` extra logit columns past the tokenizer in the padded
    layouts; `allowed` the share of tokens the random bitmask allows; `seed` makes the
    logits and bitmasks; `out` the folder of logits.csv and logits.json; `threads`
    torch's intra-op threads (None: torch's default, one per core). xgrammar's CPU
    kernel runs on one thread whatever this says, so `threads=1` compares the two ways
    thread for thread, and on a shared machine it also keeps torch from waiting at each
    parallel region for a core another process holds."""

    vocabs: tuple[int, ...] = DEFAULT_VOCABS
    batches: tuple[int, ...] = DEFAULT_BATCHES
    dtypes: tuple[str, ...] = ("float32",)
    device: str = "cpu"
    reps: int = 20
    warmup: int = 3
    padding: int = DEFAULT_PADDING
    allowed: float = 0.5
    seed: int = 0
    out: Path = field(default=DEFAULT_OUT)
    threads: int | None = None

    def __post_init__(self) -> None:
        _sizes("vocabulary sizes", self.vocabs)
        _sizes("batch sizes", self.batches)
        if not self.dtypes or any(d not in DTYPES for d in self.dtypes):
            raise BadInput(f"dtypes {list(self.dtypes)}: each one of {', '.join(DTYPES)}")
        if self.reps < 1 or self.warmup < 0 or self.padding < 0 or self.seed < 0:
            raise BadInput(
                f"reps {self.reps} (at least 1), warmup {self.warmup}, padding "
                f"{self.padding}, seed {self.seed} (each at least 0)"
            )
        if not (math.isfinite(self.allowed) and 0.0 <= self.allowed <= 1.0):
            raise BadInput(f"allowed share {self.allowed!r} is not within [0, 1]")
        if self.threads is not None and self.threads < 1:
            raise BadInput(f"threads {self.threads}: at least 1")
        if not self.device.strip():
            raise BadInput("device: empty name (cpu, cuda or cuda:N)")


def _sizes(what: str, values: tuple[int, ...]) -> None:
    """BadInput unless `values` is a non-empty list of positive whole numbers."""
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise BadInput(f"{what} {list(values)}: each a whole number of at least 1")
