"""Corpora: the specs engines are measured on, and the texts and token paths walked.

- `entry`: `Entry`, one spec with its source, tags and labelled instances, `unique`,
  the rule that ids are unique, and `distinct`, the same spec named twice counted once;
- `catalog`: the sets of `corpora/manifest.json` as `Entry`s with stable `SET/NAME` ids
  (`entries`, `get`, `load_set`), and `spread`, the even sample every command takes;
- `maskbench`: MaskBench read by path (malformed files skipped and counted) and
  downloaded;
- `user`: a user's own spec files and directories, read as entries;
- `judge`: the JSON-Schema validator the instance checks trust (`jsonschema`, with its
  formats);
- `texts`, `schema_order` and `paths`: deterministic texts (examples, hypothesis draws),
  their keys in schema order, and their tokenization by a vocabulary's real encoder.

What a spec means (the converter, the reference, the regex scanner) is the layer below,
`harness.language`.
"""

from harness.corpora.catalog import (
    SetInfo,
    entries,
    get,
    get_entry,
    load_set,
    set_info,
    sets,
    spread,
)
from harness.corpora.entry import Entry, compact_json, distinct, unique
from harness.project import CORPORA_DIR, PROJECT_ROOT

__all__ = [
    "CORPORA_DIR",
    "PROJECT_ROOT",
    "Entry",
    "SetInfo",
    "compact_json",
    "distinct",
    "entries",
    "get",
    "get_entry",
    "load_set",
    "set_info",
    "sets",
    "spread",
    "unique",
]
