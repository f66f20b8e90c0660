"""Any release of an engine: `NAME@VERSION` (`xgrammar@0.1.19`, `llguidance@1.0.1`).

The pinned release of each engine lives in the shared environment (requirements.txt).
Another release is installed on first use into its own directory,
`cache_root()/engines/<dist>-<version>/`, and a worker process gets it first on its path
through `environment(name, version)` (PYTHONPATH prepended); the adapter, the harness and
every other package come from the shared environment as usual.

What goes into the directory, and why:
- the engine's distribution, `pip install --target DIR --no-deps --only-binary=:all:
  <dist>==<version>`: wheels only, because an old release without a wheel for this
  Python would otherwise be compiled from source (Rust or C++ toolchains, minutes,
  failures that say nothing about the engine);
- then its declared requirements are checked against what the worker will import (the
  directory first, then the shared environment). The shared environment wins: a
  requirement it satisfies is used from it (numpy, torch, pydantic are never installed
  twice, and nothing the harness itself imports is shadowed). A requirement it lacks
  altogether is installed into the directory, at the newest release the specifier
  allows, and its own requirements are checked the same way. A requirement it has at a
  version outside the specifier is a conflict, and the release is refused
  (EngineUnavailable: it cannot run here, though it exists),
  except for the engine's native core (kbnf for formatron, interegular for
  lm-format-enforcer), which belongs to the release and is then installed beside it;
- last, a fresh interpreter with that environment builds the adapter and asks it for its
  version (`Engine.available()` and `importlib.metadata`), so a release that installs but
  cannot be imported or driven is refused too.

Completion is atomic: the directory is built under a temporary name, renamed into place,
checked there, and only then is the marker file (`.complete`, JSON: what was installed
and from where) written; a directory without its marker is an interrupted attempt and
is rebuilt. Concurrent installs of one release (two bench workers, two runs) serialize
on a lock file next to the directory (`fcntl.flock`), and the later one finds the marker.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.cache import cache_root
from harness.errors import BadInput, EngineUnavailable, EnvironmentFailure, TokensieveError

MARKER = ".complete"
PIP_TIMEOUT_S = 900.0
CHECK_TIMEOUT_S = 300.0
# how many requirement rounds may follow the engine's own (a guard against cycles)
MAX_ROUNDS = 8
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}")


@dataclass(frozen=True)
class Package:
    dist: str  # the PyPI distribution
    module: str  # what the adapter imports
    cores: tuple[str, ...] = ()  # native parts that belong to the release


# engine name -> its PyPI package. The reference and our own engines are built from this
# repository and have no other release to pick.
PACKAGES: dict[str, Package] = {
    "outlines-core": Package("outlines-core", "outlines_core"),
    "llguidance": Package("llguidance", "llguidance"),
    "xgrammar": Package("xgrammar", "xgrammar"),
    "lm-format-enforcer": Package("lm-format-enforcer", "lmformatenforcer", ("interegular",)),
    "formatron": Package("formatron", "formatron", ("kbnf",)),
    "transformers-cfg": Package("transformers-cfg", "transformers_cfg"),
}


def parse(spec: str) -> tuple[str, str | None]:
    """`NAME` or `NAME@VERSION` -> (name, version or None). The name must be a known
    engine, and one with a PyPI release when a version is given; the version is
    normalized (PEP 440: `1.0` and `1.0.0` name one release)."""
    from harness import engines

    name, sep, version = spec.strip().partition("@")
    name = name.strip()
    engines.check(name)
    if not sep:
        return name, None
    return name, _normalize(name, version.strip())


def _normalize(name: str, version: str) -> str:
    from packaging.version import InvalidVersion, Version

    if name not in PACKAGES:
        raise BadInput(
            f"{name}@{version}: {name} has no PyPI release to pick; engines with one: "
            f"{', '.join(sorted(PACKAGES))}"
        )
    if not _VERSION.fullmatch(version):
        raise BadInput(f"{name}@{version}: not a release version (want e.g. {name}@1.2.3)")
    try:
        return str(Version(version))
    except InvalidVersion:
        raise BadInput(f"{name}@{version}: not a release version (PEP 440)") from None


def directory(name: str, version: str) -> Path:
    """Where `name@version` is (or would be) installed."""
    return cache_root() / "engines" / f"{PACKAGES[name].dist}-{version}"


def install(name: str, version: str) -> Path:
    """The directory holding `name@version`, installed on first use (see the module
    doc). One line either way: BadInput for a release that does not exist (or has no
    wheel); EngineUnavailable for one that conflicts with the shared environment or
    cannot be imported or driven here."""
    version = _normalize(name, version)
    target = directory(name, version)
    if (target / MARKER).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / f".{target.name}.lock"):
        if (target / MARKER).is_file():  # another process finished it while we waited
            return target
        shutil.rmtree(target, ignore_errors=True)  # an interrupted attempt
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
        try:
            record = _populate(name, version, staging)
            staging.rename(target)
            target.chmod(0o755)  # mkdtemp made it private
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        try:
            record["reports"] = _check(name, version, target)
            marker = target / f"{MARKER}.tmp"
            marker.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
            marker.rename(target / MARKER)  # written last
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
    return target


def installed(name: str, version: str) -> dict[str, Any] | None:
    """The marker's record of a completed install, or None."""
    try:
        path = directory(name, _normalize(name, version)) / MARKER
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def environment(name: str, version: str | None) -> dict[str, str]:
    """The variables a worker process needs (merge them over `os.environ`) so that
    `import <package>` finds `name@version` first; {} for the pinned release (None).
    Installs the release on first use."""
    if version is None:
        return {}
    target = install(name, version)
    return {"PYTHONPATH": _prepend(str(target), os.environ.get("PYTHONPATH", ""))}


