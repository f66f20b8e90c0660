"""The cache of vocabularies from model files: a second load is served from it, and a
cached load in a fresh process is fast and imports no tokenizer library."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from vocab_file_helpers import made_files, temporary_cache

from harness.vocab import files, hf


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from temporary_cache(tmp_path_factory)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_files(tmp_path_factory)


# --- Cache -------------------------------------------------------------------------------------


def test_second_load_is_served_from_cache(
    made: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = made / "gpt2" / "tokenizer.json"
    first = files.load(path)
    cached = list((cache_dir / "vocab" / "files").glob("*.vocab"))
    assert cached

    def refuse(*args: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(hf, "parse", refuse)
    second = files.load(path)
    assert second.tokens == first.tokens and second.eos_id == first.eos_id
    assert second.special_ids == first.special_ids
    assert second.encode("hello world") == first.encode("hello world")
    # Another option is another cache entry, so it is parsed.
    with pytest.raises(AssertionError, match="parsed again"):
        files.load(path, eos="0")


_TIMED_LOAD = """
import json, sys, time
start = time.perf_counter()
from harness.vocab import files
vocab = files.load(__import__("pathlib").Path(sys.argv[1]))
seconds = time.perf_counter() - start
heavy = sorted(m for m in ("tokenizers", "sentencepiece", "tiktoken", "gguf") if m in sys.modules)
print(json.dumps({"seconds": seconds, "size": vocab.size, "heavy": heavy}))
"""


@pytest.mark.parametrize("name", ["llama3.gguf", "llama3/tokenizer.json"])
def test_cached_load_is_fast_in_fresh_process(made: Path, cache_dir: Path, name: str) -> None:
    import os
    import subprocess
    import sys

    files.load(made / name)  # makes sure the cache entry exists
    env = {**os.environ, "TOKENSIEVE_CACHE": str(cache_dir)}
    runs = []
    for _ in range(3):  # best of three: the machine is shared and noisy
        done = subprocess.run(
            [sys.executable, "-c", _TIMED_LOAD, str(made / name)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        runs.append(json.loads(done.stdout))
        if runs[-1]["seconds"] < 1.0:
            break
    best = min(runs, key=lambda run: run["seconds"])
    assert best["seconds"] < 1.0, runs
    assert best["size"] == 128_256
    assert best["heavy"] == []
