"""The differ, its triage rules, the minimizer, repro scripts, isolation and `tokensieve
diff` end to end."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness import engines
from harness.cli import main
from harness.diff.findings import repro
from harness.diff.findings.records import BugRecord, CellRow, FindingRecord
from harness.diff.judge.signatures import passes_through_match, spells_surrogate
from harness.diff.judge.triage import triage
from harness.diff.judge.view import StateView
from harness.diff.shrink.minimize import minimize, tiny_vocabulary
from harness.diff.walk.differ import Differ
from harness.diff.walk.plan import WalkPlan
from harness.engines.base import Engine
from harness.engines.naive import NaiveEngine
from harness.language.regex_syntax import ascii_classes, uses_class_escapes
from harness.spec import Spec
from harness.vocab import synthetic

tokensdfa = pytest.importorskip("tokensdfa")

VOCAB = synthetic(1000, seed=7)


def _available(name: str) -> Engine:
    engine = engines.get(name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")
    return engine


# --- triage rules ------------------------------------------------------------------------


def test_ascii_classes_rewrites_inside_and_outside_brackets() -> None:
    assert ascii_classes(r"\d+") == "[0-9]+"
    assert ascii_classes(r"[\d.]") == "[0-9.]"
    assert ascii_classes(r"\\d\[\d\]") == r"\\d\[[0-9]\]"
    assert ascii_classes(r"\S", {"s": "x "}) == "[^x ]"
    assert uses_class_escapes(r"a\w") and not uses_class_escapes(r"a\\w\.")
    with pytest.raises(ValueError):
        ascii_classes(r"[\D]")


def test_final_state_exit_and_surrogate_shapes() -> None:
    dfa = tokensdfa.ByteDfa(r"a(\.a)*")
    assert passes_through_match(dfa, b"a", b".a")  # "a" already matches
    assert not passes_through_match(dfa, b"", b"a")
    assert spells_surrogate(b'"\xed', b"\xa0")
    assert spells_surrogate(b"", b"\xed\xbf")
    assert not spells_surrogate(b"\xed", b"\x9f")


def _view(engine: Engine, **kw: object) -> StateView:
    base: dict[str, object] = dict(
        engine=engine,
        tokens=[b"<eos>", b"a", b".", b".a"],
        prefix=b"a",
        expected=frozenset({2, 3}),
        actual=frozenset({2, 3}),
        accepting_expected=True,
        accepting_actual=True,
        forced=b"",
        dfa=tokensdfa.ByteDfa(r"a(\.a)*"),
        dotall_dfa=None,
        policy_reference={},
    )
    base.update(kw)
    tokens = base["tokens"]
    base.setdefault("vocab", tiny_vocabulary(tokens[1:]))  # type: ignore[index]
    return StateView(**base)  # type: ignore[arg-type]


def test_triage_policy_must_explain_the_whole_difference() -> None:
    llg = engines.get("llguidance")  # canonical_forced
    forced = _view(llg, accepting_expected=False, accepting_actual=False, forced=b".a")
    subset = forced.__class__(**{**forced.__dict__, "actual": frozenset({3})})
    assert triage(subset).kind == "policy" and triage(subset).rule == "canonical-forced"
    # an extra token is not explained by canonical tokenization
    extra = forced.__class__(**{**forced.__dict__, "actual": frozenset({1, 3})})
    assert triage(extra).kind == "bug"
    # nothing forced: no policy applies
    unforced = forced.__class__(**{**subset.__dict__, "forced": b""})
    assert triage(unforced).kind == "bug"
    # an empty mask is a dead end, never a policy
    empty = forced.__class__(**{**forced.__dict__, "actual": frozenset()})
    assert triage(empty).kind == "bug"


def test_triage_ascii_rule_needs_an_exact_match_with_the_policy_reference() -> None:
    xgr = engines.get("xgrammar")
    view = _view(
        xgr, actual=frozenset({2}), policy_reference={"ascii-classes": (frozenset({2}), True)}
    )
    assert triage(view).rule == "ascii-classes"
    off = _view(
        xgr, actual=frozenset({2}), policy_reference={"ascii-classes": (frozenset({3}), True)}
    )
    assert triage(off).kind == "bug"
    # an engine with Unicode classes cannot claim the ASCII policy
    oc = _view(
        engines.get("outlines-core"),
        actual=frozenset({2}),
        policy_reference={"ascii-classes": (frozenset({2}), True)},
    )
    assert triage(oc).kind == "bug"


def test_triage_utf8_tokens_only_and_eager_end() -> None:
    """lm-format-enforcer may drop exactly the tokens that are not UTF-8 on their own;
    Formatron may end at a complete non-empty match. Anything more is a bug."""
    lmfe = engines.get("lm-format-enforcer")
    tokens = [b"<eos>", b"a", b"\xc3", b"\xc3\xa9", b"b"]
    view = _view(
        lmfe,
        tokens=tokens,
        dfa=tokensdfa.ByteDfa("a(é|b)*"),
        expected=frozenset({2, 3, 4}),
        actual=frozenset({3, 4}),
    )
    assert triage(view).rule == "utf8-tokens-only", triage(view)
    assert triage(replace(view, actual=frozenset({4}))).kind == "bug"
    assert triage(replace(view, accepting_actual=False)).kind == "bug"
    # the same difference from an engine that does not declare the policy: a bug
    assert triage(replace(view, engine=engines.get("xgrammar"))).kind == "bug"

    formatron = engines.get("formatron")
    ended = _view(formatron, actual=frozenset(), eos_bit_actual=True)
    assert triage(ended).rule == "eager-end", triage(ended)
    assert triage(replace(ended, actual=frozenset({2}))).kind == "bug"
    # not a complete match: ending there is a bug
    open_ = replace(ended, accepting_expected=False)
    assert triage(open_).kind == "bug"
    # at the empty text: never EOS, the text tokens all kept
    start = _view(
        formatron,
        prefix=b"",
        dfa=tokensdfa.ByteDfa(r"(a(\.a)*)?"),
        expected=frozenset({1}),
        actual=frozenset({1}),
        accepting_actual=False,
        eos_bit_actual=False,
    )
    assert triage(start).rule == "eager-end", triage(start)


def test_triage_signatures() -> None:
    oc = engines.get("outlines-core")
    dropped = _view(oc, actual=frozenset({3}))
    assert triage(dropped).rule == "final-state-exit"
    # near miss: ".a" does not leave a match at its last byte, so dropping it too is not
    # this shape
    assert triage(_view(oc, actual=frozenset())).rule == "unclassified"
    accepting = _view(oc, accepting_actual=False)
    assert triage(accepting).rule == "eos-refused-at-match"
    other = _view(oc, prefix=b"", expected=frozenset({1}), actual=frozenset({2}))
    assert triage(other).rule == "unclassified"
    newline = _view(
        engines.get("xgrammar"),
        tokens=[b"<eos>", b"a", b"a\n", b"\n"],
        prefix=b"",
        expected=frozenset({1}),
        actual=frozenset({1, 2}),
        accepting_expected=False,
        accepting_actual=False,
        dfa=tokensdfa.ByteDfa("a.b"),
        dotall_dfa=tokensdfa.ByteDfa("(?s:a.b)"),
    )
    assert triage(newline).rule == "dot-matches-newline"


# --- the differ --------------------------------------------------------------------------


def _diff(name: str, regex: str, vocab=VOCAB):  # type: ignore[no-untyped-def]
    engine = _available(name)
    spec = Spec.regex(f"test/{regex}", regex)
    compiled = engine.compile(engine.prepare(vocab), spec)
    return Differ(spec.id, regex, vocab, {name: (engine, compiled)}).run(WalkPlan())


def test_tokensdfa_has_no_disagreement() -> None:
    for regex in [r"a(\.a)*", r"-?\d+(\.\d+)?", '"[^"]*"', "(cat|car)s?"]:
        result = _diff("tokensdfa", regex)
        assert result.disagreements == [], regex
        assert result.states["tokensdfa"] > 1


def test_differ_finds_known_bugs_and_policies() -> None:
    outlines = _diff("outlines-core", r"a(\.a)*")
    assert [(d.verdict, d.rule) for d in outlines.disagreements] == [("bug", "final-state-exit")]
    xgr = _diff("xgrammar", '"[^"]*"')
    assert {d.rule for d in xgr.disagreements if d.verdict == "bug"} == {"utf8-surrogate"}
    dot = _diff("xgrammar", "a.b")
    assert "dot-matches-newline" in {d.rule for d in dot.disagreements}
    ascii_only = _diff("xgrammar", r"\d+")
    assert ascii_only.disagreements
    assert {(d.verdict, d.rule) for d in ascii_only.disagreements} == {("policy", "ascii-classes")}


def test_xgrammar_space_class_is_as_declared() -> None:
    """The class table xgrammar's policy declares is what it does (fails on a change)."""
    engine = _available("xgrammar")
    chars = [chr(c) for c in range(0x3100) if not 0xD800 <= c < 0xE000]
    vocab = tiny_vocabulary([c.encode() for c in chars])
    compiled = engine.compile(engine.prepare(vocab), Spec.regex("test/space", r"\s"))
    import numpy as np

    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    compiled.matcher().fill_mask(mask)
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")[: vocab.size]
    allowed = {chars[i - 1] for i in np.flatnonzero(bits) if i}
    assert allowed == set("\t\n\x0b\x0c\r \xa0")


