"""The corpus sets: every set loads, ids are unique and stable, every regex is accounted for
(Python's re, the Rust reference, its recorded features), handwritten schemas agree with
jsonschema, MaskBench loads when present, and the download extracts from a local archive.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema.validators import validator_for

from harness import cli, corpora
from harness.corpora import catalog, judge, maskbench
from harness.errors import MissingData, UnknownName, UnsupportedSpec
from harness.language import converter, regex_syntax
from harness.results import Status
from harness.spec import Spec

REGEX_SETS = [s.name for s in corpora.sets() if s.kind == "regex"]
FILE_SETS = [s.name for s in corpora.sets() if s.origin != "maskbench"]
# Features the Rust reference (regex-automata DFAs) cannot compile: look-around,
# backreferences, and Unicode word boundaries (recorded under "anchors").
RUST_GAPS = {"lookaround", "backreference", "anchors"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Schema->regex verdicts go to one temporary cache shared by this module's tests."""
    root = tmp_path_factory.getbasetemp() / "corpora-cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKENSIEVE_CACHE", str(root))
        yield


def maskbench_or_skip() -> Path:
    try:
        return maskbench.directory()
    except MissingData as exc:
        pytest.skip(str(exc))


def test_manifest_names_every_set_once() -> None:
    names = [s.name for s in corpora.sets()]
    assert names == [
        "outlines-bench",
        "llm-formats",
        "pathological",
        "literal-heavy",
        "handwritten",
        "schemastore",
        "maskbench",
        "grammars",
    ]


@pytest.mark.parametrize("name", FILE_SETS)
def test_set_loads_with_stable_unique_ids(name: str) -> None:
    found = corpora.entries(name)
    assert found, name
    ids = [e.spec.id for e in found]
    assert len(ids) == len(set(ids))
    for e in found:
        assert e.spec.id == f"{name}/{e.name}"
        assert re.fullmatch(r"[A-Za-z0-9._+-]+", e.name), e.spec.id
        assert e.source
        assert corpora.get(e.spec.id) == e.spec
    # A second load (from a fresh parse, not the in-process cache) gives the same ids.
    catalog._regex_file.cache_clear()
    catalog._schema_dir.cache_clear()
    catalog._schemastore.cache_clear()
    assert [e.spec.id for e in corpora.entries(name)] == ids


def test_counts_per_set() -> None:
    counts = {name: len(corpora.entries(name)) for name in FILE_SETS}
    assert counts["outlines-bench"] == 9
    assert counts["llm-formats"] >= 60
    assert counts["pathological"] >= 40
    assert counts["literal-heavy"] >= 15
    assert counts["handwritten"] >= 15
    assert counts["schemastore"] >= 50


def test_outlines_bench_is_verbatim() -> None:
    """Spot checks against outlines-core's benchmarks/bench_regex_guide.py."""
    got = {e.name: e.spec.text for e in corpora.entries("outlines-bench")}
    assert set(got) == {
        "email",
        "complex_phone",
        "simple_phone",
        "date",
        "time",
        "ip",
        "url",
        "ssn",
        "complex_span_constrained_relation_extraction",
    }
    assert got["ssn"] == r"\d{3}-\d{2}-\d{4}"
    assert got["simple_phone"] == "\\+?[1-9][0-9]{7,14}"
    assert got["time"] == r"(0?[1-9]|1[0-2]):[0-5]\d\s?(am|pm)?"
    assert got["url"] == r"(https?:\/\/)?([\da-z\.-]+)\.([a-z\.]{2,6})([\/\w \.-]*)*\/?"
    span = got["complex_span_constrained_relation_extraction"]
    assert span.startswith("(['\"\\ ,]?((?:of|resulting|case|which|")
    assert span.endswith("\\s\\|\\s([^|\\(\\)\n]{1,})\\))*\\n)*")


@pytest.mark.parametrize("name", REGEX_SETS)
def test_every_regex_compiles_or_has_an_explaining_feature(name: str) -> None:
    for e in corpora.entries(name):
        pattern = e.spec.text
        try:
            compiled = re.compile(pattern)
        except re.error:
            gap = regex_syntax.python_re_gap(pattern)
            assert gap is not None, e.spec.id
            assert gap.split(":")[0] in e.spec.features, e.spec.id
            continue
        assert e.spec.examples, e.spec.id
        for x in e.spec.examples:
            assert compiled.fullmatch(x), (e.spec.id, x)


@pytest.mark.parametrize("name", REGEX_SETS)
def test_regexes_compile_in_the_reference_unless_a_feature_says_why(name: str) -> None:
    tokensdfa = pytest.importorskip("tokensdfa", reason="the tokensdfa extension is not built")
    byte_vocab = tokensdfa.Vocabulary([bytes([b]) for b in range(256)] + [b"<eos>"], 256, [256])
    for e in corpora.entries(name):
        if e.name in {"count-word-1-255", "dot-255", "dot-0-255"}:
            continue  # valid but slow to determinize over Unicode; covered by the paths tests
        try:
            tokensdfa.NaiveIndex(e.spec.text, byte_vocab)
        except ValueError as exc:
            assert e.spec.features & RUST_GAPS, f"{e.spec.id}: {exc}"


