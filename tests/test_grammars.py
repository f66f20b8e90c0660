"""Grammars as specs, end to end: a user's grammar files and entries read with their
notation, bad grammars refused in one line (exit 2), the reference's work budget ending a
cell as `timeout`, every grammar engine compiling the edge cases, and a diff of a grammar
finding, minimizing and reproducing a real engine's bug."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness import engines, frames, vocab
from harness.corpora import grammars, user
from harness.diff.findings.collector import Collector
from harness.diff.run.protocol import InstancePlan
from harness.diff.run.service import diff_cell
from harness.diff.walk.plan import WalkPlan
from harness.engines.rust_index import IndexMatcher
from harness.errors import BadInput, WorkBudget
from harness.language import grammar
from harness.language.reference import native_vocabulary
from harness.spec import Spec

ROOT = Path(__file__).resolve().parents[1]
EDGE = ROOT / "corpora" / "grammars"
TINY = 'root ::= "{" ws "\\"n\\":" ws num ws "}"\nnum ::= [0-9]+\nws ::= [ ]*\n'

pytest.importorskip("tokensdfa")


def test_grammar_files_are_read_with_their_notation(tmp_path: Path) -> None:
    files = {"a.gbnf": TINY, "b.lark": 'start: "x"+\n', "c.ebnf": 'root ::= "y"\n'}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found = {e.spec.id: e.spec for e in user.load(sorted(tmp_path.iterdir()))}
    assert {s.notation for s in found.values()} == {"gbnf", "lark", "ebnf"}
    assert all(s.kind == "grammar" for s in found.values())
    assert found["user/a"].text == TINY


def test_grammar_entries_name_their_notation_and_examples_are_checked(tmp_path: Path) -> None:
    good = [{"id": "x", "grammar": 'start: "a" "b"?\n', "notation": "lark", "valid": ["ab"]}]
    (tmp_path / "g.json").write_text(json.dumps(good))
    (entry,) = user.load([tmp_path / "g.json"])
    assert (entry.spec.notation, entry.spec.examples) == ("lark", ("ab",))
    bad = [{"grammar": 'root ::= "a"\n', "valid": ["b"]}]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(BadInput, match="example 'b' is not a sentence"):
        user.load([tmp_path / "bad.json"])
    (tmp_path / "n.json").write_text(json.dumps([{"grammar": "x", "notation": "bnf"}]))
    with pytest.raises(BadInput, match="unknown grammar notation 'bnf'"):
        user.load([tmp_path / "n.json"])


def test_a_stored_grammar_entry_keeps_its_notation() -> None:
    (entry,) = user.from_json(user.to_json(grammars.entries()[:1]))
    assert entry.spec == grammars.entries()[0].spec


BAD = {
    "unknown.gbnf": ("root ::= foo\n", "line 1: undefined rule `foo`"),
    "cycle.gbnf": ("root ::= a\na ::= a\n", "rule a only recurses"),
    "empty.gbnf": ("root ::= [^\\x00-\\U0010FFFF]\n", "matches nothing"),
    "syntax.gbnf": ('root ::= "a" (\n', "line 1:"),
    "nostart.lark": ('begin: "a"\n', "start"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_grammar_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    text, message = BAD[name]
    path = tmp_path / name
    path.write_text(text)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "harness.cli", "check", str(path)),
            *("--vocab", "synthetic-1000-3", "--engines", "xgrammar"),
            *("--reports-dir", str(tmp_path / "r")),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and message in lines[0], lines
    assert "Traceback" not in done.stderr


def test_a_ten_megabyte_grammar_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.gbnf"
    path.write_text('root ::= "a"\n# ' + "x" * (10 << 20) + "\n")
    with pytest.raises(BadInput, match="more than the 4,194,304 a grammar may have"):
        user.load([path])


def test_past_its_item_budget_the_reference_ends_the_cell_as_timeout() -> None:
    """A state needing more Earley items than the budget raises WorkBudget through the
    matcher (a cell records it as `timeout`), never a hang."""
    voc = vocab.load("gpt2")
    # nearly every token is live at the start: tens of thousands of items
    spec = Spec.grammar("t/budget", "root ::= [^\\x00]*\n", "gbnf")
    index = grammar.build(spec, native_vocabulary(voc), budget=1000)
    matcher = IndexMatcher(index, voc.eos_id, "naive", spec.id)
    with pytest.raises(WorkBudget, match="budget"):
        matcher.fill_mask(np.zeros(voc.mask_words, dtype=np.int32))


def test_every_grammar_engine_runs_the_edge_cases_and_a_hang_is_recorded(
    tmp_path: Path,
) -> None:
    """`bench` over the handwritten grammars with every grammar engine: each cell is `ok`
    except where the engine hangs, crashes, blows memory or refuses the grammar, and the
    run records each as such and goes on. Findings: llguidance 1.9.1 never returns from
    its first mask on `lexer-collision` (a grammar its greedy lexer makes empty);
    xgrammar 0.2.8 crashes (SIGSEGV) compiling `a ::= a{0,1}` (`optional-self`), where
    kbnf 0.4.2 panics or asks for about 95 TB; transformers-CFG 0.2.7 recurses without
    bound on left recursion (`left-recursion`, `ambiguous`) and on `optional-self`."""
    names = ["naive", "llguidance", "xgrammar", "formatron", "transformers-cfg"]
    present = [n for n in names if engines.get(n).available()[0]]
    files = sorted(str(p) for p in EDGE.iterdir() if grammar.notation_of(p) is not None)
    done = subprocess.run(
        [
            *(
                sys.executable,
                "-m",
                "harness.cli",
                "bench",
                *(arg for f in files for arg in ("--spec", f)),
            ),
            *("--vocab", "gpt2", "--engines", ",".join(present), "--timeout", "20"),
            *("--reports-dir", str(tmp_path / "r"), "--run", "edge", "--no-report"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    cells = frames.cells(tmp_path / "r", "edge")
    statuses = {(r.engine, r.spec.split("/")[-1]): r.status for r in cells.itertuples()}
    assert len(statuses) == len(present) * len(files)
    expected = {
        ("llguidance", "lexer-collision"): {"timeout"},
        ("xgrammar", "optional-self"): {"crash"},
        # kbnf either panics (index out of bounds, reported as unsupported) or asks for
        # the 95 TB, by what the worker compiled before
        ("formatron", "optional-self"): {"oom", "unsupported"},
        ("transformers-cfg", "left-recursion"): {"unsupported"},
        ("transformers-cfg", "ambiguous"): {"unsupported"},
        ("transformers-cfg", "optional-self"): {"unsupported"},
    }
    failed = {k: v for k, v in statuses.items() if v != "ok"}
    assert set(failed) == set(expected) & set(statuses)
    assert all(v in expected[k] for k, v in failed.items()), failed


def test_a_diff_on_a_grammar_minimizes_and_reproduces_a_real_bug(tmp_path: Path) -> None:
    """xgrammar 0.2.8's Lark reader lets a raw newline into ESCAPED_STRING, which Lark's
    `common` library (and the reference) keep out of strings: a finding with a
    standalone repro."""
    engine = engines.get("xgrammar")
    if not engine.available()[0]:
        pytest.skip("xgrammar is not installed")
    voc = vocab.load("gpt2")
    spec = next(e.spec for e in grammars.entries() if e.spec.id == "grammars/edge-json-recursive")
    outcome = diff_cell(
        spec,
        None,
        voc,
        [engine],
        {engine.name: engine.prepare(voc)},
        WalkPlan(cover_states=200, random_walks=20, max_steps=20, seed=0),
        True,
    )
    found = [
        m for m in outcome.minimal.values() if m is not None and m.rule == "raw-control-in-string"
    ]
    assert found, [d.rule for d in outcome.diff.disagreements]
    index, minimal = next(
        (i, m)
        for i, m in outcome.minimal.items()
        if m is not None and m.rule == "raw-control-in-string"
    )
    # the grammar is shrunk too: a few of the JSON grammar's rules keep the bug showing
    assert minimal.notation == "lark" and len(minimal.grammar) < len(spec.text) / 2
    assert "%import common.ESCAPED_STRING" in minimal.grammar
    assert len(minimal.tokens) <= 10
    collector = Collector()
    collector.add(outcome.diff.disagreements[index], minimal, voc.tokens)
    collector.write_repros(tmp_path)
    assert [f.reproduces for f in collector.findings.values()] == [True]


def test_grammar_engines_are_judged_on_instances_and_their_bugs_become_findings() -> None:
    """transformers-CFG 0.2.7 refuses EOS after sentences of `nullable` ("yx": its
    `can_stop` looks at one parse stack only): the labelled valid texts it rejects are
    false rejections, explained as bugs by the differ's verdicts on their token paths,
    whose disagreements join the cell's findings."""
    engine = engines.get("transformers-cfg")
    if not engine.available()[0]:
        pytest.skip("transformers-cfg is not installed")
    voc = vocab.load("gpt2")
    entry = next(e for e in grammars.entries() if e.spec.id == "grammars/edge-nullable")
    outcome = diff_cell(
        entry.spec,
        None,
        voc,
        [engine],
        {engine.name: engine.prepare(voc)},
        WalkPlan(cover_states=50, random_walks=2, max_steps=8, seed=0),
        False,
        InstancePlan(entry.valid, entry.invalid, samples=2, seed=0),
    )
    (counts,) = outcome.instances
    assert counts.valid == len(entry.valid) and counts.invalid == len(entry.invalid)
    rejected = [f for f in counts.failures if f.kind == "false-rejection"]
    assert rejected and counts.false_rejections == len(rejected)
    assert all(f.policy is None and "EOS refused" in f.detail for f in rejected)
    paths = {d.prefix_ids for d in outcome.diff.disagreements if d.verdict == "bug"}
    assert any(tuple(voc.encode(f.text)) in paths for f in rejected)


