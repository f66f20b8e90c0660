"""What `tokensieve corpora` prints: every set with its counts (features, instances,
conversions to a regex, token paths), one spec with its texts or token paths, and the
MaskBench download."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

from harness import corpora
from harness import vocab as vocabularies
from harness.corpora import maskbench, paths, texts
from harness.errors import MissingData, TokensieveError, UnknownName
from harness.language import converter
from harness.vocab import Vocabulary

DOWNLOADS = ("maskbench",)
SHOW_PATTERN_CHARS = 600


def _feature_line(found: tuple[corpora.Entry, ...]) -> str:
    counts: Counter[str] = Counter()
    for e in found:
        counts.update(e.spec.features or ["none"])
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def _conversion_line(found: tuple[corpora.Entry, ...]) -> str:
    counts = Counter(converter.conversion_status(e.spec) for e in found)
    return ", ".join(f"{counts[k]} {k}" for k in converter.ConversionStatus if counts[k])


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


def list_sets(args: Any) -> int:
    """Every set with its counts (`args`: corpus_dir, vocab, seed, check, no_convert,
    converter)."""
    converter.use(getattr(args, "converter", None) or converter.DEFAULT)
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
            if not args.no_convert and info.kind == "json_schema":
                lines.append(f"to regex ({converter.current()}): {_conversion_line(found)}")
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


def _clip(text: str, full: bool) -> str:
    if full or len(text) <= SHOW_PATTERN_CHARS:
        return text
    return f"{text[:SHOW_PATTERN_CHARS]}... ({len(text):,} characters; --full prints all)"


def _token_repr(vocab: Vocabulary, token_id: int) -> str:
    return repr(vocab.tokens[token_id].decode("utf-8", errors="backslashreplace"))


def show_spec(args: Any) -> int:
    """One spec with its texts or token paths (`args` as `tokensieve corpora show`)."""
    converter.use(getattr(args, "converter", None) or converter.DEFAULT)
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
    elif spec.kind == "grammar":
        print(f"notation: {spec.notation}")
        print(f"grammar:  {_clip(spec.text, args.full)}")
        print(f"instances: {len(entry.valid)} valid, {len(entry.invalid)} invalid")
    else:
        print(f"schema:   {_clip(spec.text, args.full)}")
        print(f"instances: {len(entry.valid)} valid, {len(entry.invalid)} invalid")
        try:
            regex = converter.schema_to_regex(spec)
            print(f"to regex ({converter.current()}): ok, {len(regex):,} characters")
        except TokensieveError as exc:
            print(f"to regex ({converter.current()}): no: {exc}")
    drawn = texts.texts_for(spec, seed, args.n)
    for note in drawn.notes:
        print(f"note:     {note}")
    vocab_name = getattr(args, "vocab", None)
    if vocab_name is None:
        print(f"texts (seed {seed}; --vocab NAME tokenizes them):")
        for i, (value, source) in enumerate(drawn.items):
            text = value if spec.kind != "json_schema" else paths.serialize(value, args.layout)
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


def download(args: Any) -> int:
    """Fetch a public corpus (MaskBench) into `args.dest` or the cache."""
    if args.what not in DOWNLOADS:
        raise UnknownName("download", args.what, list(DOWNLOADS))
    count = maskbench.download(args.dest, args.url)
    target = args.dest or maskbench.default_download_dir()
    print(f"wrote {count} MaskBench files to {target}", file=sys.stderr)
    return 0