# --- minimizer and repros ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "regex", "rule"),
    [
        ("outlines-core", r"-?\d+(\.\d+)?", "final-state-exit"),
        ("xgrammar", '"[^"]*"', "utf8-surrogate"),
    ],
)
def test_minimized_repro_reproduces_on_its_own(
    name: str, regex: str, rule: str, tmp_path: Path
) -> None:
    result = _diff(name, regex)
    bug = next(d for d in result.disagreements if d.rule == rule)
    m = minimize(bug, _available(name), VOCAB)
    assert m is not None and m.rule == rule
    assert len(m.tokens) <= 10
    assert len(m.prefix) <= len(bug.prefix)
    assert set(m.expected) != set(m.actual)
    found = repro.witnesses(m)
    text = repro.explanation(m, found)
    path = tmp_path / "repro.py"
    path.write_text(repro.script(m, found, f"{name} {rule}", text))
    reproduced, output = repro.run(path)
    assert reproduced, output
    source = path.read_text()
    assert "tokensieve" not in source.split('"""', 2)[2]  # no project import in the code
    assert "harness" not in source


def test_repro_reports_fixed_when_engine_agrees(tmp_path: Path) -> None:
    """A repro whose expected mask is what the engine gives says FIXED and exits 0."""
    result = _diff("outlines-core", r"a(\.a)*")
    m = minimize(result.disagreements[0], _available("outlines-core"), VOCAB)
    assert m is not None
    agreeing = m.__class__(**{**m.__dict__, "expected": m.actual})
    path = tmp_path / "fixed.py"
    path.write_text(repro.script(agreeing, {}, "t", "t"))
    reproduced, output = repro.run(path)
    assert not reproduced and "FIXED" in output


