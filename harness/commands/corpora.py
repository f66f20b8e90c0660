"""`tokensieve corpora`: the regex and schema sets, one spec with its token paths, and the
MaskBench download."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from harness import corpora
from harness import vocab as vocabularies
from harness.commands import options as opt
from harness.corpora import converter, maskbench, paths, texts
from harness.errors import MissingData, TokensieveError, UnknownName
from harness.vocab import Vocabulary

DOWNLOADS = ("maskbench",)
SHOW_PATTERN_CHARS = 600


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "corpora",
        help="list the corpus sets; show a spec with its token paths; download MaskBench",
        description="Without an action: every set with its spec count, source, regex "
        "features, and how many schemas outlines-core turns into a regex (converted once, "
        "then cached). With --vocab, also the token paths per set.",
    )
    parser.add_argument("--corpus-dir", help="directory holding MaskBench's *.json files")
    parser.add_argument(
        "--vocab", type=opt.vocab_name, help="also count token paths for this vocabulary"
    )
    parser.add_argument("--seed", type=int, default=0, help="path seed (default 0)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="with --vocab: walk every path through the reference naive index (slow)",
    )
    parser.add_argument("--no-convert", action="store_true", help="skip the schema-to-regex column")
    parser.set_defaults(func=run_list)
    actions = parser.add_subparsers(dest="action")

    show = actions.add_parser("show", help="print one spec (SET/NAME) with its token paths")
    show.add_argument("spec_id", metavar="SET/NAME")
    show.add_argument(
        "--vocab",
        type=opt.vocab_name,
        default=argparse.SUPPRESS,
        help="tokenize with this vocabulary",
    )
    show.add_argument("--seed", type=int, default=argparse.SUPPRESS, help="path seed")
    show.add_argument("--n", type=opt.count(1), help="number of paths (default 8 regex, 4 schema)")
    show.add_argument("--layout", choices=paths.SCHEMA_LAYOUTS, default="compact")
    show.add_argument(
        "--check",
        action="store_true",
        default=argparse.SUPPRESS,
        help="walk each path through the reference naive index (can be slow: it is built "
        "by brute force over the whole vocabulary)",
    )
    show.add_argument("--full", action="store_true", help="print the whole pattern/schema")
    show.add_argument(
        "--corpus-dir", default=argparse.SUPPRESS, help="directory holding MaskBench's *.json"
    )
    show.set_defaults(func=run_show)

    download = actions.add_parser("download", help="download a public corpus (maskbench)")
    download.add_argument("what", metavar="NAME", help="maskbench")
    download.add_argument("--dest", help="target directory (default: the cache)")
    download.add_argument("--url", default=maskbench.MASKBENCH_URL, help="archive URL")
    download.set_defaults(func=run_download)


# --- listing ---------------------------------------------------------------------------


def _feature_line(found: tuple[corpora.Entry, ...]) -> str:
    counts: Counter[str] = Counter()
    for e in found:
        counts.update(e.spec.features or ["none"])
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _conversion_line(found: tuple[corpora.Entry, ...]) -> str:
    counts = Counter(converter.conversion_status(e.spec) for e in found)
    order = ["ok", "rejected", "too-large", "timeout", "crashed"]
    return ", ".join(f"{counts[k]} {k}" for k in order if counts[k])


def _paths_line(found: tuple[corpora.Entry, ...], vocab: Vocabulary, args: Any) -> str:
    n_specs = n_paths = n_rejected = n_unchecked = 0
    for e in found:
        try:
            got = paths.paths_for(e.spec, vocab, args.seed, check=args.check)
        except TokensieveError:
            got = paths.paths_for(e.spec, vocab, args.seed)
            n_unchecked += 1
        n_specs += bool(got)
        n_paths += len(got)
        n_rejected += len(paths.rejected(got))
    line = f"{n_paths} paths for {n_specs} specs"
    if args.check:
        line += f", {n_rejected} rejected by the reference"
        if n_unchecked:
            line += f", {n_unchecked} specs without a reference index"
    return line


def run_list(args: argparse.Namespace) -> int:
    vocab = vocabularies.load(args.vocab) if args.vocab else None
    rows = [("set", "kind", "specs", "source")]
    details: list[list[str]] = []
    for info in corpora.sets():
        try:
            found = corpora.entries(info.name, args.corpus_dir)
        except MissingData as exc:
            rows.append((info.name, info.kind, "-", info.source))
            details.append([f"absent: {exc}"])
            continue
        rows.append((info.name, info.kind, str(len(found)), info.source))
        lines = []
        if info.kind == "regex":
            lines.append(f"features: {_feature_line(found)}")
        else:
            valid = sum(len(e.valid) for e in found)
            invalid = sum(len(e.invalid) for e in found)
            lines.append(f"instances: {valid} valid, {invalid} invalid")
            if not args.no_convert:
                lines.append(f"to regex ({converter.CONVERTER}): {_conversion_line(found)}")
        if vocab is not None:
            counted = _paths_line(found, vocab, args)
            lines.append(f"paths ({vocab.name}, seed {args.seed}): {counted}")
        details.append(lines)
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    print(f"{rows[0][0]:<{w[0]}}  {rows[0][1]:<{w[1]}}  {rows[0][2]:>{w[2]}}  {rows[0][3]}")
    for row, lines in zip(rows[1:], details, strict=True):
        print(f"{row[0]:<{w[0]}}  {row[1]:<{w[1]}}  {row[2]:>{w[2]}}  {row[3]}")
        for line in lines:
            print(f"    {line}")
    return 0


# --- show ------------------------------------------------------------------------------


def _clip(text: str, full: bool) -> str:
    if full or len(text) <= SHOW_PATTERN_CHARS:
        return text
    return f"{text[:SHOW_PATTERN_CHARS]}... ({len(text):,} characters; --full prints all)"


def _token_repr(vocab: Vocabulary, token_id: int) -> str:
    return repr(vocab.tokens[token_id].decode("utf-8", errors="backslashreplace"))


def run_show(args: argparse.Namespace) -> int:
    entry = corpora.get_entry(args.spec_id, getattr(args, "corpus_dir", None))
    spec = entry.spec
    seed = getattr(args, "seed", 0)
    print(f"spec:     {spec.id}")
    print(f"kind:     {spec.kind}")
    print(f"source:   {entry.source}")
    if entry.tags:
        print(f"tags:     {', '.join(entry.tags)}")
    if spec.kind == "regex":
        print(f"features: {', '.join(sorted(spec.features)) or 'none'}")
        print(f"pattern:  {_clip(spec.text, args.full)}")
    else:
        print(f"schema:   {_clip(spec.text, args.full)}")
        print(f"instances: {len(entry.valid)} valid, {len(entry.invalid)} invalid")
        try:
            regex = converter.schema_to_regex(spec)
            print(f"to regex ({converter.CONVERTER}): ok, {len(regex):,} characters")
        except TokensieveError as exc:
            print(f"to regex ({converter.CONVERTER}): no: {exc}")
    drawn = texts.texts_for(spec, seed, args.n)
    for note in drawn.notes:
        print(f"note:     {note}")
    vocab_name = getattr(args, "vocab", None)
    if vocab_name is None:
        print(f"texts (seed {seed}; --vocab NAME tokenizes them):")
        for i, (value, source) in enumerate(drawn.items):
            text = value if spec.kind == "regex" else paths.serialize(value, args.layout)
            print(f"  #{i} {source:<15} {text!r}")
        return 0
    vocab = vocabularies.load(vocab_name)
    check_note = None
    try:
        got = paths.paths_for(spec, vocab, seed, args.n, args.layout, check=args.check)
    except TokensieveError as exc:
        check_note = f"reference check unavailable: {exc}"
        got = paths.paths_for(spec, vocab, seed, args.n, args.layout)
    print(f"paths ({vocab.name}, seed {seed}, layout {got[0].layout if got else '-'}):")
    for i, p in enumerate(got):
        verdict = (
            "unchecked"
            if p.reference is None
            else "accepted"
            if p.reference
            else (f"REJECTED at token #{p.failed_step}")
        )
        exact = "" if p.exact else "  (ids do not decode to the text)"
        print(f"  #{i} {p.source:<15} {len(p.ids):>4} tokens  {verdict}{exact}")
        print(f"      text:   {p.text!r}")
        print(f"      ids:    {list(p.ids)}")
        print(f"      tokens: [{', '.join(_token_repr(vocab, t) for t in p.ids)}]")
    if check_note:
        print(check_note)
    elif args.check:
        bad = paths.rejected(got)
        print(f"reference: {len(got) - len(bad)}/{len(got)} accepted")
    return 0


# --- download --------------------------------------------------------------------------


def run_download(args: argparse.Namespace) -> int:
    if args.what not in DOWNLOADS:
        raise UnknownName("download", args.what, list(DOWNLOADS))
    count = maskbench.download(args.dest, args.url)
    target = args.dest or maskbench.default_download_dir()
    print(f"wrote {count} MaskBench files to {target}", file=sys.stderr)
    return 0
