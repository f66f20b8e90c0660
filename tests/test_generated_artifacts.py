"""Data never becomes code: every kind of script, page and table tokensieve writes, fed
hostile text in every field that comes from a corpus, an instance or an engine.

Each payload tries to end the construct it is pasted into (triple quotes of both kinds,
a trailing backslash, every Unicode line break, NUL, `</script>`, a lone surrogate) and
then touch a canary file. Every generated script must parse, run on its own, and leave
the canary untouched.
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import embed, report
from harness.diff.findings import instance_repro, repro
from harness.diff.findings.collector import Collector
from harness.diff.judge.instances import FALSE_ACCEPTANCE, FALSE_REJECTION, INVALID_OUTPUT
from harness.diff.shrink.minimal import Minimal
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.diff.walk.disagreement import Disagreement

LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def payloads(canary: Path) -> list[str]:
    touch = f"__import__('pathlib').Path({str(canary)!r}).touch()"
    found = [
        f'"""+{touch}+"""',
        f"'''+{touch}+'''",
        f'"""\n{touch}\n"""',
        "trailing backslash\\",
        "nul\x00byte",
        "</script><script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '=HYPERLINK("http://x")',
    ]
    found += [f"{br}{touch}{br}# {br}" for br in LINE_BREAKS]
    return found


def text_payloads(canary: Path) -> list[str]:
    """For fields that are only ever text (titles, explanations, messages): also a lone
    surrogate, which UTF-8 cannot encode."""
    return [*payloads(canary), "lone \udcff surrogate"]


def regex_of(texts: list[str]) -> str:
    """An alternation matching each text literally, in the dialect both the Rust engines
    and Python's `re` read: ASCII punctuation and controls as `\\xHH`."""

    def lit(text: str) -> str:
        return "".join(c if c.isalnum() or ord(c) > 0x7F else f"\\x{ord(c):02X}" for c in text)

    return "(?:" + "|".join(lit(t) for t in texts) + ")"


def run_script(path: Path) -> subprocess.CompletedProcess[str]:
    source = path.read_text(encoding="utf-8")
    ast.parse(source)
    return subprocess.run(
        [sys.executable, "-I", path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=300,
    )


MASK_REPRO_ENGINES = [
    "formatron",
    "llguidance",
    "lm-format-enforcer",
    "outlines-core",
    "tokensdfa",
    "tokensdfa-canonical",
    "tokensdfa-lazy",
    "xgrammar",
]


@pytest.mark.parametrize("engine", MASK_REPRO_ENGINES)
def test_mask_repro_scripts_keep_data_out_of_code(engine: str, tmp_path: Path) -> None:
    """Also a padding id whose bytes are the text the regex wants: each engine's repro
    must build its vocabulary with SPECIAL, so the padding id is never allowed."""
    canary = tmp_path / "CANARY"
    texts = payloads(canary)
    hostile = " ".join(text_payloads(canary))
    tokens = [b"<eos>", *(t.encode("utf-8") for t in texts), b"\xff\xfe", b"a", b"\\"]
    tokens.append(tokens[1])  # padding: special, never text
    minimal = Minimal(
        engine=engine,
        version=hostile,
        regex=regex_of(texts[:3]),
        rule=hostile,
        tokens=tuple(tokens),
        prefix_ids=(),
        expected=(1, 2, 3),
        actual=(1,),
        accepting_expected=False,
        accepting_actual=False,
        what="mask",
        special=(len(tokens) - 1,),
    )
    path = tmp_path / f"{engine}.py"
    path.write_text(repro.script(minimal, {}, title=hostile, paragraph=hostile), encoding="utf-8")
    done = run_script(path)
    assert not canary.exists(), done.stdout + done.stderr
    assert "REPRODUCED" in done.stdout or "FIXED" in done.stdout, done.stderr[-2000:]
    engine_line = next(line for line in done.stdout.splitlines() if line.startswith("engine:"))
    assert engine_line.count(repr(tokens[1])) <= 1, done.stdout  # never the padding id


def hostile_schema(texts: list[str]) -> dict[str, object]:
    return {
        "type": "object",
        "title": " ".join(texts),
        "description": texts[0],
        "properties": {t: {"type": "string", "enum": texts, "title": t} for t in texts},
    }


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        (target, kind)
        for target in ("formatron", "llguidance", "lm-format-enforcer", "naive", "xgrammar")
        for kind in (FALSE_REJECTION, FALSE_ACCEPTANCE, INVALID_OUTPUT)
        if kind == FALSE_ACCEPTANCE or target == "llguidance"
    ],
)
def test_instance_repro_scripts_keep_data_out_of_code(
    target: str, kind: str, tmp_path: Path
) -> None:
    canary = tmp_path / "CANARY"
    texts = payloads(canary)
    hostile = " ".join(text_payloads(canary))
    schema = hostile_schema(texts)
    text = json.dumps({texts[0]: texts[1]}, ensure_ascii=False)
    found = instance_repro.InstanceRepro(target, target, kind, schema, text, why=hostile)
    path = tmp_path / f"{target}-{kind}.py"
    path.write_text(
        instance_repro.script(found, title=hostile, paragraph=hostile), encoding="utf-8"
    )
    done = run_script(path)
    assert not canary.exists(), done.stdout + done.stderr
    assert "REPRODUCED" in done.stdout or "FIXED" in done.stdout, done.stderr[-2000:]