def test_features_are_recorded_and_detected() -> None:
    every = {f for name in REGEX_SETS for e in corpora.entries(name) for f in e.spec.features}
    assert every == set(regex_syntax.FEATURES)
    cases = {
        r"\d+": {"unicode-classes"},
        r"\p{L}+": {"unicode-classes"},
        r"[\d]": {"unicode-classes"},
        r"(?i)abc": {"inline-flags"},
        r"(?i:abc)d": {"inline-flags"},
        r"a(?=b)": {"lookaround"},
        r"(?<!x)y": {"lookaround"},
        r"(a)\1": {"backreference"},
        r"(?P<q>a)(?P=q)": {"backreference"},
        r"^a$": {"anchors"},
        r"\Aa\z": {"anchors"},
        r"\bword\b": {"anchors"},
        r"[$^]": set(),
        r"[^^]\^\$": set(),
        r"[\1]": set(),
        r"[]a]": set(),
        r"(?:a|b)(?P<n>c)": set(),
        r"\\d": set(),
    }
    for pattern, expected in cases.items():
        assert regex_syntax.regex_features(pattern) == expected, pattern


def test_declared_features_must_match_the_pattern(tmp_path: Path) -> None:
    bad = {
        "entries": [
            {"name": "x", "pattern": "^a$", "source": "t", "features": [], "examples": ["a"]}
        ]
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="declares features"):
        catalog._regex_file("bad", path)


def test_python_gap_is_only_excused_by_a_feature() -> None:
    assert regex_syntax.python_regex(r"\p{L}+") is None
    assert regex_syntax.python_regex(r"a\z") is None
    with pytest.raises(ValueError, match="does not compile"):
        regex_syntax.python_regex(r"(unclosed")


def test_handwritten_schemas_validate_their_examples() -> None:
    found = corpora.entries("handwritten")
    for e in found:
        schema = json.loads(e.spec.text)
        validator_for(schema).check_schema(schema)
        validator = judge.validator(schema)
        assert e.valid and e.invalid, e.spec.id
        for x in e.valid:
            assert validator.is_valid(x), (e.spec.id, x)
        for x in e.invalid:
            assert not validator.is_valid(x), (e.spec.id, x)
        assert [json.loads(x) for x in e.spec.examples] == list(e.valid)
    tags = {t for e in found for t in e.tags}
    for needed in ("function-call", "nested", "enum", "array", "format", "$ref", "anyOf"):
        assert needed in tags


def test_schemastore_comes_from_installed_packages() -> None:
    found = corpora.entries("schemastore")
    ids = {e.spec.id for e in found}
    for name in ("github-workflows", "compose-spec", "renovate", "dependabot"):
        assert f"schemastore/{name}" in ids
    assert "schemastore/pyproject-ruff" in ids
    for e in found:
        assert e.source.startswith(("check-jsonschema ", "validate-pyproject-schema-store "))
        assert isinstance(json.loads(e.spec.text), dict)


def test_schema_to_regex_converts_or_says_why() -> None:
    weather = corpora.get("handwritten/function-get-weather")
    regex = converter.schema_to_regex(weather)
    assert re.fullmatch(regex, '{"location":"Paris","unit":"celsius"}')
    assert not re.fullmatch(regex, '{"location":"Paris","unit":"kelvin"}')
    rejected = Spec.schema("t/not-convertible", {"type": "string", "format": "regex"})
    with pytest.raises(UnsupportedSpec, match="unsupported spec t/not-convertible"):
        converter.schema_to_regex(rejected)
    # The verdict is cached: the second call answers without a child process.
    converter.stop()
    with pytest.raises(UnsupportedSpec):
        converter.schema_to_regex(rejected)
    assert not converter._service.running


