"""The verdict ranks no noise: a claim needs a difference beyond the spread of the cells it
pools (`harness.report.verdict`'s rule), else the two engines tie, in the sentence and in
`verdict.csv`; `tokensieve check` names one fastest correct engine only beyond its
margin (`harness.check.model`)."""

from __future__ import annotations

import csv
from pathlib import Path

from harness.check import model as check_model
from harness.figures import summarize
from harness.report import verdict, verdict_section
from harness.results.metrics import CellMetrics
from harness.store import Cell

VOCAB = "v1"


def _cell(engine: str, spec: str, ttfm_us: float, fills: list[int], memory: int = 4096) -> Cell:
    """An ok cell of the main study with these figures (memory: the engine's own)."""
    metrics = CellMetrics(
        compile_ns=int(ttfm_us * 1e3) - 5_000,
        ttfm_ns=int(ttfm_us * 1e3),
        fill_ns=fills,
        fill=summarize(fills),
        engine_memory_bytes=memory,
    )
    return Cell("r", engine, spec, VOCAB, "main", "ok", None, metrics, "")


def _fills(low: int, top: int) -> list[int]:
    """100 fills: 96 spread evenly from `low` up to below `top`, then 4 at `top` (so the
    p99 of one cell and of any pool of such cells is `top`)."""
    return [low + (top - low) * i // 100 for i in range(96)] + [top] * 4


def _claim(group: verdict.Group, measure: str) -> verdict.Claim:
    return next(c for c in group.claims if c.measure == measure)


def _csv_rows(group: verdict.Group, tmp_path: Path) -> dict[str, dict[str, str]]:
    verdict.write_verdict_csv([group], tmp_path)
    rows = csv.DictReader((tmp_path / "verdict.csv").open(encoding="utf-8"))
    return {r["measure"]: r for r in rows}


def test_the_issues_example_is_a_tie(tmp_path: Path) -> None:
    """Three specs whose fills overlap, the pooled p99 1.03x apart (naive 178.7 µs,
    tokensdfa 184.3 µs) and the time to first mask 1.02x apart: both tie, though naive
    is ahead on every spec (by far less than one cell's noise)."""
    specs = [f"set/{i}" for i in range(3)]
    cells = [_cell("naive", s, 1000 + 10 * i, _fills(90_000, 178_700)) for i, s in enumerate(specs)]
    cells += [
        _cell("tokensdfa", s, 1020 + 10 * i, _fills(95_000, 184_300)) for i, s in enumerate(specs)
    ]
    group = verdict.judge("set", VOCAB, cells, ["naive", "tokensdfa"])
    p99 = _claim(group, verdict.MASK_P99)
    assert p99.runner_up is not None and round(p99.ratio or 0, 2) == 1.03
    assert p99.paired == verdict.Paired(specs=3, ahead=3, clear=0) and p99.tie
    assert verdict_section.claim_sentence(p99) == (
        "<b>naive</b> and <b>tokensdfa</b> tie for the fastest mask at p99: 178.7 µs and "
        "184.3 µs over 300 masks, within the spread of their cells (1.03x apart; naive "
        "ahead on 3 of 3 specs, by 1.25x or more on 0)."
    )
    ttfm = verdict_section.claim_sentence(_claim(group, verdict.TTFM))
    assert ttfm.startswith("<b>naive</b> and <b>tokensdfa</b> tie for the fastest time to")
    # Memory prints the same: a tie as before, one figure.
    assert verdict_section.claim_sentence(_claim(group, verdict.MEMORY)) == (
        "<b>naive</b> and <b>tokensdfa</b> tie for the smallest: 4.0 KiB median (its own figure)."
    )
    rows = _csv_rows(group, tmp_path)
    assert rows[verdict.MASK_P99]["tie"] == "True"
    assert (rows[verdict.MASK_P99]["engine"], rows[verdict.MASK_P99]["ratio"]) == ("naive", "1.031")
    assert (
        rows[verdict.MASK_P99]["specs_paired"],
        rows[verdict.MASK_P99]["specs_ahead"],
        rows[verdict.MASK_P99]["specs_ahead_1.25x"],
    ) == ("3", "3", "0")
    assert rows[verdict.TTFM]["tie"] == rows[verdict.MEMORY]["tie"] == "True"


def test_a_clear_consistent_difference_is_still_a_claim(tmp_path: Path) -> None:
    """Three specs, tokensdfa 2x faster on each (time to first mask and mask p99) and half
    the memory: claims with their ratios, no tie."""
    specs = [f"set/{i}" for i in range(3)]
    cells = [
        _cell("tokensdfa", s, 500 * (i + 1), _fills(40_000, 100_000), 2048)
        for i, s in enumerate(specs)
    ]
    cells += [
        _cell("naive", s, 1000 * (i + 1), _fills(80_000, 200_000)) for i, s in enumerate(specs)
    ]
    group = verdict.judge("set", VOCAB, cells, ["naive", "tokensdfa"])
    assert not any(c.tie for c in group.claims)
    assert verdict_section.claim_sentence(_claim(group, verdict.MASK_P99)) == (
        "<b>tokensdfa</b> has the fastest mask at p99: 100.0 µs over 300 masks, 2.0x faster "
        "than naive (200.0 µs)."
    )
    ttfm = verdict_section.claim_sentence(_claim(group, verdict.TTFM))
    assert "2.0x faster than naive" in ttfm
    assert "2.0x smaller than naive" in verdict_section.claim_sentence(
        _claim(group, verdict.MEMORY)
    )
    rows = _csv_rows(group, tmp_path)
    assert {r["tie"] for r in rows.values()} == {"False"}
    assert rows[verdict.MASK_P99]["ratio"] == "2.0"
    assert rows[verdict.MASK_P99]["specs_ahead_1.25x"] == "3"


def test_a_pooled_ratio_the_specs_do_not_agree_on_is_a_tie() -> None:
    """1.5x pooled, but the runner-up is ahead on one of three specs: a tie."""
    specs = [f"set/{i}" for i in range(3)]
    fast = [1000.0, 1000.0, 3000.0]
    slow = [1500.0, 1500.0, 2000.0]
    cells = [_cell("a", s, t, _fills(1000, 2000)) for s, t in zip(specs, fast, strict=True)]
    cells += [_cell("b", s, t, _fills(1000, 2000)) for s, t in zip(specs, slow, strict=True)]
    claim = _claim(verdict.judge("set", VOCAB, cells, ["a", "b"]), verdict.TTFM)
    assert (claim.best.engine, claim.ratio, claim.paired) == ("a", 1.5, verdict.Paired(3, 2, 2))
    assert claim.tie
    assert "within the spread of their cells (1.50x apart; a ahead on 2 of 3 specs" in (
        verdict_section.claim_sentence(claim)
    )


def test_many_specs_claim_by_the_sign_test_few_do_not() -> None:
    """1.15x on each spec is below one cell's noise: on 3 specs a tie; ahead on 7 of 8
    specs (sign test 9/256 <= 5%) a claim; on 6 of 8 (37/256) a tie."""

    def claim(ahead: int, specs: int) -> verdict.Claim:
        cells = []
        for i in range(specs):
            a, b = (1000.0, 1150.0) if i < ahead else (1150.0, 1100.0)
            cells += [_cell("a", f"s/{i}", a, [1]), _cell("b", f"s/{i}", b, [1])]
        return _claim(verdict.judge("s", VOCAB, cells, ["a", "b"]), verdict.TTFM)

    assert claim(3, 3).tie and claim(3, 3).paired == verdict.Paired(3, 3, 0)
    seven = claim(7, 8)
    assert not seven.tie and seven.best.engine == "a"
    assert "1.15x faster than b" in verdict_section.claim_sentence(seven)
    assert claim(6, 8).tie
    assert verdict.sign_p(7, 8) == 9 / 256 and verdict.sign_p(5, 5) == 1 / 32
    assert verdict.sign_p(3, 3) == 1 / 8 and verdict.sign_p(0, 4) == 1.0


def test_check_names_one_fastest_engine_only_beyond_its_margin() -> None:
    """A correct engine within 1.25x of the fastest's time to first mask ties with it; a
    wrong one never counts."""

    def spec(*ttfm: tuple[str, int, str]) -> check_model.SpecResult:
        found = check_model.SpecResult("user/regex#1", "regex", "--regex")
        for engine, ns, status in ttfm:
            result = check_model.EngineResult(engine, "ok", ttfm_ns=ns, mask_p50_ns=100.0)
            result.states = 10  # the diff compared its masks
            if status == "bug":
                result.bug_states = 1
            found.engines.append(result)
        return found

    tied = spec(("b", 1_030_000, "ok"), ("a", 1_000_000, "ok"), ("c", 1_300_000, "ok"))
    assert [e.engine for e in tied.tied_fastest] == ["a", "b"]
    assert tied.fastest_correct is not None and tied.fastest_correct.engine == "a"
    assert tied.verdict == (
        "user/regex#1: fastest correct: tie of a and b (time to first mask within 1.25x)"
    )
    clear = spec(("a", 1_000_000, "ok"), ("b", 1_250_000, "ok"), ("c", 10, "bug"))
    assert clear.verdict == "user/regex#1: fastest correct: a; wrong: c"
    assert spec(("c", 10, "bug")).verdict == "user/regex#1: no correct engine; wrong: c"
    assert check_model.CLEAR_RATIO == verdict.CLEAR_RATIO


def test_check_calls_no_engine_correct_that_the_diff_did_not_check() -> None:
    """A diff cell that timed out compared no mask: its engines are fast, not correct,
    and the verdict says nothing was checked (seen on a 128k-token tokenizer file with a
    CSV grammar, where the reference's cover took past the diff's timeout)."""
    found = check_model.SpecResult("user/csv", "grammar", "csv.lark")
    unchecked = check_model.EngineResult("a", "ok", ttfm_ns=1_000, mask_p50_ns=100.0)
    unchecked.diff_note = "not compared: timeout ran over 120 s"
    found.engines.append(unchecked)
    assert unchecked.outcome == "ok" and not unchecked.correct
    assert found.fastest_correct is None
    assert found.verdict == (
        "user/csv: no engine checked against the reference (not compared: timeout ran over 120 s)"
    )
