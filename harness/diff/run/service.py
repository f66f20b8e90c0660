"""The worker side of a diff: one (spec, vocabulary) cell at a time, in a worker process
(`harness.process`) that prepared the vocabulary for every engine once.

A cell compiles the spec for every engine, walks them beside the reference
(`harness.diff.walk.differ`), minimizes the first bug of each (engine, signature), and for a
JSON schema checks the engines with their own JSON grammar (and the reference, whose
language is the converter's) on labelled and sampled instances
(`harness.diff.judge.instances`), for a grammar every grammar engine
(`harness.diff.judge.grammar_instances`). Requests and outcomes are the typed protocol of
`harness.diff.run.protocol`, crossing as JSON (`CellRequest.from_json`,
`CellOutcome.to_json`); the outcome's JSON is the form the store keeps for
`diff --resume`.

A request may run one *part* of a cell: the reference's own checks (TokensDFA exact
against the naive index, the converter's instances), one engine's walk, instance
checks and minimization, or (`dialect_lane`) a native JSON engine's masks on a schema
against our converter in its own dialect (`harness.diff.walk.dialects`). The controller
sends one request per part, each under its own timeout, so an engine that hangs costs
only its own results (`CellOutcome.merge` puts the parts back together); the
References of the last cell are kept between requests.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Sequence
from typing import Any

from harness import engines, vocab
from harness.corpora.paths import POLICY_LAYOUTS
from harness.diff.judge.grammar_instances import check_grammar_instances
from harness.diff.judge.instances import InstanceCounts, check_instances
from harness.diff.judge.triage import VerdictKind
from harness.diff.run.protocol import CellOutcome, CellRequest, DiffSetup, InstancePlan
from harness.diff.shrink.minimal import Minimal
from harness.diff.shrink.minimize import minimize
from harness.diff.shrink.protocol_shrink import minimize_protocol
from harness.diff.shrink.stale import minimize_stale
from harness.diff.walk.dialects import compared_in_dialect, dialect_lane
from harness.diff.walk.differ import Differ
from harness.diff.walk.disagreement import Disagreement, SpecDiff
from harness.diff.walk.lanes import STALE_AFTER_RESET
from harness.diff.walk.plan import WalkPlan
from harness.diff.walk.references import References
from harness.diff.walk.serving import PROTOCOL_WHATS
from harness.engines.base import Compiled, Engine, SchemaPolicy
from harness.engines.converter_subject import NAME as SUBJECT
from harness.errors import TokensieveError, WorkBudget
from harness.language import converter, reference
from harness.language import grammar as language_grammar
from harness.spec import Spec
from harness.vocab import Vocabulary

# One bug minimized per (engine, signature) in one cell; the rest count as occurrences.
# Seconds the minimizer may take in one request, over all its groups.
MINIMIZE_BUDGET_S = 60.0
# The shortest share of that budget a group gets.
MINIMIZE_GROUP_MIN_S = 5.0


class DiffService:
    """Built once per vocabulary: every engine prepared; answers one cell part per
    request."""

    def __init__(self, setup: dict[str, Any]) -> None:
        """`setup`: a `DiffSetup` as JSON (what `harness.process` hands a service)."""
        wanted = DiffSetup.from_json(setup)
        self.vocab = vocab.load(wanted.vocab)
        self.engines = [engines.get(name) for name in wanted.engines]
        self.prepared = {e.name: e.prepare(self.vocab) for e in self.engines}
        self.ready = {e.name: e.version() for e in self.engines}
        self._refs: tuple[tuple[str, str], References] | None = None

    def references(self, spec: Spec, regex: str | None) -> References | None:
        """The References of (spec, regex), kept for the next part of the same cell: a
        grammar's Earley reference, a regex's naive index; None for a schema with no
        converted regex."""
        if spec.kind != "grammar" and regex is None:
            return None
        key = (spec.id, regex or spec.text)
        if self._refs is None or self._refs[0] != key:
            self._refs = None  # free the last cell's before building the next
            grammar = spec if spec.kind == "grammar" else None
            refs = References(regex or "", self.vocab, spec.id, grammar=grammar)
            self._refs = (key, refs)
        return self._refs[1]

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """A `CellRequest` (as JSON) answered with its `CellOutcome` (as JSON)."""
        return self.answer(CellRequest.from_json(request)).to_json()

    def answer(self, r: CellRequest) -> CellOutcome:
        names = r.engines
        chosen = self.engines if names is None else [e for e in self.engines if e.name in names]
        spec, budget = r.spec, r.minimize_budget_s
        if r.dialect_lane:
            outcome = CellOutcome(SpecDiff(spec.id, self.vocab.name, r.regex or ""))
            for e in chosen:
                outcome.merge(
                    dialect_part(spec, self.vocab, e, self.prepared, r.plan, r.minimize, budget)
                )
            return outcome
        return diff_cell(
            spec,
            r.regex,
            self.vocab,
            chosen,
            self.prepared,
            r.plan,
            r.minimize,
            r.instances,
            refs=self.references(spec, r.regex),
            check_exact=r.check_exact,
            reference_instances=r.reference_instances,
            minimize_budget_s=budget,
        )


def dialect_part(
    spec: Spec,
    voc: Vocabulary,
    engine: Engine,
    prepared: dict[str, Any],
    plan: WalkPlan,
    do_minimize: bool,
    minimize_budget_s: float,
) -> CellOutcome:
    """A native JSON engine's masks on schema `spec` in its own dialect, the first bug of
    each signature minimized with the schema kept whole (`harness.diff.walk.dialects`)."""
    result, refs = dialect_lane(spec, voc, engine, prepared, plan)
    outcome = CellOutcome(result)
    if do_minimize and refs is not None:
        outcome.minimal = _minimize_first(
            result, {engine.name: engine}, voc, refs, minimize_budget_s, schema=spec.text
        )
    return outcome


def diff_cell(
    spec: Spec,
    regex: str | None,
    voc: Vocabulary,
    chosen: list[Engine],
    prepared: dict[str, Any],
    plan: WalkPlan,
    do_minimize: bool,
    instances: InstancePlan | None = None,
    *,
    refs: References | None = None,
    check_exact: bool = True,
    reference_instances: bool = True,
    minimize_budget_s: float = MINIMIZE_BUDGET_S,
) -> CellOutcome:
    """Compile, walk, and minimize the first bug of each signature, for the `chosen`
    engines (and, with `check_exact`, TokensDFA exact against the naive index; with
    `reference_instances`, the reference on a schema's instances). `regex` is None for a
    schema the converter cannot turn into a regex: there is no reference language then,
    and only instance checks run, of the native engines and of the regex engines that
    compile the schema themselves (tokensdfa-lazy takes, as a tree, schemas whose regex
    text passes the size limit; nothing else checks it there). Raises SpecError or
    UnsupportedSpec when the reference cannot build the regex."""
    if regex is None and spec.kind != "grammar":
        outcome = CellOutcome(SpecDiff(spec.id, voc.name, ""))
        outcome.diff.skipped = {e.name: "no converted regex: instances only" for e in chosen}
        if instances is not None:
            outcome.instances = instance_checks(
                spec, voc, chosen, prepared, instances, None, own_compilers=True
            )
        return outcome
    grammar = spec if spec.kind == "grammar" else None
    refs = refs or References(regex or "", voc, spec.id, grammar=grammar)
    skipped: dict[str, str] = {}
    compiled = _compile_all(chosen, prepared, spec, skipped)
    # a grammar's reference has no TokensDFA exact to check against
    exact = check_exact and grammar is None
    try:
        result = Differ(spec.id, regex or "", voc, compiled, refs, check_exact=exact).run(plan)
    except language_grammar.module().BudgetError as exc:  # the grammar reference's bound
        raise WorkBudget(language_grammar.NAME, spec.id, " ".join(str(exc).split())) from exc
    result.skipped.update(skipped)
    outcome = CellOutcome(result)
    if instances is not None and grammar is not None:
        found: list[Disagreement] = []
        outcome.instances = grammar_instance_checks(spec, voc, compiled, refs, instances, found)
        seen = {(d.engine, d.prefix_ids, d.what) for d in result.disagreements}
        for d in found:  # bugs on instance paths the walks missed: findings like the rest
            if (d.engine, d.prefix_ids, d.what) not in seen:
                seen.add((d.engine, d.prefix_ids, d.what))
                result.disagreements.append(d)
    if instances is not None and spec.kind == "json_schema":
        reference = engines.get("naive") if reference_instances else None
        if reference is not None and "naive" not in prepared:
            prepared["naive"] = reference.prepare(voc)  # kept for the next cell
        outcome.instances = instance_checks(spec, voc, chosen, prepared, instances, reference)
    if do_minimize:
        by_engine = {e.name: e for e in chosen}
        outcome.minimal = _minimize_first(result, by_engine, voc, refs, minimize_budget_s)
    return outcome


def grammar_instance_checks(
    spec: Spec,
    voc: Vocabulary,
    compiled: dict[str, tuple[Engine, Compiled]],
    refs: References,
    plan: InstancePlan,
    found: list[Disagreement],
) -> list[InstanceCounts]:
    """Every grammar engine that compiled `spec` on its labelled and sampled texts
    (`harness.diff.judge.grammar_instances`), each failure explained by the differ's
    verdicts on its token path for that engine alone (`_path_policies`); the
    disagreements met on those paths are added to `found`."""
    return [
        check_grammar_instances(
            name,
            lane[1],
            spec,
            voc,
            functools.partial(_path_policies, spec, voc, lane, refs, found),
            plan.valid,
            plan.invalid,
            samples=plan.samples,
            seed=plan.seed,
        )
        for name, lane in compiled.items()
    ]


def _path_policies(
    spec: Spec,
    voc: Vocabulary,
    lane: tuple[Engine, Compiled],
    refs: References,
    found: list[Disagreement],
    ids: Sequence[int],
) -> str | None:
    """The declared policies that explain every disagreement of `lane`'s engine with
    the reference along token path `ids` (comma-joined), or None where one is a bug or
    there is none to explain the failure. The disagreements go to `found`."""
    name = lane[0].name
    plan = WalkPlan(paths=(tuple(ids),), cover_states=0, random_walks=0, full_cover_limit=0)
    walked = Differ(spec.id, "", voc, {name: lane}, refs, check_exact=False).run(plan)
    on_path = [d for d in walked.disagreements if d.engine == name]
    found += on_path
    if not on_path or any(d.verdict == VerdictKind.BUG for d in on_path):
        return None
    return ",".join(sorted({d.rule for d in on_path}))


def _minimize_first(
    result: SpecDiff,
    by_engine: dict[str, Engine],
    voc: Vocabulary,
    refs: References,
    budget_s: float,
    schema: str = "",
) -> dict[int, Minimal | None]:
    """The minimal form of the shortest-prefix bug of each (engine, signature), all of
    them within `budget_s` (shared out evenly among the groups still to do); `schema`,
    what the engines compiled when `refs` reads its regex in their dialect."""
    deadline = time.monotonic() + budget_s
    firsts: dict[tuple[str, str], int] = {}
    for i in sorted(
        range(len(result.disagreements)), key=lambda i: len(result.disagreements[i].prefix_ids)
    ):
        d = result.disagreements[i]
        if d.verdict == VerdictKind.BUG and d.engine in by_engine:
            firsts.setdefault((d.engine, d.rule), i)
    out: dict[int, Minimal | None] = {}
    for k, i in enumerate(firsts.values()):
        d = result.disagreements[i]
        share = (deadline - time.monotonic()) / (len(firsts) - k)
        if d.what in PROTOCOL_WHATS:
            # a protocol bug: its history, shrunk, replays it on a new matcher
            # (None, "not reduced", where the engine has no protocol repro code)
            engine = by_engine[d.engine]
            budget = max(MINIMIZE_GROUP_MIN_S, share)
            out[i] = (
                minimize_protocol(d, engine, voc, budget, schema, refs.grammar)
                if engine.protocol_repro is not None
                else None
            )
            continue
        if d.rule == STALE_AFTER_RESET:
            # a history-dependent answer, which the minimizer's new matchers never give
            budget = max(MINIMIZE_GROUP_MIN_S, share)
            out[i] = minimize_stale(d, by_engine[d.engine], voc, budget, schema, refs.grammar)
            continue
        out[i] = minimize(
            d,
            by_engine[d.engine],
            voc,
            context=_allowed_at(refs, d.prefix_ids),
            budget_s=max(MINIMIZE_GROUP_MIN_S, share),
            schema=schema,
            deeper=refs.deeper,
            readings=refs.readings,
            grammar=refs.grammar,
        )
    return out


def _allowed_at(refs: References, prefix_ids: tuple[int, ...]) -> list[int]:
    """The reference's allowed ids after `prefix_ids` (EOS excluded)."""
    state = reference.walk(refs.naive, prefix_ids)
    if state is None:
        return []
    eos = refs.vocab.eos_id
    return [int(t) for t in refs.naive.allowed(state) if int(t) != eos]


def instance_checks(
    spec: Spec,
    voc: Vocabulary,
    chosen: list[Engine],
    prepared: dict[str, Any],
    plan: InstancePlan,
    reference: Engine | None,
    *,
    own_compilers: bool = False,
) -> list[InstanceCounts]:
    """Native JSON engines, the reference (the converter's language) and outlines-core's
    own converter where it is not the one in use (`converter_subjects`) on instances;
    with `own_compilers`, also the regex engines that compile schemas themselves
    (`Engine.compiles_schemas_itself`), for a schema with no reference language."""
    schema = json.loads(spec.text)
    out = []
    judged = [e for e in chosen if e.capabilities.json_schema == "native"]
    judged += [e for e in chosen if own_compilers and e.compiles_schemas_itself()]
    judged += [reference] if reference is not None else []
    judged += converter_subjects(chosen, prepared, voc)
    for e in judged:
        try:
            compiled = e.compile(prepared[e.name], spec)
        except TokensieveError:
            continue  # the mask diff's compile already recorded why
        out.append(
            check_instances(
                e.name,
                compiled,
                schema,
                spec.id,
                voc,
                plan.valid,
                plan.invalid,
                samples=plan.samples,
                seed=plan.seed,
                layouts=POLICY_LAYOUTS[e.policies.json_whitespace],
                schema_policies=declared_schema_policies(e),
            )
        )
    return out


def converter_subjects(
    chosen: list[Engine], prepared: dict[str, Any], voc: Vocabulary
) -> list[Engine]:
    """outlines-core's converter as a subject of its own, when outlines-core is among
    `chosen` and the regex engines compile another converter's regex (`--converter
    ours`): what outlines users run stays checked. Its prepared vocabulary is kept in
    `prepared` for the next cell."""
    if converter.current() == converter.OUTLINES:
        return []
    if not any(e.name.partition("@")[0] == converter.OUTLINES for e in chosen):
        return []
    subject = engines.get(SUBJECT)
    if SUBJECT not in prepared:
        prepared[SUBJECT] = prepared.get("naive") or subject.prepare(voc)
    return [subject]


def declared_schema_policies(engine: Engine) -> tuple[SchemaPolicy, ...]:
    """The JSON-schema policies `engine` declares (`Policies.json_schema`), and where its
    language is our converter's (a regex engine while ours is the converter in use), the
    bound of that converter's dialect on unconstrained values (`ANY_DEPTH`)."""
    declared = engine.policies.json_schema
    if engine.capabilities.json_schema == "via-regex" and converter.current() == converter.OURS:
        declared += (SchemaPolicy.UNCONSTRAINED_VALUES_AT_MOST_ANY_DEPTH,)
    return declared


def _compile_all(
    chosen: list[Engine], prepared: dict[str, Any], spec: Spec, skipped: dict[str, str]
) -> dict[str, tuple[Engine, Compiled]]:
    compiled: dict[str, tuple[Engine, Compiled]] = {}
    for e in chosen:
        if spec.kind == "json_schema" and e.capabilities.json_schema != "via-regex":
            # its own JSON grammar: a different language than the converted regex; its
            # masks are compared in its dialect where it declares one (a part of its own)
            if not compared_in_dialect(e):
                skipped[e.name] = "native JSON grammar: checked on instances, not masks"
            continue
        try:
            compiled[e.name] = (e, e.compile(prepared[e.name], spec))
        except TokensieveError as exc:
            skipped[e.name] = f"{type(exc).__name__}: {exc}"
    return compiled
