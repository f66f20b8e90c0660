"""The options every command shares, defined once, with one argument type each, so the
same option has the same name, syntax and checks everywhere (`--vocab`, `--engines`,
`--corpus`, `--corpus-dir`, `--reports-dir`, `--run`, `--timeout`, `--memory-limit`,
`--limit-specs`, `--resume`, ...).

Every value is checked as it is parsed; a bad one ends the command with one line naming
the option and the value (`tokensieve bench: error: argument --timeout: not a finite
positive number of seconds: 'nan'`) and exit code 2, never a traceback. Lists are
comma-separated and the option repeatable (`--vocab llama3,tekken` = `--vocab llama3
--vocab tekken`); an empty list is refused.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from harness import corpora, engines, vocab
from harness.corpora import user
from harness.errors import BadInput, TokensieveError
from harness.figures import parse_bytes
from harness.language import converter
from harness.store import check_run_name

MIN_MEMORY = 1 << 20
REPORTS_DIR = "reports"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (`tokensieve CMD: error: MESSAGE`, exit code 2) and
    no abbreviated options: an abbreviation silently becomes whichever option it starts
    (`check --spec` was `--special-tokens`), and a later option can change what an old
    abbreviation means. Subcommands' parsers are of this class too (argparse makes them
    of the parent's)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        raise SystemExit(2)


# --- argument types: each turns the text into a value or raises ArgumentTypeError ------


def _checked(check: Callable[[str], Any]) -> Callable[[str], str]:
    """An argparse type from a project check that raises TokensieveError: the text, once
    the check accepts it."""

    def parse(text: str) -> str:
        try:
            check(text)
        except TokensieveError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return parse


def real(
    low: float, high: float = math.inf, *, above: bool = False, what: str
) -> Callable[[str], float]:
    """A finite number within [low, high] (above `low` when `above`); the error says it
    is not `what`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        fits = value > low if above else value >= low
        if not (math.isfinite(value) and fits and value <= high):
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}")
        return value

    return parse


seconds = real(0.0, above=True, what="a finite positive number of seconds")
non_negative = real(0.0, what="a finite number >= 0")
fraction = real(0.0, 1.0, what="a number within [0, 1]")