def _prepend(path: str, existing: str) -> str:
    rest = [p for p in existing.split(os.pathsep) if p and p != path]
    return os.pathsep.join([path, *rest])


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


# --- building the directory ---------------------------------------------------------------


def _pip(
    name: str,
    version: str,
    target: Path,
    requirement: str,
    error: type[TokensieveError] = BadInput,
) -> None:
    """pip-install `requirement` into `target`; a failure raises `error` (BadInput for
    the release itself: no such release or no wheel; EngineUnavailable for what it
    needs)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
        "--no-deps",
        "--only-binary=:all:",
        "--target",
        str(target),
        requirement,
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentFailure(
            f"{name}@{version}: installing {requirement} timed out after {PIP_TIMEOUT_S:.0f}s "
            "(is the package index slow or unreachable?)"
        ) from None
    if done.returncode != 0:
        unreachable = _network_failure(done.stderr + done.stdout)
        if unreachable is not None:
            raise EnvironmentFailure(
                f"{name}@{version}: cannot install {requirement}: the package index is "
                f"unreachable ({unreachable}); installing a release needs it"
            )
        raise error(
            f"{name}@{version}: cannot install {requirement} from PyPI (wheels only): "
            f"{_last_line(done.stderr or done.stdout)}"
        )


# What pip says when it cannot reach an index (urllib3's and requests' errors, and pip's
# own retry and fetch warnings); pip then also says "No matching distribution found", as
# if the release did not exist, which would wrongly blame the input.
_NETWORK = re.compile(
    r"NewConnectionError|ConnectTimeoutError|ReadTimeoutError|ProxyError|SSLError|"
    r"Max retries exceeded|Could not fetch URL|connection broken by|"
    r"Temporary failure in name resolution|Name or service not known|Connection refused|"
    r"Network is unreachable"
)


def _network_failure(output: str) -> str | None:
    """What in pip's output says the index could not be reached, or None."""
    found = _NETWORK.search(output)
    if found is None:
        return None
    errno = re.search(r"\[Errno -?\d+\] [^'\")\n]+", output)
    return errno.group(0).strip() if errno else found.group(0)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return ((errors or lines or ["(no output)"])[-1])[:300]


