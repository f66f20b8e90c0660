"""`tokensieve findings recheck RUN`: every repro script of a diff run run again against
other releases of its engine, to learn in which release a bug was introduced or fixed.

Each script imports only its engine's package (and numpy or the standard library), so a
release is chosen by putting its install directory (`harness.engines.versions`) first
on the script's import path; the pinned release is the shared environment itself. A run
ends REPRODUCED (exit 1, the bug is there), FIXED (exit 0) or cannot run (anything else:
the release lacks an API the script uses, it crashed, it timed out), with the script's
last line. The table is written by `harness.report.recheck_page`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness import engines
from harness.diff.findings.records import FindingRecord, InstanceReproRecord
from harness.engines import versions
from harness.errors import BadInput, EngineUnavailable

TIMEOUT_S = 300.0
PINNED = "pinned"


@dataclass(frozen=True)
class Recheck:
    finding: str  # the script's name, without .py
    engine: str  # the engine the finding is about (its base name)
    release: str  # "pinned" or a version
    outcome: str  # REPRODUCED, FIXED or cannot run
    output: str  # the script's last line


def scripts(run_dir: Path) -> list[tuple[str, str, Path]]:
    """(finding, engine base name, script) for every repro script of the run."""
    source = run_dir / "diff.json"
    if not source.is_file():
        raise BadInput(f"{run_dir}: no diff.json (is it a `tokensieve diff` run?)")
    data = json.loads(source.read_text(encoding="utf-8"))
    found: list[tuple[str, str, Path]] = []
    for f in map(FindingRecord.from_json, data.get("findings", [])):
        if f.repro:
            found.append((f.id, f.engine.partition("@")[0], run_dir / "findings" / f.repro))
    for r in map(InstanceReproRecord.from_json, data.get("instance_repros", [])):
        if r.repro:
            found.append((Path(r.repro).stem, r.engine.partition("@")[0], run_dir / r.repro))
    return [(name, engine, path) for name, engine, path in found if path.is_file()]


def run_script(path: Path, release_dir: Path | None) -> tuple[str, str]:
    """(outcome, last line) of one script, with `release_dir` first on its path."""
    env = {k: v for k, v in engines.environment([]).items() if k != "PYTHONPATH"}
    if release_dir is not None:
        env["PYTHONPATH"] = str(release_dir)
    try:
        done = subprocess.run(
            [sys.executable, "-s", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return "cannot run", f"timed out after {TIMEOUT_S:.0f} s"
    lines = (done.stdout + done.stderr).strip().splitlines()
    last = lines[-1] if lines else ""
    if done.returncode == 1 and "REPRODUCED" in done.stdout:
        return "REPRODUCED", last
    if done.returncode == 0 and "FIXED" in done.stdout:
        return "FIXED", last
    return "cannot run", last[:300]


def recheck(run_dir: Path, releases: list[str]) -> list[Recheck]:
    """Every repro of the run against the pinned release of its engine and each of
    `releases` (`NAME@VERSION`) of the same engine."""
    wanted: dict[str, list[str]] = {}
    for spec in releases:
        name, version = versions.parse(spec)
        if version is None:
            raise BadInput(f"--engines {spec}: name a release, e.g. {name}@1.2.3")
        wanted.setdefault(name, []).append(version)
    installed: dict[tuple[str, str], Path | str] = {}
    out = []
    for finding, engine, path in scripts(run_dir):
        for version in [None, *wanted.get(engine, [])]:
            if version is None:
                outcome, last = run_script(path, None)
            else:
                where = _install(installed, engine, version)
                if isinstance(where, str):  # this release cannot be installed here
                    outcome, last = "cannot run", where
                else:
                    outcome, last = run_script(path, where)
            out.append(Recheck(finding, engine, version or PINNED, outcome, last))
    return out


def _install(installed: dict[tuple[str, str], Path | str], engine: str, version: str) -> Path | str:
    """The release's install directory, or the one-line reason it cannot be used here (it
    conflicts with the shared environment): that release's column then reads "cannot
    run" and the other releases are still tried. A release that does not exist stays
    BadInput (exit 2)."""
    key = (engine, version)
    if key not in installed:
        try:
            installed[key] = versions.install(engine, version)
        except EngineUnavailable as exc:
            installed[key] = str(exc)
    return installed[key]
