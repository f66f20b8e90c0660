"""The engines' side of the schema coverage benchmark (`benchmarks.schema_coverage`):
each engine with its own JSON grammar compiles every schema in a worker process, and the
labelled instances of each schema it takes, and completions drawn from its masks, are
checked by the differ's own instance checks.
"""

from __future__ import annotations

import json
from collections import Counter

from harness import corpora, engines
from harness import vocab as vocabularies
from harness.corpora.paths import POLICY_LAYOUTS
from harness.corpora.schema_order import schema_order
from harness.diff.judge.instances import INVALID_OUTPUT, check_instances
from harness.errors import TokensieveError
from harness.process import Service
from harness.spec import Spec

# The vocabulary engines compile on: what a schema costs an engine does not depend on
# the vocabulary's size, and what it accepts does not either.
SMALL_VOCAB = "synthetic-2000-7"
# Tokens an engine's completion may take on it.
OUTPUT_TOKENS = 512


class CompileService:
    """The worker side: one engine, prepared once; answers a request (a JSON object: the
    schema's text, its labelled instances in schema order, and how many completions to
    draw from its masks) with a JSON object:
    `status` ("ok" or the reason it was not compiled) and, when compiled, the instance
    counts of `harness.diff.judge.instances.check_instances` (the differ's own checks: valid
    instances in each layout the engine's whitespace policy promises, labels the judge
    disputes set apart, failures its declared JSON-schema policies explain counted as
    `policy`)."""

    def __init__(self, setup: dict[str, str]) -> None:
        self.engine = engines.get(setup["engine"])
        self.vocab = vocabularies.load(setup["vocab"])
        self.prepared = self.engine.prepare(self.vocab)
        self.ready = self.engine.version()

    def handle(self, request: str) -> str:
        asked = json.loads(request)
        spec = Spec.schema("coverage/schema", asked["schema"])
        try:
            compiled = self.engine.compile(self.prepared, spec)
        except TokensieveError as exc:
            return json.dumps({"status": type(exc).__name__})
        counts = check_instances(
            self.engine.name,
            compiled,
            json.loads(asked["schema"]),
            spec.id,
            self.vocab,
            asked["valid"],
            asked["invalid"],
            samples=asked["outputs"],
            max_tokens=OUTPUT_TOKENS,
            layouts=POLICY_LAYOUTS[self.engine.policies.json_whitespace],
            schema_policies=self.engine.policies.json_schema,
        )
        row = counts.row()
        shown = [
            f"{f.text[:120]!r}: {f.detail[:160]}"
            for f in counts.failures
            if f.kind == INVALID_OUTPUT
        ]
        return json.dumps({"status": "ok", **{k: row[k] for k in ENGINE_COUNTS}, "shown": shown})


# What an engine's row adds up over the schemas it takes (`InstanceCounts`).
ENGINE_COUNTS = (
    "valid",
    "invalid",
    "false_rejections",
    "false_acceptances",
    "policy",
    "disputed",
    "samples",
    "invalid_outputs",
    "unfinished",
    "empty",
    "repeated_keys",
)


def coverage(
    name: str, found: list[corpora.Entry], timeout: float, outputs: int = 0
) -> tuple[Counter[str], Counter[str], list[str]]:
    """(schemas by status, instance counts summed over the schemas taken, with `exact`:
    the schemas taken with no false rejection, false acceptance, policy failure or
    invalid output among `outputs` completions drawn from the engine's masks, and the
    invalid outputs, each with its spec id, for display)."""
    service = Service(
        "benchmarks.engine_coverage:CompileService",
        {"engine": name, "vocab": SMALL_VOCAB},
        address_space=4 << 30,
    )
    tally: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    shown: list[str] = []
    try:
        for entry in found:
            schema = json.loads(entry.spec.text)
            request = {
                "schema": entry.spec.text,
                "valid": [schema_order(v, schema) for v in entry.valid],
                "invalid": [schema_order(v, schema) for v in entry.invalid],
                "outputs": outputs,
            }
            reply = service.ask(json.dumps(request), timeout)
            if not reply.ok:
                tally[reply.status.value] += 1
                continue
            answer = json.loads(str(reply.value))
            status = answer.pop("status")
            tally[status] += 1
            if status != "ok":  # refused: no counts
                continue
            shown += [f"{entry.spec.id} {text}" for text in answer.pop("shown")]
            counts.update(answer)
            failed = ("false_rejections", "false_acceptances", "policy", "invalid_outputs")
            counts["exact"] += not any(answer[k] for k in failed)
    finally:
        service.stop()
    return tally, counts, shown