def memory_size(text: str) -> int:
    try:
        value = parse_bytes(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(
            f"not a memory size: {text!r} (examples: 4G, 512M)"
        ) from None
    if value < MIN_MEMORY:
        raise argparse.ArgumentTypeError(f"memory limit {text!r} is below 1M")
    return value


def count(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:,}, got {value:,}")
        return value

    return parse


def counts(minimum: int, maximum: int) -> Callable[[str], tuple[int, ...]]:
    """A comma-separated list of whole numbers within [minimum, maximum], deduplicated,
    in the order given (`--batch 1,16,64`)."""
    one = count(minimum, maximum)

    def parse(text: str) -> tuple[int, ...]:
        parts = [p.strip() for p in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {text!r}")
        return tuple(dict.fromkeys(one(p) for p in parts))

    return parse


def output_file(text: str) -> Path:
    """A file the command will write: its directory must exist already (a command never
    creates a directory the user did not name) and it must not be a directory itself.
    Checked as the option is parsed, so a long run never ends unable to write it."""
    path = Path(text).expanduser()
    parent = path.parent
    if not text or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    if not parent.exists():
        raise argparse.ArgumentTypeError(f"{text!r}: directory {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {str(parent)!r} is not a directory")
    return path


run_name = _checked(check_run_name)
spec_id = _checked(corpora.get)
engine_name = _checked(engines.check)
vocab_name = _checked(vocab.check)
corpus_set = _checked(corpora.set_info)


class ListAction(argparse.Action):
    """A comma-separated, repeatable list; each item checked by the option's `item` type.
    The parsed value is a list (None when the option is absent)."""

    def __init__(self, *args: Any, item: Callable[[str], Any] = str, **kwargs: Any) -> None:
        self.item = item
        super().__init__(*args, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option: str | None = None,
    ) -> None:
        items = [part.strip() for part in str(values).split(",")]
        if not any(items):
            parser.error(f"argument {option}: empty list {values!r}")
        checked = []
        for part in filter(None, items):
            try:
                checked.append(self.item(part))
            except argparse.ArgumentTypeError as exc:
                parser.error(f"argument {option}: {exc}")
        given = [*(getattr(namespace, self.dest) or []), *checked]
        setattr(namespace, self.dest, list(dict.fromkeys(given)))  # repeats count once


def listed(value: Sequence[str] | None, default: Sequence[str]) -> list[str]:
    """A list option's value, or its default when it was not given."""
    return list(value) if value else list(default)


# --- the shared options ----------------------------------------------------------------


def add_vocab(p: argparse.ArgumentParser, default: Sequence[str]) -> None:
    """`--vocab` and the options of a tokenizer file; `vocab_refs` combines them."""
    p.add_argument(
        "--vocab",
        action=ListAction,
        item=vocab_name,
        metavar="NAMES",
        help="vocabularies: NAME, NAME[:N], synthetic-SIZE-SEED, or a tokenizer file "
        "(tokenizer.json, .tiktoken, .model, .gguf), comma-separated or repeated "
        f"(default {','.join(default)})",
    )
    add_tokenizer_options(p)


def add_tokenizer_options(p: argparse.ArgumentParser) -> None:
    """The options of a tokenizer file, the same wherever a vocabulary is named."""
    p.add_argument(
        "--eos",
        metavar="ID|TOKEN",
        help="a tokenizer file's EOS (default: from the file or the configs beside it)",
    )
    p.add_argument(
        "--special-tokens",
        metavar="FILE",
        help="a .tiktoken file's special tokens, as JSON {token: id}",
    )
    p.add_argument(
        "--split-pattern", metavar="REGEX", help="a .tiktoken file's pre-tokenizer regex"
    )
    p.add_argument(
        "--vocab-size",
        type=count(1, vocab.MAX_IDS),
        metavar="N",
        help="the model's logits width when larger than the tokenizer: the extra ids are "
        "padding, which every engine must refuse",
    )


def vocab_refs(args: argparse.Namespace, default: Sequence[str]) -> list[str]:
    """The vocabulary references the command works on: each `--vocab` with the tokenizer
    options applied (`harness.vocab.resolve.reference`), each checked."""
    return [vocab_ref(args, name, "--vocab ") for name in listed(args.vocab, default)]


def vocab_ref(args: argparse.Namespace, name: str, option: str = "") -> str:
    """The reference of vocabulary `name` with the tokenizer options of `args` applied,
    checked (BadInput naming `option` and `name`)."""
    try:
        ref = vocab.reference(
            name,
            eos=args.eos,
            specials=args.special_tokens,
            split=args.split_pattern,
            size=args.vocab_size,
        )
        vocab.check(ref)
    except TokensieveError as exc:
        raise BadInput(f"{option}{name}: {exc}") from None
    return ref


def add_engines(p: argparse.ArgumentParser, default: Sequence[str]) -> None:
    p.add_argument(
        "--engines",
        action=ListAction,
        item=engine_name,
        metavar="NAMES",
        help=f"engines, comma-separated or repeated (default {','.join(default)})",
    )


def add_corpus(p: argparse.ArgumentParser, default: Sequence[str]) -> None:
    """The built-in corpus sets and the user's own specs; `specs_from` combines them."""
    p.add_argument(
        "--corpus",
        action=ListAction,
        item=corpus_set,
        metavar="SETS",
        help=f"corpus sets, comma-separated or repeated (default {','.join(default)}, or "
        "none when --spec or --regex is given)",
    )
    add_specs(p)
    p.add_argument("--corpus-dir", metavar="DIR", help="where the MaskBench data lives")
    p.add_argument(
        "--strict-corpus",
        action="store_true",
        help="stop at a malformed corpus file instead of skipping it with a warning",
    )
    add_converter(p)
    p.add_argument(
        "--limit-specs",
        type=count(1),
        metavar="N",
        help="at most N specs per corpus set, and N of your own (--spec, --regex), evenly "
        "spaced over each (default: all)",
    )


def add_specs(p: argparse.ArgumentParser) -> None:
    """`--spec PATH` and `--regex PATTERN`, the user's own specs (`harness.corpora.user`)."""
    p.add_argument(
        "--spec",
        action="append",
        metavar="PATH",
        help="your own specs: a JSON schema, a directory of them, a file of regexes (.txt, "
        ".regex or .re; one a line), a JSON/JSONL file of {id?, regex|schema, valid?, "
        "invalid?} entries, or MaskBench files; repeatable",
    )
    p.add_argument("--regex", action="append", metavar="PATTERN", help="a regex; repeatable")


def add_converter(p: argparse.ArgumentParser) -> None:
    """`--converter ours|outlines-core` (default ours; see harness.language.converter)."""
    p.add_argument(
        "--converter",
        choices=converter.NAMES,
        help="JSON schema to regex for the reference and the regex engines: ours (the Rust "
        "core's exact compiler; the default) or outlines-core (its build_regex_from_schema; "
        "with ours it is still checked on instances as outlines-core-converter)",
    )


def specs_from(
    args: argparse.Namespace, default: Sequence[str]
) -> tuple[list[str], tuple[corpora.Entry, ...]]:
    """(corpus sets, the user's entries, at most `--limit-specs` of them): the sets
    default to `default` only when the user gives no spec of their own. Also puts
    `--converter` in use."""
    converter.use(args.converter or converter.DEFAULT)
    entries = user.load(args.spec or (), args.regex or ())
    entries = tuple(corpora.spread(entries, args.limit_specs))
    sets = listed(args.corpus, () if entries else default)
    return sets, entries


def add_run(p: argparse.ArgumentParser, prefix: str | None = "") -> None:
    """`--run NAME`; its default is a timestamp after `prefix`, or None when `prefix` is
    None (the command then decides, e.g. the latest run for --resume)."""
    p.add_argument(
        "--run",
        type=run_name,
        metavar="NAME",
        default=None if prefix is None else timestamp(prefix),
        help="run name: letters, digits, '.', '_', '-' (default: a timestamp)",
    )


def add_resume(p: argparse.ArgumentParser, what: str) -> None:
    """`--resume`: continue run NAME (`--run`, default the latest) of the command's kind,
    `what` ("run", "diff run", ...), with its stored options."""
    p.add_argument(
        "--resume",
        action="store_true",
        help=f"continue {what} NAME (default: the latest) with its stored options",
    )


def add_reports_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reports-dir",
        "--reports",
        dest="reports_dir",
        metavar="DIR",
        default=REPORTS_DIR,
        help="where results.sqlite and the RUN/ report folders live (default ./reports)",
    )


def add_timeout(p: argparse.ArgumentParser, default: float | None, what: str) -> None:
    p.add_argument(
        "--timeout",
        type=seconds,
        metavar="S",
        default=default,
        help=f"seconds {what} may take before it is killed (default {default:g})"
        if default is not None
        else f"seconds {what} may take before it is killed",
    )


def add_memory_limit(p: argparse.ArgumentParser, default: str | None, what: str) -> None:
    p.add_argument(
        "--memory-limit",
        type=memory_size,
        metavar="SIZE",
        default=None if default is None else memory_size(default),
        help=f"resident memory {what} may reach before it is killed, e.g. 4G"
        + (f" (default {default})" if default else ""),
    )


def add_executor(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where cells run: worker processes here (local, default) or on a Dask cluster",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="the Dask scheduler, e.g. tcp://10.0.0.5:8786 (default $DASK_SCHEDULER_ADDRESS)",
    )


def timestamp(prefix: str = "") -> str:
    """A default run name: `prefix` and the local time."""
    return time.strftime(f"{prefix}%Y%m%d-%H%M%S")


def reports_dir(args: argparse.Namespace) -> Path:
    return Path(args.reports_dir)


def add_batch(p: argparse.ArgumentParser) -> None:
    """--batch, --threads, --batch-steps, --batch-mix, --step-budget-ms: the batch cells
    of a bench run (`harness.bench.batch`), also `check`'s."""
    p.add_argument(
        "--batch",
        type=counts(1, 4096),
        metavar="SIZES",
        help="also time decoding steps of batches of these sizes, e.g. 1,16,64,256: per "
        "step the masks of every sequence (the engine's batch API) and one token each; run "
        "after every other cell, one at a time (default: none)",
    )
    p.add_argument(
        "--threads",
        type=counts(1, 4096),
        metavar="COUNTS",
        help="thread counts of the batch steps, e.g. 1,2 (default 1)",
    )
    p.add_argument(
        "--batch-steps",
        type=count(1),
        metavar="N",
        help="steps timed per batch cell (default 50)",
    )
    p.add_argument(
        "--batch-mix",
        type=count(1),
        metavar="N",
        help="specs a batch mixes, spread over the run's (default 16)",
    )
    p.add_argument(
        "--step-budget-ms",
        type=seconds,
        metavar="MS",
        help="the step time the report measures batches against: the largest batch whose "
        "step p99 fits (default 10)",
    )


BATCH_FIELDS = ("batch", "threads", "batch_steps", "batch_mix", "step_budget_ms")


def batch_options(args: argparse.Namespace) -> dict[str, Any]:
    """The batch options given (`add_batch`), as the bench `Options` fields of the same
    names; those not given keep `Options`' defaults."""
    return {name: getattr(args, name) for name in BATCH_FIELDS if getattr(args, name) is not None}
