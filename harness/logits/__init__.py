"""The mask on the logits (`tokensieve logits`): how long applying a token bitmask to a
batch of logits takes, two ways side by side, each checked against a numpy reference.

The bitmask is the one every engine of this project writes: int32 words, bit `i % 32` of
word `i // 32` of a row set when token `i` is allowed. Applying it sets every refused
logit to -inf and leaves every allowed one bit for bit as it was. The two ways:

- `xgrammar`: `xgrammar.apply_token_bitmask_inplace` (its C++ kernel on CPU, its Triton
  kernel on CUDA), the call vLLM and SGLang make;
- `torch`: the fallback vLLM uses where xgrammar's kernels do not run, written here in
  vectorized torch: unpack the words to a bool tensor, `masked_fill_(~allowed, -inf)`.

Every case (vocabulary size x batch x dtype) is checked in several layouts before it is
timed (`harness.logits.layouts`): padded vocabularies (logits wider than the tokenizer,
whose padding ids must come out -inf), strided rows, column slices and strides, and a
subset of rows (`indices=`). A method that raises or gives another result is one line of
the output; the run goes on.

Importing this package imports neither torch nor xgrammar (the command line builds every
command's parser at start, and importing torch takes seconds): `run` imports them, and
says in one line (exit code 2) when either is missing.
"""

from __future__ import annotations

import importlib

from harness.errors import EngineUnavailable
from harness.logits.options import (
    DEFAULT_BATCHES,
    DEFAULT_OUT,
    DEFAULT_PADDING,
    DEFAULT_VOCABS,
    DTYPES,
    LogitsOptions,
)

__all__ = [
    "DEFAULT_BATCHES",
    "DEFAULT_OUT",
    "DEFAULT_PADDING",
    "DEFAULT_VOCABS",
    "DTYPES",
    "LogitsOptions",
    "require",
    "run",
]

# what each package the command needs is installed with
INSTALL = {"torch": "pip install torch", "xgrammar": "pip install 'tokensieve[xgrammar]'"}


def run(options: LogitsOptions) -> int:
    """Measure and check every case of `options`, print the table and the findings, write
    `logits.csv` and `logits.json` under `options.out`; 0 when the run finished (wrong
    results are findings, not failures). EngineUnavailable when torch or xgrammar cannot
    be imported, BadInput for a device this machine does not have."""
    require()
    from harness.logits.driver import drive  # imports torch and xgrammar

    return drive(options)


def require() -> None:
    """Import torch and xgrammar, or raise EngineUnavailable naming the one that failed
    and how to install it (an import that fails inside the package, a missing
    dependency of xgrammar's, is named as it failed)."""
    for name, how in INSTALL.items():
        try:
            importlib.import_module(name)
        except ImportError as exc:
            missing = exc.name or name
            what = f"{missing} is not installed" if exc.name else " ".join(str(exc).split())
            raise EngineUnavailable(
                f"the mask on the logits needs {name}: {what}; install it with: {how}"
            ) from None
