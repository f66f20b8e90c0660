"""Vocabulary names as every command accepts them: a built-in name (`llama3`), the first
N ids of one (`llama3[:8192]`, for scaling studies) or a synthetic test vocabulary
(`synthetic-SIZE-SEED`). `check` refuses a bad name with one line naming it, before any
work starts; `load` builds the vocabulary.
"""

from __future__ import annotations

import re

from harness.errors import BadInput, UnknownName
from harness.vocab import builtin
from harness.vocab.model import Vocabulary
from harness.vocab.synthetic import SYNTHETIC_MIN_SIZE, subset, synthetic

_SYNTHETIC = re.compile(r"^synthetic-(\d+)-(\d+)$")
_SUBSET = re.compile(r"^(.+)\[:(\d+)\]$")
FORMS = ("synthetic-SIZE-SEED", "NAME[:N]")


def check(name: str) -> None:
    """Raise UnknownName or BadInput unless `load(name)` can build the vocabulary."""
    subset_of = _SUBSET.match(name)
    if subset_of:
        if int(subset_of.group(2)) < 1:
            raise BadInput(f"vocabulary {name!r}: a subset needs at least 1 id")
        check(subset_of.group(1))
        return
    made = _SYNTHETIC.match(name)
    if made:
        if int(made.group(1)) < SYNTHETIC_MIN_SIZE:
            raise BadInput(
                f"vocabulary {name!r}: a synthetic vocabulary needs at least "
                f"{SYNTHETIC_MIN_SIZE} ids"
            )
        return
    if name not in builtin.names():
        raise UnknownName("vocabulary", name, [*builtin.names(), *FORMS])


def load(name: str) -> Vocabulary:
    """The vocabulary called `name`, as `check` accepts it."""
    check(name)
    subset_of = _SUBSET.match(name)
    if subset_of:
        return subset(load(subset_of.group(1)), int(subset_of.group(2)))
    made = _SYNTHETIC.match(name)
    if made:
        return synthetic(int(made.group(1)), int(made.group(2)))
    return builtin.load(name)
