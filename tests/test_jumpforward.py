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


def _jumpforward_argv(reports: Path, run: str, *extra: str) -> list[str]:
    return [
        "jumpforward",
        "--vocab",
        "synthetic-1000-0",
        "--engines",
        "tokensdfa,llguidance,slow",  # two with forced texts, cross-checked; one slow
        "--corpus",
        "outlines-bench",
        "--paths",
        "1",
        "--reports-dir",
        str(reports),
        "--run",
        run,
        *extra,
    ]


def test_jumpforward_resume_stores_each_cell_once_and_matches_one_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted after a cell (Ctrl-C) and resumed, a jump-forward run measures only
    the cells not stored, each once, and reports what the same run in one go reports."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from harness.cli import main
    from harness.store import RunKind, Store

    tests = Path(__file__).resolve().parent
    monkeypatch.setenv("TOKENSIEVE_EXTRA_ENGINES", "slow=test_runner:SlowEngine")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tests), str(tests.parent)]))
    assert main(_jumpforward_argv(tmp_path, "whole")) == 0

    def stored() -> int:
        try:
            with sqlite3.connect(tmp_path / "results.sqlite") as con:
                query = "SELECT count(*) FROM jumpforward_cells WHERE run = 'part'"
                return int(con.execute(query).fetchone()[0])
        except sqlite3.OperationalError:
            return 0

    argv = [sys.executable, "-m", "harness.cli", *_jumpforward_argv(tmp_path, "part")]
    first = subprocess.Popen(
        argv,
        cwd=tests.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while stored() < 1:
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=60)
    assert first.returncode == 130, err
    assert "continue with: tokensieve jumpforward --resume --run part" in out
    assert err.strip().splitlines()[-1] == "tokensieve jumpforward: interrupted"
    assert not (tmp_path / "part" / "jumpforward.json").exists()
    kept = stored()
    assert 1 <= kept < 9

    assert main(_jumpforward_argv(tmp_path, "part", "--resume")) == 0
    with Store(tmp_path / "results.sqlite", readonly=True) as store:
        cells = store.outcome_cells(RunKind.JUMPFORWARD, "part")
        sessions = store.sessions("part", RunKind.JUMPFORWARD)
    keys = [(c.spec_id, c.vocab) for c in cells]
    assert len(keys) == len(set(keys)) == 9
    assert [(s.status, s.measured) for s in sessions] == [
        ("interrupted", kept),
        ("complete", 9 - kept),
    ]
    whole = json.loads((tmp_path / "whole" / "jumpforward.json").read_text())
    part = json.loads((tmp_path / "part" / "jumpforward.json").read_text())
    for key in ("summary", "paths", "forced_text_disagreements", "states_compared", "skipped"):
        assert part[key] == whole[key], key
    assert whole["summary"] and whole["states_compared"] > 0
    assert "<table" in (tmp_path / "part" / "jumpforward.html").read_text()


def test_jumpforward_resume_without_a_run_is_one_line(tmp_path: Path) -> None:
    import io
    import sys

    from harness.cli import main
    from harness.store import Store

    for extra, expected in (
        ([], "--resume: no results database at "),  # nothing created (issue 41)
        ([], "--resume: no jumpforward run recorded in "),
        (["--run", "nope"], "no jumpforward run 'nope' to resume in "),
    ):
        err, saved = io.StringIO(), sys.stderr
        sys.stderr = err
        try:
            code = main(["jumpforward", "--resume", "--reports-dir", str(tmp_path), *extra])
        finally:
            sys.stderr = saved
        lines = err.getvalue().strip().splitlines()
        assert code == 2 and len(lines) == 1 and expected in lines[0], lines
        Store(tmp_path / "results.sqlite").close()  # a store without the run, from here on
