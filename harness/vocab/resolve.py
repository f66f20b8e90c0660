"""Vocabulary references as every command accepts them, and the vocabularies they name.

A reference is a string, the same in a command line, a stored run and a worker's setup:
- a built-in name (`llama3`), the first N ids of one (`llama3[:8192]`, for scaling
  studies) or a synthetic test vocabulary (`synthetic-SIZE-SEED`);
- a tokenizer file by absolute path (`/models/qwen/tokenizer.json`, a `.tiktoken`,
  `.model` or `.gguf` file; `harness.vocab.files`);
- either, followed by options `;key=value` (values percent-encoded): `eos=ID|TOKEN`,
  `specials=PATH` (a tiktoken file's special tokens), `split=PATTERN` (its split regex),
  and `size=N`, the model's logits width when larger than the tokenizer: ids past the
  tokenizer are padding, empty special tokens no engine may ever allow.

`reference` builds one from the command line's options; `check` refuses a bad one with
one line naming it, before any work starts; `load` builds the vocabulary.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from harness.errors import BadInput, UnknownName
from harness.vocab import builtin
from harness.vocab.model import Vocabulary, check_ids
from harness.vocab.synthetic import SYNTHETIC_MIN_SIZE, subset, synthetic

_SYNTHETIC = re.compile(r"^synthetic-(\d+)-(\d+)$")
_SUBSET = re.compile(r"^(.+)\[:(\d+)\]$")
FORMS = ("synthetic-SIZE-SEED", "NAME[:N]", "PATH (tokenizer.json, .tiktoken, .model, .gguf)")
OPTIONS = ("eos", "specials", "split", "size")


def reference(
    text: str,
    *,
    eos: str | None = None,
    specials: str | None = None,
    split: str | None = None,
    size: int | None = None,
) -> str:
    """The canonical reference for `text` (a name or a path) with these options: a file
    path made absolute, options in a fixed order."""
    base, given = _split(text)
    if is_path(base):
        base = str(Path(base).expanduser().resolve())
    if specials is not None:
        specials = str(Path(specials).expanduser().resolve())
    options = {
        **given,
        "eos": eos,
        "specials": specials,
        "split": split,
        "size": None if size is None else str(size),
    }
    parts = [base] + [
        f"{k}={urllib.parse.quote(v, safe='')}"
        for k in OPTIONS
        if (v := options.get(k)) is not None
    ]
    return ";".join(parts)


def is_path(base: str) -> bool:
    return (
        os.sep in base
        or base.startswith(("~", "."))
        or Path(base).suffix in (".json", ".tiktoken", ".model", ".gguf")
    )


def _split(ref: str) -> tuple[str, dict[str, str]]:
    base, *rest = ref.split(";")
    options: dict[str, str] = {}
    for part in rest:
        key, sep, value = part.partition("=")
        if not sep or key not in OPTIONS:
            raise BadInput(
                f"vocabulary {ref!r}: unknown option {part!r} (known: {', '.join(OPTIONS)})"
            )
        options[key] = urllib.parse.unquote(value)
    return base, options


def check(ref: str) -> None:
    """Raise UnknownName or BadInput unless `load(ref)` can build the vocabulary (a file
    is only checked to exist and have a known format here: it is parsed at load)."""
    base, options = _split(ref)
    if "size" in options and not options["size"].isdigit():
        raise BadInput(f"vocabulary {ref!r}: size must be a whole number")
    if "size" in options:
        check_ids(int(options["size"]), f"vocabulary {ref!r}: size")
    if is_path(base):
        from harness.vocab import files, tiktoken_file

        files.detect(Path(base).expanduser())
        if "split" in options:
            tiktoken_file.check_split_pattern(options["split"], f"vocabulary {base}")
        return
    if options.keys() - {"size"}:
        raise BadInput(f"vocabulary {ref!r}: eos, specials and split apply to tokenizer files")
    subset_of = _SUBSET.match(base)
    if subset_of:
        if int(subset_of.group(2)) < 1:
            raise BadInput(f"vocabulary {ref!r}: a subset needs at least 1 id")
        check_ids(int(subset_of.group(2)), f"vocabulary {ref!r}")
        check(subset_of.group(1))
        return
    made = _SYNTHETIC.match(base)
    if made:
        check_ids(int(made.group(1)), f"vocabulary {ref!r}")
        if int(made.group(1)) < SYNTHETIC_MIN_SIZE:
            raise BadInput(
                f"vocabulary {ref!r}: a synthetic vocabulary needs at least "
                f"{SYNTHETIC_MIN_SIZE} ids"
            )
        return
    if base not in builtin.names():
        raise UnknownName("vocabulary", base, [*builtin.names(), *FORMS])


def load(ref: str) -> Vocabulary:
    """The vocabulary `ref` names, as `check` accepts it."""
    check(ref)
    base, options = _split(ref)
    vocab = _base(base, options)
    if "size" in options:
        vocab = pad(vocab, int(options["size"]))
    return vocab if ref == vocab.name else dataclasses.replace(vocab, name=ref)


def _base(base: str, options: dict[str, str]) -> Vocabulary:
    if is_path(base):
        from harness.vocab import files

        specials = options.get("specials")
        return files.load(
            Path(base).expanduser(),
            eos=options.get("eos"),
            special_tokens=None if specials is None else Path(specials),
            split_pattern=options.get("split"),
        )
    subset_of = _SUBSET.match(base)
    if subset_of:
        whole, n = _base(subset_of.group(1), {}), int(subset_of.group(2))
        if n >= whole.size:
            raise BadInput(
                f"vocabulary {base!r}: {subset_of.group(1)} has {whole.size:,} ids, so its "
                f"first {n:,} are all of it; name it without [:N]"
            )
        return subset(whole, n)
    made = _SYNTHETIC.match(base)
    if made:
        return synthetic(int(made.group(1)), int(made.group(2)))
    return builtin.load(base)


def pad(vocab: Vocabulary, size: int) -> Vocabulary:
    """`vocab` widened to `size` ids (a model's logits width): the ids past its tokens are
    padding, empty special tokens, so they are never text and no engine may allow them."""
    if size < vocab.size:
        raise BadInput(
            f"vocabulary {vocab.name}: size {size} is smaller than its {vocab.size} tokens"
        )
    extra = range(vocab.size, size)
    return dataclasses.replace(
        vocab,
        tokens=[*vocab.tokens, *(b"" for _ in extra)],
        special_ids=vocab.special_ids | frozenset(extra),
    )


def fingerprints(refs: Iterable[str]) -> dict[str, str]:
    """Each reference that names files (a tokenizer file, its special tokens) -> the
    SHA-256 of their contents, so a run can tell later whether they changed."""
    out = {}
    for ref in refs:
        paths = _files_of(ref)
        if paths:
            out[ref] = _digest(paths)
    return out


def changed_files(stored: Mapping[str, str]) -> list[str]:
    """The files of `stored` (from `fingerprints`) whose contents differ now, or that are
    gone, by path."""
    changed = []
    for ref, digest in stored.items():
        paths = _files_of(ref)
        try:
            now = _digest(paths)
        except OSError:
            now = None
        if now != digest:
            changed.append(" and ".join(str(p) for p in paths) or ref)
    return changed


def _files_of(ref: str) -> list[Path]:
    base, options = _split(ref)
    if not is_path(base):
        return []
    return [Path(base).expanduser(), *(Path(p) for k, p in options.items() if k == "specials")]


def _digest(paths: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()