def test_an_advance_repro_advances_the_token_it_was_found_on(tmp_path: Path) -> None:
    """transformers-CFG 0.2.7 on the tool-call grammar: after `"query":` its mask allows
    ` "…` but its step refuses it, while ` "` (a smaller id, also allowed) advances. The
    repro must advance ` "…`, the finding's token, not the smallest allowed one."""
    from harness.diff.findings import repro
    from harness.diff.shrink.minimal import Minimal

    engine = engines.get("transformers-cfg")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"transformers-cfg unavailable: {why}")
    grammar = (Path(__file__).parent.parent / "corpora/grammars/tool-call.gbnf").read_text()
    tokens = [
        b"<eos>",
        b"<tool_call>",
        b' {"',
        b"name",
        b'":',
        b' "',
        b"search",
        b'",',
        b"arguments",
        b"query",
        ' "…'.encode(),
    ]
    prefix = (
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        5,
        8,
        4,
        2,
        9,
        4,
    )  # <tool_call> {"name": "search", "arguments": {"query":
    m = Minimal(
        engine="transformers-cfg",
        version=engine.version(),
        regex="",
        rule="mask-advance-mismatch",
        tokens=tuple(tokens),
        prefix_ids=prefix,
        expected=(5, 10),
        actual=(5, 10),
        accepting_expected=False,
        accepting_actual=False,
        what="advance",
        advance_token=10,
        grammar=grammar,
        notation="gbnf",
    )
    # what the reference allows after the prefix and ` "…` (inside the string, as after
    # ` "`: a repro advancing ` "` instead would find that mask and say FIXED)
    from harness.diff.shrink.minimize import tiny_vocabulary
    from harness.language import grammar as language_grammar
    from harness.language import reference
    from harness.spec import Spec

    tiny = tiny_vocabulary(tokens[1:])
    index = language_grammar.build(
        Spec.grammar("t/tool-call", grammar, "gbnf"), reference.native_vocabulary(tiny)
    )
    state = reference.walk(index, (*prefix, 10))
    assert state is not None
    m = Minimal(**{**m.__dict__, "next_expected": tuple(int(t) for t in index.allowed(state))})
    path = tmp_path / "advance.py"
    path.write_text(repro.script(m, {}, "advance", "advance"))
    reproduced, output = repro.run(path)
    assert reproduced, output
