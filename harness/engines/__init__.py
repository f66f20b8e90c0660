"""Engines: one adapter per constrained-decoding engine behind one interface.

- `base`: the interface (`Engine` prepares a vocabulary, compiles a `Spec`, hands out
  `Matcher`s that fill the int32 bitmask, advance and say whether EOS may end the text),
  with each engine's declared `Capabilities` and `Policies`;
- one module per adapter: `naive` (the reference), `tokensdfa` (our engine, three forms,
  over `rust_index`), `outlines`, `llguidance`, `xgrammar`, `lmformatenforcer`,
  `formatron`, `tcfg` (transformers-CFG, grammars only); each also owns the part of the
  differ's repro scripts that drives its engine;
- `versions`: any release of an engine (`NAME@VERSION`), installed once into the cache
  and put first on a worker's import path;
- `converter_subject`: outlines-core's schema converter as a subject the differ judges on
  instances when the run converts with ours (not an engine a user selects or times);
- `reference`: the one builder of the reference naive index;
- `support`: the mask buffer check, message cleaning, and the unsupported-or-invalid rule.

Adapter modules are imported only when an engine is asked for by name, and each adapter
imports its engine's package only inside its methods: a missing or broken package then
costs nothing but that engine's availability, and torch is loaded only when xgrammar is
actually used. Tests add engines through `TOKENSIEVE_EXTRA_ENGINES`
("name=module:Class,..."), read wherever a name is resolved, so a worker process builds
them too; the registry itself never changes.
"""

from __future__ import annotations

import importlib
import os

from harness.engines.base import Engine
from harness.errors import BadInput, UnknownName

# name -> (module, class); the reference comes first, so reports list it first.
_ADAPTERS: dict[str, tuple[str, str]] = {
    "naive": ("harness.engines.naive", "NaiveEngine"),
    "outlines-core": ("harness.engines.outlines", "OutlinesCoreEngine"),
    "llguidance": ("harness.engines.llguidance", "LLGuidanceEngine"),
    "xgrammar": ("harness.engines.xgrammar", "XGrammarEngine"),
    "lm-format-enforcer": ("harness.engines.lmformatenforcer", "LMFormatEnforcerEngine"),
    "formatron": ("harness.engines.formatron", "FormatronEngine"),
    "transformers-cfg": ("harness.engines.tcfg", "TCFGEngine"),
    "tokensdfa": ("harness.engines.tokensdfa", "TokensDFAEngine"),
    "tokensdfa-canonical": ("harness.engines.tokensdfa", "TokensDFACanonicalEngine"),
    "tokensdfa-lazy": ("harness.engines.tokensdfa", "TokensDFALazyEngine"),
    "tokensdfa-pushdown": ("harness.engines.tokensdfa", "TokensDFAPushdownEngine"),
}
ENGINE_NAMES: tuple[str, ...] = tuple(_ADAPTERS)
# Subjects the differ judges that are not engines a user selects or times: outlines-core's
# schema converter beside ours (`converter_subject`).
_SUBJECTS: dict[str, tuple[str, str]] = {
    "outlines-core-converter": ("harness.engines.converter_subject", "OutlinesConverterSubject"),
}
EXTRA_ENGINES_ENV = "TOKENSIEVE_EXTRA_ENGINES"


def extra_engines() -> dict[str, tuple[str, str]]:
    """name -> (module, class) from TOKENSIEVE_EXTRA_ENGINES."""
    raw = os.environ.get(EXTRA_ENGINES_ENV, "")
    out: dict[str, tuple[str, str]] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        name, sep, target = item.partition("=")
        module, colon, cls = target.partition(":")
        if not sep or not colon:
            raise BadInput(f"{EXTRA_ENGINES_ENV}: want name=module:Class, got {item!r}")
        out[name.strip()] = (module.strip(), cls.strip())
    return out


def names() -> list[str]:
    """Every engine name `get` accepts: the registry's, then any extra ones."""
    return [*ENGINE_NAMES, *extra_engines()]


def check(name: str) -> None:
    """Raise UnknownName (or BadInput, for a bad `@VERSION`) unless `get(name)` can build
    the adapter. `NAME@VERSION` names a release of an engine with one on PyPI."""
    if "@" in name:
        from harness.engines import versions

        versions.parse(name)
    elif name not in names():
        raise UnknownName("engine", name, names())


def get(name: str) -> Engine:
    """A fresh adapter for `name`; for `NAME@VERSION`, NAME's adapter named so (the
    release itself is what its worker process imports: `environment`)."""
    base = name.partition("@")[0]
    target = _ADAPTERS.get(base) or _SUBJECTS.get(base) or extra_engines().get(base)
    if target is None:
        raise UnknownName("engine", name, names())
    module_name, class_name = target
    engine: Engine = getattr(importlib.import_module(module_name), class_name)()
    if base != name:
        check(name)
        engine.name = name
    return engine


def environment(names_: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The environment of a worker process that runs the engines `names_`: the current
    one, with every `NAME@VERSION` release first on the import path (installed on first
    use). Two releases of one engine cannot share a process: BadInput."""
    from harness.engines import versions

    env = dict(os.environ)
    chosen: dict[str, str | None] = {}
    first: list[str] = []
    for full in names_:
        base, version = versions.parse(full)
        if base in chosen and chosen[base] != version:
            raise BadInput(
                f"{base}: two releases ({chosen[base] or 'pinned'}, {version or 'pinned'}) "
                "cannot run in one process; run them in separate commands"
            )
        chosen[base] = version
        if version is not None:
            first.append(str(versions.install(base, version)))
    if first:
        rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in first]
        env["PYTHONPATH"] = os.pathsep.join([*first, *rest])
    return env


def all_engines() -> list[Engine]:
    """One adapter per registered engine, available or not (ask `available()`)."""
    return [get(name) for name in ENGINE_NAMES]
