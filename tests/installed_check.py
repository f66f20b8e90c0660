"""tokensieve as a user installs it (`make wheel-check`, run by CI): the wheel maturin
built, installed into a fresh virtual environment with only the `llguidance` and `vocabs`
extras, run from a scratch directory far from any checkout.

Checks, each failing loudly: `harness` and `tokensdfa` come from that environment;
`tokensieve check` on a regex with tokensdfa, llguidance and xgrammar answers for the
first two, reports xgrammar unavailable with the one command that installs it, and exits
0; `tokensieve engines` lists xgrammar the same way; `tokensieve export` writes the
run's cells, which `harness.frames` and pandas read back.

Usage: python tests/installed_check.py VENV
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

INSTALL_XGRAMMAR = "pip install 'tokensieve[xgrammar]'"


def run(argv: list[str], cwd: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        raise SystemExit(f"{argv}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr}")
    return done


def main(venv: Path) -> None:
    python, tokensieve = str(venv / "bin" / "python"), str(venv / "bin" / "tokensieve")
    with tempfile.TemporaryDirectory() as scratch:
        where = run(
            [
                python,
                "-c",
                "import harness, tokensdfa; print(harness.__file__, tokensdfa.__file__)",
            ],
            scratch,
        ).stdout.split()
        assert all(w.startswith(str(venv)) for w in where), where
        done = run(
            [tokensieve, "check", "--regex", r"[a-z]+@[a-z]+\.com", "--vocab", "gpt2",
             "--engines", "tokensdfa,llguidance,xgrammar", "--format", "json",
             "--reports-dir", "r", "--run", "installed"],
            scratch,
        )  # fmt: skip
        data = json.loads(done.stdout)
        (spec,) = data["specs"]
        answered = {e["engine"]: e["outcome"] for e in spec["engines"]}
        assert answered == {"tokensdfa": "ok", "llguidance": "ok"}, answered
        assert INSTALL_XGRAMMAR in data["unavailable"]["xgrammar"], data["unavailable"]
        assert INSTALL_XGRAMMAR in done.stderr, done.stderr
        listed = run([tokensieve, "engines"], scratch).stdout
        line = next(x for x in listed.splitlines() if x.startswith("xgrammar "))
        assert INSTALL_XGRAMMAR in line, line
        out = run([tokensieve, "export", "installed", "--reports-dir", "r"], scratch).stdout
        read = (
            "import sys, pandas, harness.frames as f; a = pandas.read_csv(sys.argv[1]); "
            "b = f.cells('r', 'installed'); assert len(a) == len(b) == 2, (len(a), len(b)); "
            "print(sorted(a['engine']))"
        )
        engines = run([python, "-c", read, out.strip()], scratch).stdout.strip()
        assert engines == "['llguidance', 'tokensdfa']", engines
    print(f"installed check: ok ({venv})")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
