"""Jump-forward: forced texts, their triage across engines, and the decoding simulation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tokensdfa

from harness import engines
from harness.jumpforward.analysis import analyze_path, complete_utf8, simulate, triage_forced
from harness.spec import Spec
from harness.vocab import synthetic

VOCAB = synthetic(600, seed=3)


@pytest.fixture(scope="module")
def tokensdfa_engine() -> tuple[engines.Engine, object]:
    engine = engines.get("tokensdfa")
    return engine, engine.prepare(VOCAB)


def _forced_after(engine_and_vocab, regex: str, text: str) -> bytes:
    engine, prepared = engine_and_vocab
    matcher = engine.compile(prepared, Spec.regex("t/jf", regex)).matcher()
    for t in VOCAB.encode(text):
        assert matcher.advance(t)
    return matcher.forced_text()


@pytest.mark.parametrize(
    ("regex", "prefix", "forced"),
    [
        ("ab(cd)?ef", "", b"ab"),  # the optional part branches right after "ab"
        ("ab(cd)?ef", "abc", b"def"),
        ("x(yz)?", "x", b""),  # a full match: EOS competes
        ("(alpha|alpine)!", "", b"alp"),  # shared prefix, then a branch
        ("(alpha|alpine)!", "alph", b"a!"),
        ("né(é|e)", "", "né".encode()),  # multi-byte characters
        ("[ab]c", "", b""),
    ],
)
def test_forced_text_of_tokensdfa(tokensdfa_engine, regex: str, prefix: str, forced: bytes) -> None:
    assert _forced_after(tokensdfa_engine, regex, prefix) == forced


def test_forced_text_agrees_with_the_reference_mask(tokensdfa_engine) -> None:
    """Every token the reference allows is consistent with the forced text."""
    regex = r'\{"k": (true|false), "v": [0-9]+\}'
    native = tokensdfa.Vocabulary(list(VOCAB.tokens), VOCAB.eos_id, sorted(VOCAB.special_ids))
    naive = tokensdfa.NaiveIndex(regex, native)
    fast = tokensdfa.Index(regex, native)
    states = [(naive.initial_state, fast.initial_state)]
    seen = set()
    while states:
        n, f = states.pop()
        if n in seen:
            continue
        seen.add(n)
        forced = fast.forced_bytes(f)
        allowed = [VOCAB.tokens[t] for t in naive.allowed(n) if t != VOCAB.eos_id]
        assert all(tok[: len(forced)] == forced[: len(tok)] for tok in allowed)
        assert not (forced and naive.is_accepting(n))
        states += [
            (naive.next_state(n, t), fast.next_state(f, t))
            for t in naive.allowed(n)
            if t != VOCAB.eos_id
        ]
    assert len(seen) > 10


def test_triage_separates_shorter_granularity_and_overreach() -> None:
    allowed = [b"ab", b"abc", b"a"]
    verdicts = triage_forced({"ours": b"abcd", "peer": b"ab"}, allowed, accepting=False)
    assert verdicts == {"ours": "agree", "peer": "shorter"}
    verdicts = triage_forced({"ours": b"a\xc3", "xg": b"a"}, [b"a\xc3"], accepting=False)
    assert verdicts["xg"] == "char-granularity"
    verdicts = triage_forced({"ours": b"", "bad": b"b"}, [b"a", b"b"], accepting=False)
    assert verdicts["bad"] == "overreach"
    assert triage_forced({"x": b"a", "y": b""}, [b"a"], accepting=True)["x"] == "overreach"


def test_complete_utf8_cuts_a_split_character() -> None:
    assert complete_utf8("aé".encode()[:-1]) == b"a"
    assert complete_utf8("aé".encode()) == "aé".encode()


def test_simulation_saves_the_forced_literal(tokensdfa_engine) -> None:
    engine, prepared = tokensdfa_engine
    regex = r'\{"name": "[a-z]+"\}'
    text = '{"name": "bob"}'
    compiled = engine.compile(prepared, Spec.regex("t/sim", regex))
    steps, jumps, _, note = simulate(compiled, VOCAB, text.encode(), retokenize=False)
    assert note == ""
    assert jumps >= 1  # at least the opening literal
    plain = len(VOCAB.encode(text)) + 1
    assert steps < plain
    result = analyze_path("tokensdfa", compiled, VOCAB, "t/sim", text, VOCAB.encode(text))
    assert result is not None and result.note == ""
    assert result.forced_text > 0 and result.saved_naive == plain - steps


def test_engines_without_forced_text_are_not_analyzed() -> None:
    engine = engines.get("naive")
    compiled = engine.compile(engine.prepare(VOCAB), Spec.regex("t/n", "ab"))
    assert analyze_path("naive", compiled, VOCAB, "t/n", "ab", VOCAB.encode("ab")) is None


def test_report_embeds_the_jumpforward_summary(tmp_path) -> None:
    from harness.report import jumpforward_section

    assert "Not measured" in "".join(jumpforward_section(tmp_path))
    row = {"set": "s", "engine": "tokensdfa", "forced_text_pct": 12.5}
    (tmp_path / "jumpforward.json").write_text(
        json.dumps({"summary": [row], "maskbench": [], "states_compared": 7})
    )
    page = "".join(jumpforward_section(tmp_path))
    assert "<td>12.5</td>" in page and "7 states compared" in page


def test_jumpforward_command_end_to_end(tmp_path: Path) -> None:
    """Every (engine, spec) measured and cross-checked in a worker; the files written and
    the summary printed."""
    from harness.cli import main

    code = main(
        [
            "jumpforward",
            "--vocab",
            "synthetic-1000-0",
            "--engines",
            "tokensdfa,llguidance",
            "--corpus",
            "outlines-bench",
            "--limit-specs",
            "2",
            "--paths",
            "1",
            "--reports-dir",
            str(tmp_path),
            "--run",
            "j",
        ]
    )
    assert code == 0
    data = json.loads((tmp_path / "j" / "jumpforward.json").read_text())
    assert {r["engine"] for r in data["summary"]} == {"tokensdfa", "llguidance"}
    assert data["states_compared"] > 0 and not data["skipped"]
    assert "<table" in (tmp_path / "j" / "jumpforward.html").read_text()
