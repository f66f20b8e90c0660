"""MaskBench: JSON schemas with labelled valid and invalid instances, read by path from a
directory that is never copied into the repository (`--corpus-dir`, else
`../shared/corpora/maskbench`, else the download cache), and downloadable from GitHub.

A malformed file (not JSON, no `schema`, tests of the wrong shape) is skipped with one
warning naming it, and listed by `problems()` so a run's summary counts it; with
`strict=True` it is fatal instead (`tokensieve ... --strict-corpus`).
"""

from __future__ import annotations

import io
import json
import re
import sys
import tarfile
import urllib.request
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

from harness.cache import cache_root, write_bytes_atomic
from harness.corpora.entry import Entry, schema_entry, unique
from harness.errors import BadInput, MissingData
from harness.project import PROJECT_ROOT

SHARED_MASKBENCH_DIR = PROJECT_ROOT.parent / "shared" / "corpora" / "maskbench"
# GitHub resolves HEAD to the repository's default branch.
MASKBENCH_URL = "https://github.com/guidance-ai/jsonschemabench/archive/HEAD.zip"

_problems: dict[Path, list[str]] = {}


def directory(corpus_dir: str | Path | None = None) -> Path:
    """The directory holding MaskBench's `*.json` files.

    An explicit `corpus_dir` wins (a `maskbench/` or `maskbench/data/` inside it is also
    accepted); otherwise the shared corpora folder next to the project, then the folder
    `tokensieve corpora download maskbench` fills by default. Raises MissingData with one
    line saying where it looked.
    """
    if corpus_dir is not None:
        base = Path(corpus_dir).expanduser()
        candidates = [base, base / "maskbench", base / "maskbench" / "data", base / "data"]
    else:
        candidates = [SHARED_MASKBENCH_DIR, default_download_dir()]
    for c in candidates:
        if c.is_dir() and any(c.glob("*.json")):
            return c.resolve()
    where = ", ".join(str(c) for c in candidates)
    raise MissingData(
        f"MaskBench data not found (looked in {where}); pass --corpus-dir DIR or run "
        "`tokensieve corpora download maskbench`"
    )


def default_download_dir() -> Path:
    return cache_root() / "corpora" / "maskbench"


def entries(folder: Path, *, strict: bool = False) -> tuple[Entry, ...]:
    """Every well-formed file of `folder` as an entry; malformed ones are skipped with
    a warning (or, with `strict`, raise BadInput naming the file)."""
    found, problems = _read(folder)
    if problems and strict:
        raise BadInput(problems[0])
    if folder not in _problems:
        _problems[folder] = problems
        for line in problems:
            print(f"tokensieve: warning: {line} (skipped)", file=sys.stderr)
    return found


def problems(folder: Path | None = None) -> list[str]:
    """The malformed files skipped so far (in `folder`, or anywhere), one line each."""
    if folder is not None:
        return list(_problems.get(folder, []))
    return [line for lines in _problems.values() for line in lines]


@cache
def _read(folder: Path) -> tuple[tuple[Entry, ...], list[str]]:
    out: list[Entry] = []
    problems: list[str] = []
    for file in sorted(folder.glob("*.json")):
        try:
            out.append(_entry(file))
        except BadInput as exc:
            problems.append(str(exc))
    return unique(out), problems


def _entry(file: Path) -> Entry:
    """One MaskBench file as an entry; BadInput naming the file when it is malformed."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise BadInput(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{file}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    except OSError as exc:
        raise BadInput(f"{file}: cannot be read: {exc.strerror}") from None
    if not isinstance(data, dict) or "schema" not in data:
        raise BadInput(f'{file}: no "schema" field (want {{"schema": ..., "tests": [...]}})')
    tests = data.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, dict) and "data" in t for t in tests):
        raise BadInput(f'{file}: "tests" must be a list of {{"data": ..., "valid": ...}}')
    meta = data.get("meta", {})
    features = meta.get("features", ()) if isinstance(meta, dict) else ()
    return schema_entry(
        f"maskbench/{file.stem}",
        data["schema"],
        source=f"MaskBench {file.name}",
        tags=tuple(map(str, features)) if isinstance(features, list) else (),
        valid=[t["data"] for t in tests if t.get("valid")],
        invalid=[t["data"] for t in tests if not t.get("valid")],
    )


_MASKBENCH_MEMBER = re.compile(r"(?:^|/)maskbench/data/([A-Za-z0-9_.+-]+\.json)$")


def download(dest: str | Path | None = None, url: str = MASKBENCH_URL) -> int:
    """Fetch a zip or tar archive of the jsonschemabench repository and extract its
    `maskbench/data/*.json` into `dest`. Returns the number of files written.

    Only members matching `*/maskbench/data/<plain name>.json` are written, under their
    base name, so an archive cannot place files outside `dest`.
    """
    target = Path(dest).expanduser() if dest is not None else default_download_dir()
    try:
        with urllib.request.urlopen(url) as response:
            blob = response.read()
    except (OSError, ValueError) as exc:  # URLError is an OSError; a bad URL a ValueError
        raise MissingData(f"cannot download {url}: {getattr(exc, 'reason', exc)}") from exc
    members = _archive_members(blob, url)
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    for member, read in members:
        m = _MASKBENCH_MEMBER.search(member)
        if m is None:
            continue
        write_bytes_atomic(target / m.group(1), read())
        count += 1
    if count == 0:
        raise MissingData(f"{url}: the archive holds no maskbench/data/*.json files")
    return count


def _archive_members(blob: bytes, url: str) -> list[tuple[str, Any]]:
    if zipfile.is_zipfile(io.BytesIO(blob)):
        zf = zipfile.ZipFile(io.BytesIO(blob))
        return [(i.filename, lambda i=i: zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    try:
        tf = tarfile.open(fileobj=io.BytesIO(blob), mode="r:*")
    except tarfile.TarError as exc:
        raise MissingData(f"{url}: not a zip or tar archive") from exc
    files = [m for m in tf.getmembers() if m.isfile()]
    return [(m.name, lambda m=m: tf.extractfile(m).read()) for m in files]  # type: ignore[union-attr]
