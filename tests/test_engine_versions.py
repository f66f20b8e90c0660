"""`engine@version`: parsing, one-line errors, and installing a release other than the
pinned one into the cache, where a worker with `versions.environment` imports it first.

The install tests need PyPI: they skip when TOKENSIEVE_OFFLINE is set or the package
index cannot be reached. They install outlines-core 0.2.11 (one 2 MB wheel, no
dependencies), not the pinned 0.2.14, into a temporary cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from functools import lru_cache
from pathlib import Path

import pytest

from harness.engines import versions
from harness.errors import BadInput, UnknownName

OTHER = "0.2.11"  # an outlines-core release other than the pinned one


@lru_cache(maxsize=1)
def _offline() -> str | None:
    if os.environ.get("TOKENSIEVE_OFFLINE"):
        return "TOKENSIEVE_OFFLINE is set"
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/outlines-core/", timeout=10):
            return None
    except OSError as exc:
        return f"package index unreachable ({index}): {exc}"


def _needs_pypi() -> None:
    why = _offline()
    if why:
        pytest.skip(why)


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("TOKENSIEVE_CACHE", str(root))
    return root


def test_parse() -> None:
    assert versions.parse("xgrammar") == ("xgrammar", None)
    assert versions.parse("llguidance@1.0.1") == ("llguidance", "1.0.1")
    assert versions.parse(" outlines-core@0.2.11 ") == ("outlines-core", "0.2.11")
    assert versions.parse("formatron@0.4.02") == ("formatron", "0.4.2")  # PEP 440 form
    assert versions.parse("naive") == ("naive", None)


@pytest.mark.parametrize(
    "spec",
    ["llguidance@", "llguidance@x.y", "xgrammar@1.0;rm -rf /", "xgrammar@1 --pre", "naive@1.0"],
)
def test_bad_version_is_one_line_bad_input(spec: str, cache_root: Path) -> None:
    with pytest.raises(BadInput) as info:
        name, version = versions.parse(spec)
        versions.install(name, version or "")
    message = str(info.value)
    assert "\n" not in message and spec.split("@")[0] in message
    assert not (cache_root / "engines").exists() or not any((cache_root / "engines").iterdir())


def test_unknown_engine() -> None:
    with pytest.raises(UnknownName):
        versions.parse("no-such-engine@1.0")


def test_every_engine_with_a_release_is_registered() -> None:
    from harness import engines

    assert set(versions.PACKAGES) <= set(engines.ENGINE_NAMES)
    assert versions.environment("xgrammar", None) == {}


def _in_worker(env: dict[str, str]) -> dict[str, object]:
    """What a worker process with `env` merged in imports and reports."""
    code = (
        "import importlib.metadata, json, numpy as np\n"
        "import outlines_core\n"
        "from harness import engines\n"
        "from harness.spec import Spec\n"
        "from harness.vocab import synthetic\n"
        "engine = engines.get('outlines-core')\n"
        "vocab = synthetic(400, 1)\n"
        "compiled = engine.compile(engine.prepare(vocab), Spec.regex('t/d', '[0-9]+'))\n"
        "mask = np.zeros(vocab.mask_words, dtype=np.int32)\n"
        "compiled.matcher().fill_mask(mask)\n"
        "print(json.dumps({\n"
        "    'metadata': importlib.metadata.version('outlines_core'),\n"
        "    'native': outlines_core.outlines_core.__version__,\n"
        "    'adapter': engine.version(),\n"
        "    'file': outlines_core.__file__,\n"
        "    'allowed': int(np.unpackbits(mask.view(np.uint8)).sum()),\n"
        "}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_install_other_release_and_reuse(cache_root: Path) -> None:
    _needs_pypi()
    pinned = _in_worker({})
    assert pinned["metadata"] != OTHER, "the test needs a release other than the pinned one"
    path = versions.install("outlines-core", OTHER)
    assert path == cache_root / "engines" / f"outlines-core-{OTHER}"
    record = versions.installed("outlines-core", OTHER)
    assert record is not None and record["version"] == OTHER
    marker = path / versions.MARKER
    stamp = marker.stat().st_mtime_ns

    other = _in_worker(versions.environment("outlines-core", OTHER))
    assert other["metadata"] == other["native"] == other["adapter"] == OTHER
    assert str(other["file"]).startswith(str(path))
    assert other["allowed"] == pinned["allowed"] > 0  # the adapter drives it all the same

    started = time.perf_counter()
    assert versions.install("outlines-core", OTHER) == path
    assert versions.environment("outlines-core", OTHER)["PYTHONPATH"].split(os.pathsep)[0] == str(
        path
    )
    assert time.perf_counter() - started < 0.5  # the cache, not pip
    assert marker.stat().st_mtime_ns == stamp


def test_unreleased_version_is_one_line_bad_input(cache_root: Path) -> None:
    _needs_pypi()
    with pytest.raises(BadInput) as info:
        versions.install("outlines-core", "99.0.0")
    message = str(info.value)
    assert "\n" not in message and "outlines-core@99.0.0" in message
    assert not (cache_root / "engines" / "outlines-core-99.0.0").exists()


def test_concurrent_installs_share_one_directory(cache_root: Path) -> None:
    """Two processes installing the same release at once: one installs, the other waits
    on the lock and finds it done; both get the same complete directory."""
    _needs_pypi()
    code = (
        "import sys\n"
        "from harness.engines import versions\n"
        f"print(versions.install('outlines-core', {OTHER!r}))\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-1000:] for _, err in outs]
    paths = {out.strip() for out, _ in outs}
    assert paths == {str(cache_root / "engines" / f"outlines-core-{OTHER}")}
    assert versions.installed("outlines-core", OTHER) is not None
    leftovers = [
        p.name for p in (cache_root / "engines").iterdir() if p.name.startswith(".outlines")
    ]
    assert all(name.endswith(".lock") for name in leftovers), leftovers


def test_interrupted_install_is_rebuilt(cache_root: Path) -> None:
    """A directory without its marker (a killed install) is not trusted."""
    _needs_pypi()
    target = versions.directory("outlines-core", OTHER)
    (target / "outlines_core").mkdir(parents=True)
    (target / "outlines_core" / "__init__.py").write_text("raise ImportError('half done')\n")
    assert versions.installed("outlines-core", OTHER) is None
    assert versions.install("outlines-core", OTHER) == target
    assert "half done" not in (target / "outlines_core" / "__init__.py").read_text()
    assert _in_worker(versions.environment("outlines-core", OTHER))["metadata"] == OTHER


def test_a_bench_of_two_releases_compares_cell_by_cell(tmp_path: Path) -> None:
    """One engine at two releases in one bench run (one worker each), labelled apart in
    results; `compare` between a pinned run and a run of another release matches cells."""
    _needs_pypi()
    root = Path(__file__).resolve().parents[1]
    reports = tmp_path / "r"
    base = [
        sys.executable,
        "-m",
        "harness.cli",
        "bench",
        "--vocab",
        "synthetic-1000-0",
        "--corpus",
        "outlines-bench",
        "--limit-specs",
        "2",
        "--reports-dir",
        str(reports),
        "--no-report",
    ]
    for run, engines_ in (
        ("both", f"outlines-core,outlines-core@{OTHER}"),
        ("other", f"outlines-core@{OTHER}"),
        ("pinned", "outlines-core"),
    ):
        done = subprocess.run(
            [*base, "--engines", engines_, "--run", run],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    from harness.store import Store

    with Store(reports / "results.sqlite", readonly=True) as store:
        assert store.run("both").meta["versions"] == {
            "outlines-core": "0.2.14",
            f"outlines-core@{OTHER}": OTHER,
        }
        assert {c.engine for c in store.cells("both")} == {
            "outlines-core",
            f"outlines-core@{OTHER}",
        }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "compare",
            "pinned",
            "other",
            "--reports-dir",
            str(reports),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "2 cells ok in both" in done.stdout, done.stdout
    assert f"B ran outlines-core@{OTHER} {OTHER}" in done.stdout


def test_findings_recheck_runs_a_repro_against_releases(tmp_path: Path) -> None:
    """outlines-core's finish-and-continue bug (a repro written by `check`) reproduces with
    the pinned release and with 0.2.11; a bogus release is one line, exit 2."""
    _needs_pypi()
    root = Path(__file__).resolve().parents[1]
    reports = tmp_path / "r"
    cli = [sys.executable, "-m", "harness.cli"]
    done = subprocess.run(
        [
            *cli,
            "check",
            "--regex",
            r"a(\.a)*",
            "--engines",
            "outlines-core",
            "--vocab",
            "synthetic-1000-3",
            "--reports-dir",
            str(reports),
            "--run",
            "c",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr  # the bug is found
    done = subprocess.run(
        [
            *cli,
            "findings",
            "recheck",
            "c",
            "--engines",
            f"outlines-core@{OTHER}",
            "--reports-dir",
            str(reports),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("outlines-core-")]
    assert row.split()[1:] == ["REPRODUCED", "REPRODUCED"]
    data = json.loads((reports / "c" / "findings" / "recheck.json").read_text())
    assert {(r["release"], r["outcome"]) for r in data} == {
        (OTHER, "REPRODUCED"),
        ("pinned", "REPRODUCED"),
    }
    bad = subprocess.run(
        [
            *cli,
            "findings",
            "recheck",
            "c",
            "--engines",
            "outlines-core@99.0.0",
            "--reports-dir",
            str(reports),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr


def test_recheck_records_a_release_that_cannot_run_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release that conflicts with the shared environment (xgrammar 0.2.4 needs
    transformers < 5) reads "cannot run" with the reason, and the other releases are
    still tried; a release that does not exist stays one line, exit 2."""
    from harness.diff.findings import recheck
    from harness.errors import EngineUnavailable

    run_dir = tmp_path / "d"
    (run_dir / "findings").mkdir(parents=True)
    (run_dir / "diff.json").write_text(
        json.dumps({"findings": [{"id": "f1", "engine": "xgrammar", "repro": "f1.py"}]})
    )
    (run_dir / "findings" / "f1.py").write_text("print('REPRODUCED'); raise SystemExit(1)\n")
    reason = "xgrammar@0.2.4: needs transformers<5,>=4.38.0, the shared environment has 5.23"

    def install(name: str, version: str) -> Path:
        if version == "0.2.4":
            raise EngineUnavailable(reason)
        if version == "99.0.0":
            raise BadInput(f"{name}@{version}: cannot install it")
        return tmp_path / "empty-release-dir"

    monkeypatch.setattr(recheck.versions, "install", install)
    rows = recheck.recheck(run_dir, ["xgrammar@0.2.4", "xgrammar@0.2.0"])
    assert [(r.release, r.outcome) for r in rows] == [
        ("pinned", "REPRODUCED"),
        ("0.2.4", "cannot run"),
        ("0.2.0", "REPRODUCED"),
    ]
    assert rows[1].output == reason
    with pytest.raises(BadInput):
        recheck.recheck(run_dir, ["xgrammar@99.0.0"])
