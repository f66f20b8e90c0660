"""The language layer: what a spec *means*, below corpora and engines, which both need it.

- `reference`: the one builder of the reference (the naive index of a regex over a
  vocabulary, which defines the language every engine is compared with), the walk of a
  token path on any tokensdfa index, and the one rule of whether a spec is valid (the
  reference's parser reads it);
- `converter`: the one guarded, cached JSON-schema-to-regex converter (ours, or
  outlines-core's) whose regex every regex-only engine and the reference receive;
- `regex_syntax`: the one scanner of regex syntax (features, ASCII class rewrite, Python
  `re` readability);
- `regex_tree`: a regex as a syntax tree with every leaf verbatim, for shrinking it and
  for the leftmost-first model;
- `grammar`: grammars (GBNF, Lark, EBNF): the rule of a readable grammar, the Earley
  reference of a grammar over a vocabulary, random sentences and the writers between
  notations, all through the extension's front ends.

It imports `process` (conversions run in a worker), `vocab`, `results` and the leaves;
nothing above it.
"""

from harness.language import converter, grammar, reference, regex_syntax, regex_tree

__all__ = ["converter", "grammar", "reference", "regex_syntax", "regex_tree"]