# --- the command -------------------------------------------------------------------------


def test_diff_command_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _available("outlines-core")
    code = main(
        [
            "diff",
            "--vocab",
            "gpt2",
            "--engines",
            "outlines-core,tokensdfa",
            "--corpus",
            "outlines-bench",
            "--limit-specs",
            "2",
            "--walks",
            "2",
            "--cover",
            "40",
            "--reports-dir",
            str(tmp_path),
            "--run",
            "t",
        ]
    )
    assert code == 0
    data = json.loads((tmp_path / "t" / "diff.json").read_text())
    assert data["complete"] and len(data["cells"]) == 2
    engines_seen = {r["engine"] for r in data["summary"]}
    assert {"outlines-core", "tokensdfa"} <= engines_seen
    tdfa = next(r for r in data["summary"] if r["engine"] == "tokensdfa")
    assert tdfa["bug_states"] == 0 and tdfa["states"] > 0
    # the serving-protocol walks run by default (4 per engine and spec), counted
    assert data["options"]["protocol_walks"] == 4
    for row in data["summary"]:
        assert row["protocol_walks"] == 2 * 4 and row["protocol_ops"] > 2 * 4
    assert tdfa["protocol_bugs"] == 0
    # the records diff.json lists read back as written, every key in its place
    for key, record in (("findings", FindingRecord), ("bugs", BugRecord), ("cells", CellRow)):
        for raw in data[key]:
            assert list(record.from_json(raw).to_json().items()) == list(raw.items())
    for f in map(FindingRecord.from_json, data["findings"]):
        assert f.engine == "outlines-core"
        if f.repro:
            assert (tmp_path / "t" / "findings" / f.repro).exists()
            assert f.reproduces is True, f.repro_output
    assert (tmp_path / "t" / "diff.html").read_text().count("<table>") >= 2


def test_diff_protocol_walks_turn_off(tmp_path: Path) -> None:
    args = ["diff", "--vocab", "gpt2", "--engines", "tokensdfa", "--corpus", "outlines-bench"]
    args += ["--limit-specs", "1", "--walks", "1", "--cover", "10", "--protocol-walks", "0"]
    assert main([*args, "--reports-dir", str(tmp_path), "--run", "off"]) == 0
    data = json.loads((tmp_path / "off" / "diff.json").read_text())
    assert data["options"]["protocol_walks"] == 0
    assert [row["protocol_walks"] for row in data["summary"]] == [0]


def test_diff_command_unknown_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--engines", "no-such-engine"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-engine" in err[0]


def _build_index() -> int:
    vocab = tokensdfa.Vocabulary([b"</s>", b"a", b"b"], 0, [])
    return int(tokensdfa.Index("(ab)+", vocab).num_states)


def _build_in_child(send: object) -> None:
    send.send(_build_index())  # type: ignore[attr-defined]


def test_index_builds_in_a_child_forked_after_a_build() -> None:
    """A child forked after this process built an index (and so started its pool) must
    still build: rayon's global pool would leave it waiting forever. tokensieve itself
    spawns its workers, but a user of the `tokensdfa` module may well fork."""
    import multiprocessing as mp

    expected = _build_index()
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_build_in_child, args=(send,))
    child.start()
    assert recv.poll(60), "the forked child never finished building"
    assert recv.recv() == expected
    child.join(10)


