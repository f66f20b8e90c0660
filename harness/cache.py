"""The on-disk cache shared by every part of tokensieve: parsed vocabularies, token paths,
schema-to-regex verdicts. One root (`$TOKENSIEVE_CACHE`, default `~/.cache/tokensieve`),
and writes that a concurrent reader never sees half done.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_root() -> Path:
    """`$TOKENSIEVE_CACHE`, default `~/.cache/tokensieve`; read on every call so tests can
    point it elsewhere."""
    return Path(os.environ.get("TOKENSIEVE_CACHE") or Path.home() / ".cache" / "tokensieve")


def cache_dir(*parts: str) -> Path:
    """`cache_root()/<parts>`, created on demand."""
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_json_atomic(path: Path, value: Any) -> None:
    """Readers never see a half-written file: write a sibling, then rename over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            # ASCII escapes: instances may hold lone surrogates, which UTF-8 cannot encode.
            json.dump(value, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any | None:
    """The cached value, or None when absent or unreadable (a cache miss, not an error)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to a sibling temporary file, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
