"""Minimal repros for instance failures of JSON-schema engines.

A failure found on a real vocabulary (xgrammar emitting a raw tab inside a string, the
converter accepting a bare `null`) is rebuilt on a byte-level vocabulary (one token per
distinct byte of the text, plus EOS; per character for an engine that takes no token
that is not UTF-8 on its own), checked to still show, and its text shrunk while it
does: on its JSON structure when it is a JSON document (`harness.diff.shrink.json_shrink`:
members dropped, strings shortened, subtrees simplified, so the repro's text is one a
user could write), else by deleting chunks of characters
(`harness.diff.shrink.text_shrink`). The script then needs only the engine's package (for
a converter: tokensdfa, or outlines-core and Python's `re`) and the standard library.

The shrinking compiles the engine hundreds of times, so it runs in a worker
(`harness.process`, `shrink_in_worker`), never in the controller: an engine that hangs,
crashes or grows past the memory limit there costs only that repro (recorded with how it
ended), and what it prints (xgrammar's converter warnings, from C++ to file descriptor 2)
lands in the worker's stderr, not on the user's terminal.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from harness import engines
from harness.corpora.judge import loads, validate
from harness.diff.judge.instances import FALSE_REJECTION, InstanceFailure, walk
from harness.diff.shrink.json_shrink import shrink_json
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.embed import literal
from harness.errors import TokensieveError
from harness.language import converter
from harness.process import Service
from harness.spec import Spec

MAX_CHECKS = 400
# Seconds one shrink may take: each check compiles the schema afresh, and a large schema
# takes xgrammar a second or more; past the budget the text shrunk so far is kept.
SHRINK_BUDGET_S = 60.0
# What a shrink may take in its worker past that budget: the check in flight when the
# budget runs out (one compile) and the worker's start (importing the engine).
SHRINK_SLACK_S = 60.0
SHRINK_MEMORY = 8 << 30  # bytes resident
_SHRINK_SERVICE = "harness.diff.findings.instance_repro:ShrinkService"


@dataclass(frozen=True)
class InstanceRepro:
    """A shrunk instance failure, as the shrink worker answers it (`to_json`)."""

    engine: str  # the adapter whose failure it is (its `instance_repro` drives the script)
    target: str  # what the script drives: an engine, or "converter:ours|outlines-core"
    kind: str
    schema: Any  # the JSON schema
    text: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> InstanceRepro:
        return InstanceRepro(**data)


def _invalid(schema: Any, text: str) -> str | None:
    """Why `text` is not a valid instance (None if it is)."""
    try:
        value = loads(text)
    except ValueError as exc:
        return f"not JSON: {exc}"
    try:
        return validate(schema, value)
    except Exception as exc:  # jsonschema cannot evaluate the schema
        return f"unverifiable: {type(exc).__name__}"


def _pieces(engine_name: str, text: str) -> list[bytes]:
    """`text` as the tiny vocabulary's tokens: one per byte, or one per character for an
    engine that never takes a token that is not UTF-8 on its own (`utf8_tokens_only`:
    a byte of `é` would be refused, a different failure); the repro script spells it the
    same way."""
    if engines.get(engine_name).policies.utf8_tokens_only:
        return [c.encode("utf-8", "surrogatepass") for c in text]
    return [bytes([b]) for b in text.encode("utf-8", "surrogatepass")]


def _accepts(engine_name: str, schema: Any, text: str) -> bool | None:
    """Does the engine take `text` to EOS on a vocabulary of its bytes (or characters:
    `_pieces`)? None if it cannot compile the schema there or fails on the way (an
    engine error on a tiny vocabulary says nothing about the failure being shrunk)."""
    pieces = _pieces(engine_name, text)
    tokens = sorted(set(pieces))
    vocab = tiny_vocabulary(tokens)
    engine = engines.get(engine_name)
    ids = [tokens.index(p) + 1 for p in pieces]
    try:
        compiled = engine.compile(engine.prepare(vocab), Spec.schema("repro/schema", schema))
        return walk(compiled.matcher(), vocab, ids)[0]
    except TokensieveError:
        return None


def minimize_failure(failure: InstanceFailure, schema: Any) -> InstanceRepro | None:
    """The shortest text that still shows `failure` on a byte-level (or character-level:
    `_pieces`) vocabulary: the adapter of the shrinker contract
    (`harness.diff.shrink.contract`), which binds the engine, the schema and the kind of
    failure into `keeps` and shrinks the text with `shrink_json`."""
    engine = engines.get(failure.engine)
    if engine.instance_repro is None or failure.policy is not None:
        return None
    rejection = failure.kind == FALSE_REJECTION

    def keeps(text: str) -> bool:
        bad = _invalid(schema, text)
        if bad is not None and bad.startswith("unverifiable"):
            return False
        accepted = _accepts(failure.engine, schema, text)
        if accepted is None:
            return False
        return (not accepted and bad is None) if rejection else (accepted and bad is not None)

    if not keeps(failure.text):
        return None
    deadline = time.monotonic() + SHRINK_BUDGET_S
    text = shrink_json(failure.text, keeps, deadline, max_checks=MAX_CHECKS)
    why = "valid per jsonschema" if rejection else str(_invalid(schema, text))
    target = engine.instance_repro_target or engine.name
    return InstanceRepro(engine.name, target, failure.kind, schema, text, why)


class ShrinkService:
    """The worker side of `shrink_in_worker`: one failure shrunk per request."""

    def __init__(self, setup: Any) -> None:
        self.ready = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """{"failure": an `InstanceFailure` as JSON, "schema"}: its `InstanceRepro` as
        JSON, or None."""
        found = minimize_failure(InstanceFailure.from_json(request["failure"]), request["schema"])
        return None if found is None else found.to_json()


# The shrink worker of the engine last asked for, kept for its next failure.
_worker: tuple[str, Service] | None = None


def _service(engine_name: str) -> Service:
    """The shrink worker for `engine_name`, in that engine's environment (for
    `NAME@VERSION`, the release first on its import path); one at a time, since a worker
    holding xgrammar holds torch."""
    global _worker
    if _worker is None or _worker[0] != engine_name:
        if _worker is not None:
            _worker[1].stop()
        env = engines.environment([engine_name]) if "@" in engine_name else None
        _worker = (engine_name, Service(_SHRINK_SERVICE, env=env, memory_limit=SHRINK_MEMORY))
    return _worker[1]


def stop_shrinking() -> None:
    """End the shrink worker (a run's repros are written; its engine may hold gigabytes)."""
    global _worker
    if _worker is not None:
        _worker[1].stop()
        _worker = None


def shrink_in_worker(failure: InstanceFailure, schema: Any) -> InstanceRepro | str | None:
    """`minimize_failure` in a shrink worker: its repro, None when the failure does not
    show on a byte-level vocabulary, or one line saying how the worker's attempt ended
    (timeout, oom, crash, error); the worker starts again for the next failure."""
    request = {"failure": failure.to_json(), "schema": schema}
    reply = _service(failure.engine).ask(request, SHRINK_BUDGET_S + SHRINK_SLACK_S)
    if not reply.ok:
        return f"shrinking it in a worker ended: {reply.status.value}: {reply.message}"
    return None if reply.value is None else InstanceRepro.from_json(reply.value)


def script(r: InstanceRepro, title: str, paragraph: str) -> str:
    """The repro script's source. The schema, the text and the explanation (which quotes
    jsonschema's message, which quotes the instance) enter only as `repr` literals in code
    positions; the docstring is fixed text (see `harness.embed`)."""
    engine = engines.get(r.engine)
    expect = "refuses" if r.kind == FALSE_REJECTION else "accepts"
    why_label = "why TEXT is valid" if r.kind == FALSE_REJECTION else "why TEXT is invalid"
    return (
        "#!/usr/bin/env python3\n"
        '"""A tokensieve instance finding as a standalone repro: TITLE and EXPLANATION below\n'
        f"say what it shows. Needs only {engine.instance_repro_package} and the standard "
        "library. "
        f"Prints\nREPRODUCED and exits 1 while the engine {expect} TEXT; FIXED and 0 once "
        'it does not.\n"""\n\nimport json\nimport re\nimport sys\n\n'
        f"TITLE = {literal(title)}\n"
        f"EXPLANATION = {literal(paragraph)}\n"
        f"SCHEMA = json.loads({literal(json.dumps(r.schema))})\n"
        f"TEXT = {literal(r.text)}\n"
        f"KIND = {literal(r.kind)}\n"
        f"# {why_label} (jsonschema):\nWHY = {literal(r.why)}\n"
        + str(engine.instance_repro)
        + _MAIN
    )


_MAIN = """

def printable(text):
    # escapes for line breaks, control and terminal sequences that TEXT may hold
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def main():
    print(printable(TITLE))
    print(printable(EXPLANATION))
    if KIND != "false-rejection":
        try:
            json.loads(TEXT)
        except ValueError as exc:
            print("TEXT is not JSON:", exc)
    accepted = accepts(TEXT)
    print(f"TEXT = {TEXT!r}; engine accepts it: {accepted}; {printable(WHY)}")
    reproduced = (not accepted) if KIND == "false-rejection" else accepted
    print("REPRODUCED" if reproduced else "FIXED")
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
"""


def _who(target: str) -> str:
    """Who a repro's explanation names: the engine, or a converter for `converter:NAME`
    (plain `converter` in findings written before there were two)."""
    if target == "converter":
        return converter.REPRO_WHO[converter.OUTLINES]
    kind, _, name = target.partition(":")
    return converter.REPRO_WHO.get(name, target) if kind == "converter" else target


def explanation(r: InstanceRepro, failure: InstanceFailure) -> str:
    who = _who(r.target)
    if r.kind == FALSE_REJECTION:
        what = f"refuses {r.text!r}, a valid instance"
    elif r.kind == "false-acceptance":
        what = f"accepts {r.text!r} through EOS, though it is invalid ({r.why})"
    else:
        what = f"lets a sampled completion end as {r.text!r}, which is invalid ({r.why})"
    return (
        f"{who} {what}. Found on {failure.spec_id} with the {failure.vocab} vocabulary "
        f"({failure.kind}); the text was shrunk on a vocabulary of its bytes (characters, "
        "for an engine that takes no partial character) while the "
        "failure still showed."
    )
