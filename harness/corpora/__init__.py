"""Corpora: the specs engines are measured on, and the texts and token paths walked.

- `catalog`: the sets of `corpora/manifest.json` as `Entry`s with stable `SET/NAME` ids
  (`entries`, `get`, `load_set`), and `spread`, the even sample every command takes;
- `maskbench`: MaskBench read by path (malformed files skipped and counted) and
  downloaded;
- `regex_syntax`: the one scanner of regex syntax (features, ASCII class rewrite,
  Python `re` readability);
- `converter`: the one guarded, cached JSON-schema-to-regex converter whose regex every
  regex-only engine receives;
- `texts`, `schema_order` and `paths`: deterministic texts (examples, hypothesis draws),
  their keys in schema order, and their tokenization by a vocabulary's real encoder.
"""

from harness.corpora.catalog import (
    CORPORA_DIR,
    PROJECT_ROOT,
    Entry,
    SetInfo,
    compact_json,
    entries,
    get,
    get_entry,
    load_set,
    set_info,
    sets,
    spread,
)

__all__ = [
    "CORPORA_DIR",
    "PROJECT_ROOT",
    "Entry",
    "SetInfo",
    "compact_json",
    "entries",
    "get",
    "get_entry",
    "load_set",
    "set_info",
    "sets",
    "spread",
]
