"""`python -m tests.mutation`: the mutation score (see `tests.mutation.suite`)."""

from tests.mutation.suite import main

main()