def _populate(name: str, version: str, staging: Path) -> dict[str, Any]:
    """Install the release and what the shared environment lacks into `staging`."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    package = PACKAGES[name]
    cores = {canonicalize_name(c) for c in package.cores}
    _pip(name, version, staging, f"{package.dist}=={version}")
    added: dict[str, str] = {}
    shared: dict[str, str] = {}
    checked: set[str] = set()
    pending = [canonicalize_name(package.dist)]
    for _ in range(MAX_ROUNDS):
        if not pending:
            break
        wanted: list[Requirement] = []
        for dist in pending:
            checked.add(dist)
            for text in _requires(staging, dist):
                try:
                    req = Requirement(text)
                except InvalidRequirement:
                    continue
                if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                    continue
                wanted.append(req)
        pending = []
        for req in wanted:
            dist = canonicalize_name(req.name)
            local = _local_version(staging, dist)
            if local is not None:
                if req.specifier.contains(local, prereleases=True):
                    continue
                raise EngineUnavailable(
                    f"{name}@{version}: needs {req} but {dist} {local} came with it"
                )
            have = _shared_version(dist)
            if have is not None and req.specifier.contains(have, prereleases=True):
                shared[dist] = have
                continue
            if have is not None and dist not in cores:
                raise EngineUnavailable(
                    f"{name}@{version}: needs {req}, the shared environment has "
                    f"{dist} {have} (the shared environment wins; this release conflicts)"
                )
            _pip(name, version, staging, f"{dist}{req.specifier}", EngineUnavailable)
            added[dist] = _local_version(staging, dist) or "?"
            if dist not in checked:
                pending.append(dist)
    else:
        raise BadInput(f"{name}@{version}: requirements nest more than {MAX_ROUNDS} deep")
    return {
        "engine": name,
        "dist": package.dist,
        "version": version,
        "installed_beside_it": added,
        "from_shared_environment": shared,
    }


def _distributions(staging: Path) -> Iterator[metadata.Distribution]:
    return iter(metadata.distributions(path=[str(staging)]))


def _find(staging: Path, dist: str) -> metadata.Distribution | None:
    from packaging.utils import canonicalize_name

    for found in _distributions(staging):
        if canonicalize_name(found.metadata["Name"] or "") == dist:
            return found
    return None


def _requires(staging: Path, dist: str) -> list[str]:
    found = _find(staging, dist)
    return list(found.requires or []) if found is not None else []


def _local_version(staging: Path, dist: str) -> str | None:
    found = _find(staging, dist)
    return found.version if found is not None else None


def _shared_version(dist: str) -> str | None:
    """The version the shared environment (this interpreter's path) has, or None."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


_CHECK = """
import importlib.metadata, json, sys
from harness import engines
engine = engines.get(sys.argv[1])
ok, why = engine.available()
print(json.dumps({
    "ok": ok,
    "why": why,
    "metadata": importlib.metadata.version(sys.argv[2]),
    "engine": engine.version() if ok else None,
    "module": __import__(sys.argv[3]).__file__,
}))
"""


def _check(name: str, version: str, target: Path) -> dict[str, Any]:
    """Build the adapter in a fresh interpreter with the release first on its path: it
    must be available and report this release, imported from `target`."""
    package = PACKAGES[name]
    env = {**os.environ, "PYTHONPATH": _prepend(str(target), os.environ.get("PYTHONPATH", ""))}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHECK, name, package.dist, package.module],
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EngineUnavailable(
            f"{name}@{version}: importing it took over {CHECK_TIMEOUT_S:.0f}s"
        ) from None
    try:
        report = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise EngineUnavailable(
            f"{name}@{version}: installed but cannot be imported: "
            f"{_last_line(done.stderr or done.stdout)}"
        ) from None
    if not report["ok"]:
        raise EngineUnavailable(f"{name}@{version}: installed but unusable: {report['why']}"[:400])
    from packaging.version import Version

    same = Version(report["metadata"]) == Version(version)
    if not same or not str(report["module"]).startswith(str(target) + os.sep):
        raise EngineUnavailable(
            f"{name}@{version}: the worker would import {package.dist} "
            f"{report['metadata']} from {report['module']}, not this release"
        )
    return {"engine_version": report["engine"], "module": report["module"]}
