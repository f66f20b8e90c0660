"""JSON schema -> regex: the one converter every regex-only engine is fed from.

The regex engines (the naive reference, TokensDFA, outlines-core) receive a schema as the
regex outlines-core's `build_regex_from_schema` makes of it, so they face the same
language and a difference between them is never a difference between converters. That
builder can allocate gigabytes and abort the process on some real schemas, so it runs in
a worker process (`harness.process`) under a time limit and an address-space limit, and
its verdicts are cached on disk per outlines-core version: each schema is converted once.

A verdict is `[status, value]`: `["ok", regex]`, `["rejected", message]`, `["timeout",
seconds]` or `["crashed", what happened]`. A regex of any size is kept: how large a regex
an engine takes is the engine's own limit (`Capabilities.max_regex_chars`). The time the
builder took is kept beside it (`convert_ns`), so a cell can report conversion apart from
its engine's compile.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import time
from typing import Any

from harness.cache import cache_dir, read_json, write_json_atomic
from harness.errors import SpecError, UnsupportedSpec
from harness.process import Service, Status
from harness.spec import Spec

CONVERTER = "outlines-core"
CONVERT_TIMEOUT_S = 60.0
CONVERT_MEMORY_BYTES = 4 << 30


class ConverterService:
    """The worker side: answers each schema text with its verdict and the time taken."""

    def __init__(self, setup: Any) -> None:
        from outlines_core.json_schema import build_regex_from_schema

        self._build = build_regex_from_schema
        self.ready = {"version": _converter_version()}

    def handle(self, text: str) -> dict[str, Any]:
        started = time.perf_counter_ns()
        try:
            regex = self._build(text, None)
        except Exception as exc:
            verdict: list[Any] = ["rejected", " ".join(str(exc).split())]
        else:
            verdict = ["ok", regex]
        return {"verdict": verdict, "convert_ns": time.perf_counter_ns() - started}


_service = Service(
    "harness.corpora.converter:ConverterService",
    address_space=CONVERT_MEMORY_BYTES,
)


def _converter_version() -> str:
    try:
        return importlib.metadata.version("outlines-core")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _cache_path(text: str, version: str) -> Any:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    # v2: a regex of any size is kept (v1 recorded large ones as "too-large")
    return cache_dir("schema-regex", "v2", version, digest[:2]) / f"{digest}.json"


def verdict(text: str) -> tuple[list[Any], int | None]:
    """(verdict, conversion time in ns or None) for a schema's JSON text, cached."""
    version = _converter_version()
    if version == "absent":
        return ["rejected", "outlines-core is not installed"], None
    path = _cache_path(text, version)
    hit = read_json(path)
    if isinstance(hit, dict) and isinstance(hit.get("verdict"), list):
        return hit["verdict"], hit.get("convert_ns")
    reply = _service.ask(text, CONVERT_TIMEOUT_S)
    if reply.ok:
        found, ns = reply.value["verdict"], reply.value["convert_ns"]
    elif reply.status is Status.TIMEOUT:
        found, ns = ["timeout", CONVERT_TIMEOUT_S], None
    else:
        found, ns = ["crashed", reply.message], None
    write_json_atomic(path, {"verdict": found, "convert_ns": ns})
    return found, ns


def convert_schema(text: str) -> list[Any]:
    """The verdict alone (see the module doc)."""
    return verdict(text)[0]


def _verdict_message(status: str, value: Any) -> str:
    if status == "rejected":
        return str(value)
    if status == "timeout":
        return f"the builder ran over {value:g} s"
    return (
        f"the builder died ({value}; it is stopped when it needs over "
        f"{CONVERT_MEMORY_BYTES >> 30} GiB)"
    )


def schema_to_regex(spec: Spec, engine: str = CONVERTER) -> str:
    """The regex of `spec`: its text for a regex, the converter's regex for a schema.
    Otherwise UnsupportedSpec (or SpecError, for a schema that is not valid) naming
    `engine`, the engine that asked (the failure belongs to its cell), and the converter's
    reason."""
    if spec.kind == "regex":
        return spec.text
    if spec.converted is not None:
        return spec.converted
    status, value = convert_schema(spec.text)
    if status == "ok":
        return str(value)
    from harness.engines.support import spec_is_valid

    message = f"schema-to-regex converter ({CONVERTER}): {_verdict_message(status, value)}"
    if status == "rejected" and not spec_is_valid(spec):
        raise SpecError(engine, spec.id, message)
    raise UnsupportedSpec(engine, spec.id, message)


def with_regex(spec: Spec) -> Spec:
    """`spec` carrying its converted regex (a schema the converter handles), so a worker
    receives the regex with the schema and never converts again."""
    if spec.kind == "regex" or spec.converted is not None:
        return spec
    status, value = convert_schema(spec.text)
    return dataclasses.replace(spec, converted=str(value)) if status == "ok" else spec


def conversion_status(spec: Spec) -> str:
    """ "ok", "rejected", "timeout" or "crashed" (regex specs are "ok")."""
    return "ok" if spec.kind == "regex" else str(convert_schema(spec.text)[0])


def stop() -> None:
    """End the converter's worker now (it is also ended at exit)."""
    _service.stop()


# The converter's part of an instance repro script (harness.diff.instance_repro): its
# language, read by Python's re.
INSTANCE_REPRO = """
def accepts(text):
    # the language outlines-core builds for the schema, read by Python's re
    from outlines_core.json_schema import build_regex_from_schema

    return re.fullmatch(build_regex_from_schema(json.dumps(SCHEMA)), text) is not None
"""
