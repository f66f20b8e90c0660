"""The mutation suite (`tests.mutation.suite`): seeded faults in TokensDFA exact and in
TokensDFA canonical must be caught as bugs wherever they have an effect, and the repro
of each must reproduce on its own; the walk before issue 18 (once per state everywhere)
misses some, which is what the sharper walk is for."""

from __future__ import annotations

import pytest

from tests.mutation import faults
from tests.mutation import suite as mutation

pytest.importorskip("tokensdfa")


@pytest.fixture(scope="module")
def outcomes() -> list[mutation.Outcome]:
    return mutation.run_suite()


def test_there_are_enough_fault_kinds() -> None:
    assert len(faults.FAULTS) >= 10
    # one only reachable off the breadth-first cover, one deep in a walk, one on the
    # accepting status, one on the EOS bit, one on the next state
    for kind in ("revisit-add", "deep-drop", "refuse-eos", "eos-bit", "stay-on-long"):
        assert kind in faults.FAULTS


@pytest.mark.parametrize("canonical", [False, True], ids=["exact", "canonical"])
def test_every_mutant_with_an_effect_is_caught_as_a_bug(
    outcomes: list[mutation.Outcome], canonical: bool
) -> None:
    mine = [o for o in outcomes if o.canonical == canonical]
    escaped = [(o.kind, o.regex, o.policies) for o in mine if o.effect and not o.caught]
    assert escaped == []
    # every kind has an effect somewhere, and nothing is caught that has none
    assert {o.kind for o in mine if o.effect} == set(faults.FAULTS)
    assert not [o for o in mine if o.caught and not o.effect]


@pytest.mark.parametrize("canonical", [False, True], ids=["exact", "canonical"])
def test_every_mutant_repro_reproduces(outcomes: list[mutation.Outcome], canonical: bool) -> None:
    repros = {o.kind: o for o in outcomes if o.canonical == canonical and o.reproduced is not None}
    assert set(repros) == set(faults.FAULTS)
    failed = {k: o.repro_output for k, o in repros.items() if not o.reproduced}
    assert failed == {}


def test_mutants_get_the_signature_of_their_shape(outcomes: list[mutation.Outcome]) -> None:
    rules = {(o.kind, o.regex): set(o.rules) for o in outcomes if not o.canonical}
    assert rules[("refuse-eos", r"a(\.a)*")] == {"eos-refused-at-match"}
    assert rules[("allow-eos", r"a(\.a)*")] == {"eos-allowed-before-match"}
    assert rules[("eos-bit", r"a(\.a)*")] == {"eos-bit-mismatch"}
    assert rules[("special-as-text", r"a(\.a)*")] == {"special-allowed"}
    assert rules[("advance-refuses", r"a(\.a)*")] == {"mask-advance-mismatch"}
    # random added tokens are not utf8-overapproximation, dropped ones not final-state-exit
    assert "utf8-overapproximation" not in rules[("add-token", '"[^"]*"')]
    assert "final-state-exit" not in rules[("deep-drop", '"[^"]*"')]


def test_the_walk_before_issue_18_misses_faults_the_sharper_walk_catches() -> None:
    kinds = ("deep-drop", "revisit-add")
    blind = mutation.run_suite(kinds, variants=(False,), plan=mutation.BLIND_PLAN, repros=False)
    assert [o for o in blind if o.effect and not o.caught]
