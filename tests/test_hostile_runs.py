"""The stranger's probes of issue 41 that take a run: `check` interrupted and resumed,
a tokenizer file changed under a resumed run, a sparse or EOS-less tokenizer file, the
parallelism a run records, a diff-only run's report, an engine release with the package
index unreachable. (The probes of bad values: tests/test_hostile_inputs.py.)"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.test_bad_inputs import ROOT, one_line, tokensieve

REGEXES = ("--regex", "[a-z]+@[a-z]+", "--regex", "[0-9]{3}-[0-9]{4}", "--regex", "(ab|cd)+e")
ENGINES = ("--engines", "tokensdfa,tokensdfa-lazy")


def byte_level_tokenizer(path: Path, swap: tuple[str, str] | None = None) -> Path:
    """A byte-level BPE tokenizer.json: the 256 bytes and `<eos>` (id 256), written with
    the `tokenizers` package; `swap` exchanges the ids of two byte tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {char: n for n, char in enumerate(alphabet)}
    if swap is not None:
        a, b = swap
        vocab[a], vocab[b] = vocab[b], vocab[a]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(["<eos>"])
    tokenizer.save(str(path))
    return path


def _check(tmp_path: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "check", *argv, "--reports-dir", "r"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _interrupted(tmp_path: Path, run: str, how: signal.Signals) -> str:
    """A check stopped by `how` once its first cell is reported; its stderr."""
    first = _check(tmp_path, *REGEXES, "--vocab", "synthetic-1000-3", *ENGINES, "--run", run)
    assert first.stdout is not None
    for line in first.stdout:
        if line.startswith("  user/"):
            first.send_signal(how)
            break
    _, err = first.communicate(timeout=300)
    assert first.returncode == 130, err[-3000:]
    assert "Traceback" not in err, err
    return err


def test_an_interrupted_check_exits_130_and_resumes(tmp_path: Path) -> None:
    err = _interrupted(tmp_path, "c1", signal.SIGINT)
    assert "continue with: tokensieve check --resume --run c1" in err, err
    again = tokensieve(
        "check", *REGEXES, "--vocab", "synthetic-1000-3", *ENGINES, "--run", "c1",
        "--reports-dir", "r", cwd=tmp_path,
    )  # fmt: skip
    one_line(again, 2, "'c1' already exists", "pass --resume")
    given = tokensieve("check", "--resume", "--run", "c1", "--vocab", "gpt2", cwd=tmp_path)
    one_line(given, 2, "--resume", "drop --vocab")
    resumed = tokensieve(
        "check", "--resume", "--run", "c1", "--reports-dir", "r", "--format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert resumed.returncode in (0, 1) and "Traceback" not in resumed.stderr, resumed.stderr
    specs = json.loads(resumed.stdout)["specs"]
    assert [s["spec_id"] for s in specs] == ["user/regex#1", "user/regex#2", "user/regex#3"]
    assert all(e["status"] == "ok" for s in specs for e in s["engines"]), specs


def test_a_terminated_check_exits_130(tmp_path: Path) -> None:
    err = _interrupted(tmp_path, "c2", signal.SIGTERM)
    assert "tokensieve check --resume --run c2" in err, err


def test_a_tokenizer_file_changed_under_a_resumed_run_is_refused(tmp_path: Path) -> None:
    path = byte_level_tokenizer(tmp_path / "tokenizer.json")
    argv = ["--vocab", str(path), "--eos", "<eos>", "--regex", "a+b", "--engines", "tokensdfa"]
    first = tokensieve("bench", *argv, "--run", "v1", "--paths", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    same = tokensieve("bench", "--resume", "--run", "v1", "--no-report", cwd=tmp_path)
    assert same.returncode == 0 and "already measured" in same.stderr, same.stderr
    byte_level_tokenizer(path, swap=("a", "b"))
    changed = tokensieve("bench", "--resume", "--run", "v1", cwd=tmp_path)
    one_line(changed, 2, "--resume", str(path), "changed since run 'v1' began")


def test_vocab_takes_the_tokenizer_options(tmp_path: Path) -> None:
    path = byte_level_tokenizer(tmp_path / "tokenizer.json")
    one_line(tokensieve("vocab", str(path)), 2, "--eos")
    done = tokensieve("vocab", str(path), "--eos", "<eos>", "--vocab-size", "300")
    assert done.returncode == 0, done.stderr
    assert "256 b'<eos>'" in done.stdout and "padding ids           43" in done.stdout


def test_a_sparse_tokenizer_file_is_said_so(tmp_path: Path) -> None:
    path = byte_level_tokenizer(tmp_path / "tokenizer.json")
    config = json.loads(path.read_text())
    config["added_tokens"][0]["id"] = 1000  # <eos> far past the byte tokens
    path.write_text(json.dumps(config))
    env = {**os.environ, "TOKENSIEVE_CACHE": str(tmp_path / "cache")}
    done = tokensieve("vocab", str(path), "--eos", "<eos>", env=env)
    assert done.returncode == 0, done.stderr
    assert "warning" in done.stderr and "744 of its 1,001 ids" in done.stderr, done.stderr
    assert "padding ids           744" in done.stdout


def test_a_run_records_the_cells_it_runs_at_once(tmp_path: Path) -> None:
    done = tokensieve(
        "bench", "--regex", "a+", "--engines", "naive,tokensdfa", "--vocab", "synthetic-1000-3",
        "--paths", "1", "--jobs", "10000", "--no-report", "--reports-dir", "r", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "jobs 2," in done.stderr, done.stderr
    with sqlite3.connect(tmp_path / "r" / "results.sqlite") as db:
        assert db.execute("SELECT jobs FROM sessions").fetchall() == [(2,)]


def test_report_of_a_diff_only_run(tmp_path: Path) -> None:
    argv = ["--regex", "a+b", "--engines", "tokensdfa", "--vocab", "synthetic-1000-3"]
    diff = tokensieve("diff", *argv, "--run", "d1", "--reports-dir", "r", cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr[-2000:]
    (tmp_path / "r" / "d1" / "diff.html").unlink()
    done = tokensieve("report", "d1", "--reports-dir", "r", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "diff run d1:" in done.stdout and (tmp_path / "r" / "d1" / "diff.html").is_file()
    one_line(tokensieve("report", "nope", "--reports-dir", "r", cwd=tmp_path), 2, "known: d1")


def test_an_unreachable_package_index_is_the_environment(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TOKENSIEVE_CACHE": str(tmp_path / "cache"),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_RETRIES": "1",
    }
    done = tokensieve(
        "bench", "--engines", "llguidance@0.0.1", "--regex", "a+", "--vocab", "synthetic-1000-3",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    one_line(done, 1, "llguidance@0.0.1", "package index is unreachable")
