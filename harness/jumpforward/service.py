"""The worker side of a jump-forward run: built once per vocabulary in a worker process
(`harness.process`), with every engine prepared, it answers two requests:

- `{"op": "measure", "engine", "spec", "set", "paths"}`: the jump-forward figures of every
  token path of the spec for one engine (`analyze_path`), as rows;
- `{"op": "cross_check", "spec", "paths"}`: forced texts of every engine that exposes
  them, compared state by state against the reference (`compare_forced`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from harness import engines, vocab
from harness.errors import TokensieveError
from harness.jumpforward.analysis import analyze_path, compare_forced
from harness.language import converter
from harness.spec import Spec


class JumpService:
    def __init__(self, setup: dict[str, Any]) -> None:
        self.vocab = vocab.load(setup["vocab"])
        self.engines = {name: engines.get(name) for name in setup["engines"]}
        self.prepared = {name: e.prepare(self.vocab) for name, e in self.engines.items()}
        self.ready = {name: e.version() for name, e in self.engines.items()}

    def handle(self, request: dict[str, Any]) -> Any:
        spec = Spec.from_json(request["spec"])
        paths = [(p["text"], p["ids"]) for p in request["paths"]]
        if request["op"] == "measure":
            return self.measure(request["engine"], spec, request["set"], paths)
        return self.cross_check(spec, paths)

    def measure(
        self, name: str, spec: Spec, set_name: str, paths: list[tuple[str, list[int]]]
    ) -> list[dict[str, Any]]:
        """Jump-forward figures of every path of `spec` for one engine."""
        compiled = self.engines[name].compile(self.prepared[name], spec)
        rows = []
        for text, ids in paths:
            r = analyze_path(name, compiled, self.vocab, spec.id, text, ids)
            if r is not None:
                rows.append({"set": set_name, **r.row()})
        return rows

    def cross_check(self, spec: Spec, paths: list[tuple[str, list[int]]]) -> dict[str, Any]:
        """Forced texts of every engine that exposes them, compared state by state."""
        ref_index = converter.reference_index(spec, self.vocab)
        compiled = {}
        for name, e in self.engines.items():
            try:
                compiled[name] = e.compile(self.prepared[name], spec)
            except TokensieveError:
                continue
        n, found = 0, []
        for _, ids in paths:
            with_text = {
                name: c.matcher()
                for name, c in compiled.items()
                if c.matcher().forced_text() is not None
            }
            if len(with_text) > 1:
                k, f = compare_forced(with_text, ref_index, self.vocab, spec.id, ids)
                n += k
                found.extend(f)
        if spec.kind == "json_schema":
            # the reference walks the converted regex; engines that compile the schema
            # themselves face the schema's own language, so only relative verdicts hold
            native = {n for n, e in self.engines.items() if e.capabilities.json_schema == "native"}
            for d in found:
                for name in native & set(d.verdicts):
                    if d.verdicts[name] == "overreach":
                        d.verdicts[name] = "native-json-language"
        return {"states": n, "disagreements": [asdict(d) for d in found]}
