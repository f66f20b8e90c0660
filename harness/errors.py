"""The project's error types: every failure tokensieve expects surfaces as one of these,
never raw. The command line prints one line for each (`tokensieve: error: ...`) and exits
with `exit_code`: 2 for bad input (a name, a value, a file), 1 for a failing environment
(a full disk, a read-only directory)."""

from __future__ import annotations


class TokensieveError(Exception):
    """Base of every error tokensieve raises on purpose."""

    exit_code = 2


class SpecError(TokensieveError):
    """The spec is invalid for this engine (bad regex, malformed schema)."""

    def __init__(self, engine: str, spec_id: str, message: str) -> None:
        self.engine = engine
        self.spec_id = spec_id
        self.message = message
        super().__init__(f"{engine}: invalid spec {spec_id}: {message}")


class UnsupportedSpec(TokensieveError):
    """The spec is valid but uses a feature this engine does not support."""

    def __init__(self, engine: str, spec_id: str, message: str) -> None:
        self.engine = engine
        self.spec_id = spec_id
        self.message = message
        super().__init__(f"{engine}: unsupported spec {spec_id}: {message}")


class EngineError(TokensieveError):
    """An engine failed while running a compiled spec (filling a mask, advancing)."""

    def __init__(self, engine: str, spec_id: str, message: str) -> None:
        self.engine = engine
        self.spec_id = spec_id
        self.message = message
        super().__init__(f"{engine}: runtime error on {spec_id}: {message}")


class WorkBudget(EngineError):
    """An engine stopped a call past its own work budget (the grammar reference's Earley
    items per step): the cell ends as `timeout`, as if killed at its time limit, and
    the run goes on."""


class EngineUnavailable(TokensieveError):
    """The engine's package is missing or failed to import."""


class UnknownName(TokensieveError):
    """An engine, vocabulary or corpus name that does not exist."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(sorted(known))}")


class BadInput(TokensieveError):
    """A value given on the command line or in a file that cannot be used."""


class MissingData(TokensieveError):
    """Data a command needs (a package file, a corpus directory) is absent."""


class EnvironmentFailure(TokensieveError):
    """The machine, not the input, failed the command: a full disk, a read-only directory.
    Everything finished before it is kept."""

    exit_code = 1