def test_findings_markdown_and_html_escape_everything(tmp_path: Path) -> None:
    """The collector's whole path (explanation, script, .md, HTML table) on a real
    TokensDFA-canonical case whose regex, prefix and tokens carry the payloads."""
    canary = tmp_path / "CANARY"
    texts = payloads(canary)
    regex = regex_of(texts[:2])
    tokens = [t.encode("utf-8") for t in texts[:2]]
    vocab = tiny_vocabulary(tokens)
    hostile = " ".join(text_payloads(canary))
    d = Disagreement(
        engine="tokensdfa",
        version=hostile,
        spec_id=hostile,
        vocab=hostile,
        regex=regex,
        prefix_ids=(),
        prefix=b"",
        reference_only=(1,),
        engine_only=(),
        n_reference_only=1,
        n_engine_only=0,
        accepting_expected=False,
        accepting_actual=False,
        verdict="bug",
        rule="unclassified",
        why=hostile,
        agrees_with_tokensdfa=True,
    )
    minimal = Minimal(
        engine="tokensdfa",
        version=hostile,
        regex=regex,
        rule="unclassified",
        tokens=tuple(vocab.tokens),
        prefix_ids=(),
        expected=(1, 2),
        actual=(2,),
        accepting_expected=False,
        accepting_actual=False,
        what="mask",
    )
    collector = Collector()
    collector.add(d, minimal, vocab.tokens)
    collector.add(d, None, vocab.tokens)  # an unminimized one: explanation only
    collector.write_repros(tmp_path / "findings")
    for finding in collector.findings.values():
        assert finding.minimal is None or finding.reproduces is not None
    assert not canary.exists()
    for md in (tmp_path / "findings").glob("*.md"):
        body = md.read_text(encoding="utf-8")
        paragraph = body.split("\n\n")[1]
        assert "<" not in paragraph and not any(br in paragraph for br in LINE_BREAKS)
    data = {"findings": [f.row() for f in collector.findings.values()]}
    page = report.diff_page({**data, "options": {"vocab": hostile, "corpus": hostile}}, hostile)
    assert "<script>" not in page and "<img" not in page


def test_csv_cells_cannot_be_formulas(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerow([embed.csv_cell(v) for v in ("=1+1", "+x", "@y", -3, None, "ok")])
    row = next(csv.reader(path.open(encoding="utf-8")))
    assert row == ["'=1+1", "'+x", "'@y", "-3", "", "ok"]


@pytest.mark.parametrize("br", [*LINE_BREAKS, "\x00", "\udcff"])
def test_comment_and_markdown_stay_on_one_line(br: str) -> None:
    text = f"a{br}import os{br}b"
    line = embed.comment(text)
    assert line.startswith("# ") and line.splitlines() == [line]
    line.encode("utf-8")
    ast.parse(line + "\nx = 1\n")
    md = embed.markdown_text(f"<b>{text}</b>")
    assert md.splitlines() == [md] and "<" not in md
