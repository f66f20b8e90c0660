"""The mutation suite, test machinery kept out of the package: seeded faults in TokensDFA
exact and canonical (`faults`), each driven through an adapter (`mutants`), that the
differ must catch with a reproducing repro (`suite`). `tests/test_mutations.py` runs it;
`python -m tests.mutation` prints the score."""