def test_schema_without_converted_regex_still_gets_instance_checks() -> None:
    """With no converted regex (a schema whose text passes the size limit), the native
    engines and tokensdfa-lazy, which compiles the schema as a tree, face the instances;
    the eager index, which needs the regex text, does not."""
    from harness.diff.run.service import InstancePlan, diff_cell

    chosen = [_available("llguidance"), engines.get("tokensdfa-lazy"), engines.get("tokensdfa")]
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    spec = Spec.schema("test/no-regex", schema)
    plan = InstancePlan(valid=({"n": 1},), invalid=({"n": "x"},), samples=2, seed=0)
    prepared = {e.name: e.prepare(VOCAB) for e in chosen}
    outcome = diff_cell(spec, None, VOCAB, chosen, prepared, WalkPlan(), True, plan)
    assert outcome.diff.disagreements == []
    assert [(c.engine, c.valid, c.invalid, c.samples) for c in outcome.instances] == [
        ("llguidance", 1, 1, 2),
        ("tokensdfa-lazy", 1, 1, 2),
    ]
    assert all(c.false_rejections == c.false_acceptances == 0 for c in outcome.instances)


class HangingEngine(NaiveEngine):
    """The reference, except that compiling a regex with a `c` in it never ends."""

    name = "hang"

    def compile(self, prepared: Any, spec: Spec) -> Any:
        if "c" in spec.text:
            time.sleep(3600)
        return super().compile(prepared, spec)


def test_an_engine_that_hangs_costs_only_its_own_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each engine has its own budget inside a cell: the hanging one is recorded as
    skipped with a timeout, the other's states and findings are kept."""
    tests = Path(__file__).resolve().parent
    where = [str(tests), str(tests.parent), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, where)))
    monkeypatch.setenv("TOKENSIEVE_EXTRA_ENGINES", "hang=test_diff:HangingEngine")
    args = ["diff", "--vocab", "synthetic-1000-7", "--engines", "hang,tokensdfa"]
    args += ["--regex", "a(b|c)+", "--timeout", "4", "--walks", "2", "--cover", "20"]
    assert main([*args, "--reports-dir", str(tmp_path), "--run", "h", "--no-minimize"]) == 0
    data = json.loads((tmp_path / "h" / "diff.json").read_text())
    (cell,) = data["cells"]
    assert cell["status"] == "ok"
    assert cell["skipped"]["hang"].startswith("timeout")
    assert cell["states"]["tokensdfa"] > 1


def _diff_args(reports: Path, run: str) -> list[str]:
    return [
        "diff",
        "--vocab",
        "synthetic-1000-7",
        "--engines",
        "outlines-core,tokensdfa",
        "--corpus",
        "outlines-bench",
        "--limit-specs",
        "3",
        "--walks",
        "2",
        "--cover",
        "40",
        "--reports-dir",
        str(reports),
        "--run",
        run,
    ]


def _diff_cells(db: Path, run: str) -> int:
    import sqlite3

    try:
        with sqlite3.connect(db) as con:
            query = "SELECT count(*) FROM diff_cells WHERE run = ?"
            return int(con.execute(query, (run,)).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_diff_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    """Killed after its first cell and resumed, a diff reports the same findings, repros
    and counts as the same diff run in one go."""
    import signal
    import subprocess
    import sys

    _available("outlines-core")
    assert main(_diff_args(tmp_path, "whole")) == 0
    root = Path(__file__).resolve().parents[1]
    argv = [sys.executable, "-m", "harness.cli", *_diff_args(tmp_path, "part")]
    first = subprocess.Popen(
        argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while _diff_cells(tmp_path / "results.sqlite", "part") < 1 and time.monotonic() < deadline:
        assert first.poll() is None
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert 1 <= _diff_cells(tmp_path / "results.sqlite", "part") < 3
    assert main([*_diff_args(tmp_path, "part"), "--resume"]) == 0

    def findings(run: str) -> dict[str, tuple[int, bool | None]]:
        data = json.loads((tmp_path / run / "diff.json").read_text())
        assert data["complete"]
        return {f["id"]: (f["occurrences"], f["reproduces"]) for f in data["findings"]}

    whole = json.loads((tmp_path / "whole" / "diff.json").read_text())
    part = json.loads((tmp_path / "part" / "diff.json").read_text())
    assert findings("part") == findings("whole")
    assert part["summary"] == whole["summary"]
    assert sorted((c["spec"], c["vocab"], c["status"]) for c in part["cells"]) == sorted(
        (c["spec"], c["vocab"], c["status"]) for c in whole["cells"]
    )