def test_converter_crash_is_a_verdict_and_the_converter_recovers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pixi's pyproject schema makes the builder allocate over 2 GB and abort; under a
    512 MB limit that happens at once. The caller gets a verdict, and the next schema is
    converted by a fresh child."""
    pixi = {e.name: e for e in corpora.entries("schemastore")}.get("pyproject-pixi")
    if pixi is None:
        pytest.skip("validate-pyproject-schema-store no longer ships pixi's schema")
    monkeypatch.setattr(converter._service._worker, "address_space", 512 << 20)
    converter.stop()
    try:
        crashed = converter._service.ask({"converter": "outlines-core", "text": pixi.spec.text}, 60)
        assert crashed.status in (Status.CRASH, Status.OOM), crashed
        integer = json.dumps({"type": "integer"})
        fresh = converter._service.ask({"converter": "outlines-core", "text": integer}, 60)
        assert fresh.ok and fresh.value["verdict"] == ["ok", "(-)?(0|[1-9][0-9]*)"]
    finally:
        converter.stop()


def test_unknown_names_are_one_line_errors() -> None:
    with pytest.raises(UnknownName, match="unknown corpus set 'nope'"):
        corpora.entries("nope")
    with pytest.raises(UnknownName, match="unknown spec 'outlines-bench/nope'"):
        corpora.get("outlines-bench/nope")
    with pytest.raises(UnknownName):
        corpora.get("no-slash")


def test_cli_lists_every_set(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["corpora", "--corpus-dir", str(tmp_path), "--no-convert"]) == 0
    out = capsys.readouterr().out
    for s in corpora.sets():
        assert s.name in out
    assert "features: unicode-classes" in out
    assert "absent: MaskBench data not found" in out


def test_cli_show_and_bad_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["corpora", "show", "llm-formats/uuid-lower"]) == 0
    out = capsys.readouterr().out
    assert "spec:     llm-formats/uuid-lower" in out
    assert "123e4567-e89b-12d3-a456-426614174000" in out
    assert cli.main(["corpora", "show", "llm-formats/uuid-nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown spec" in err


def test_cli_show_tokenizes_with_a_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["corpora", "show", "outlines-bench/ssn", "--vocab", "synthetic-400-1", "--n", "3"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "paths (synthetic-400-1, seed 0, layout verbatim):" in out
    assert out.count("      ids:    [") == 3


# --- MaskBench -------------------------------------------------------------------------


def test_maskbench_absent_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(MissingData) as info:
        corpora.entries("maskbench", tmp_path / "nowhere")
    message = str(info.value)
    assert "\n" not in message
    assert "--corpus-dir" in message and "download maskbench" in message


def test_maskbench_loads_and_valid_instances_validate() -> None:
    directory = maskbench_or_skip()
    found = corpora.entries("maskbench", directory)
    assert len(found) == len(list(directory.glob("*.json")))
    assert all(e.spec.id.startswith("maskbench/") for e in found)
    assert sum(len(e.valid) for e in found) > 0
    assert sum(len(e.invalid) for e in found) > 0
    # Every 40th file, so the check stays fast; upstream validated all of them already.
    for e in found[::40]:
        schema = json.loads(e.spec.text)
        validator = validator_for(schema)(schema)
        for x in e.valid:
            assert validator.is_valid(x), e.spec.id


def _archive_files() -> dict[str, bytes]:
    one = {"schema": {"type": "integer"}, "tests": [{"valid": True, "data": 3}]}
    two = {"schema": {"type": "string"}, "tests": [{"valid": False, "data": 3}]}
    return {
        "jsonschemabench-main/maskbench/data/Github_easy---o1.json": json.dumps(one).encode(),
        "jsonschemabench-main/maskbench/data/Handwritten_2.json": json.dumps(two).encode(),
        "jsonschemabench-main/maskbench/README.md": b"not data",
        "jsonschemabench-main/data/other.json": b"{}",
        "jsonschemabench-main/maskbench/data/../../evil.json": b"{}",
    }


def test_download_extracts_maskbench_from_a_local_zip(tmp_path: Path) -> None:
    archive = tmp_path / "repo.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in _archive_files().items():
            zf.writestr(name, data)
    dest = tmp_path / "maskbench"
    assert maskbench.download(dest, archive.as_uri()) == 2
    assert sorted(p.name for p in dest.iterdir()) == ["Github_easy---o1.json", "Handwritten_2.json"]
    found = corpora.entries("maskbench", dest)
    assert [e.spec.id for e in found] == ["maskbench/Github_easy---o1", "maskbench/Handwritten_2"]
    assert found[0].valid == (3,) and found[1].invalid == (3,)
    assert not (tmp_path / "evil.json").exists()


def test_download_reads_a_tarball_and_the_cli_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "repo.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for name, data in _archive_files().items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    dest = tmp_path / "out"
    argv = ["corpora", "download", "maskbench", "--dest", str(dest), "--url", archive.as_uri()]
    assert cli.main(argv) == 0
    assert "wrote 2 MaskBench files" in capsys.readouterr().err
    assert cli.main(["corpora", "download", "nothing"]) == 2
    assert "unknown download 'nothing'" in capsys.readouterr().err


def test_download_of_an_archive_without_maskbench_fails_clearly(tmp_path: Path) -> None:
    archive = tmp_path / "empty.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("repo/README.md", "nothing here")
    with pytest.raises(MissingData, match="no maskbench/data"):
        maskbench.download(tmp_path / "d", archive.as_uri())
    with pytest.raises(MissingData, match="cannot download"):
        maskbench.download(tmp_path / "d", (tmp_path / "missing.zip").as_uri())
