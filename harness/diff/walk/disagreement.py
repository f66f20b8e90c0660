"""What the differ records: one `Disagreement` per (engine, state) where an engine's mask
or accepting status differs from the reference's, and a cell's `SpecDiff`. Both cross
process boundaries and live in the store as JSON (`to_json` / `from_json`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.diff.judge.triage import VerdictKind
from harness.diff.walk.history import describe


@dataclass
class Disagreement:
    engine: str
    version: str
    spec_id: str
    vocab: str
    regex: str
    prefix_ids: tuple[int, ...]
    prefix: bytes
    reference_only: tuple[int, ...]
    engine_only: tuple[int, ...]
    n_reference_only: int
    n_engine_only: int
    accepting_expected: bool
    accepting_actual: bool
    verdict: VerdictKind
    rule: str  # the policy or the bug signature (`harness.diff.judge.triage.Verdict`)
    why: str
    # does the engine's mask equal TokensDFA exact's (which should equal the reference)?
    agrees_with_tokensdfa: bool
    what: str = "mask"  # "mask", or "advance" when the engine refused a token it allowed
    # the EOS bit of the engine's mask (None: not recorded, as in runs stored before it)
    eos_bit_actual: bool | None = None
    # for `stale-after-reset`: what the engine's matcher did before it was reset and
    # walked `prefix_ids` (`harness.diff.walk.history`), which a new matcher replays to give
    # the same wrong answer
    history: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Lossless, for the store and the worker's reply; the regex is left out (the
        cell's `SpecDiff` holds it once) and bytes are hex."""
        out = asdict(self)
        del out["regex"]
        out["prefix"] = self.prefix.hex()
        return out

    @staticmethod
    def from_json(data: dict[str, Any], regex: str) -> Disagreement:
        fields = dict(data)
        fields["prefix"] = bytes.fromhex(fields["prefix"])
        fields["verdict"] = VerdictKind(fields["verdict"])
        for key in ("prefix_ids", "reference_only", "engine_only", "history"):
            if key in fields:
                fields[key] = tuple(fields[key])
        return Disagreement(regex=regex, **fields)

    def example(self, tokens: Sequence[bytes]) -> dict[str, Any]:
        """For people: the disagreement with its tokens shown as hex and text."""

        def show(ids: Sequence[int]) -> list[dict[str, Any]]:
            return [{"id": i, "hex": tokens[i].hex(), "text": _text(tokens[i])} for i in ids]

        return {
            "engine": self.engine,
            "version": self.version,
            "spec": self.spec_id,
            "vocab": self.vocab,
            "regex": self.regex,
            "prefix_ids": list(self.prefix_ids),
            "prefix_hex": self.prefix.hex(),
            "prefix_text": _text(self.prefix),
            "reference_only": show(self.reference_only),
            "engine_only": show(self.engine_only),
            "n_reference_only": self.n_reference_only,
            "n_engine_only": self.n_engine_only,
            "accepting_expected": self.accepting_expected,
            "accepting_actual": self.accepting_actual,
            "verdict": self.verdict,
            "rule": self.rule,
            "why": self.why,
            "agrees_with_tokensdfa": self.agrees_with_tokensdfa,
            "what": self.what,
            "eos_bit_actual": self.eos_bit_actual,
            # what the matcher did before its reset (`stale-after-reset`,
            # `harness.diff.walk.history`): replay it, reset, walk prefix_ids
            "history": list(self.history),
            "history_text": describe(self.history, tokens),
        }


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="backslashreplace")


@dataclass
class SpecDiff:
    spec_id: str
    vocab: str
    regex: str
    states: dict[str, int] = field(default_factory=dict)  # per engine, distinct states
    disagreements: list[Disagreement] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # engine -> why not compared
    steps: dict[str, int] = field(default_factory=dict)  # per engine, comparisons made
    # per engine compared against another regex than `regex` (a native JSON engine in
    # its own dialect, `harness.diff.walk.dialects`): that regex
    lane_regex: dict[str, str] = field(default_factory=dict)
    # per engine, serving-protocol walks taken and operations done in them
    # (`harness.diff.walk.serving`)
    protocol_walks: dict[str, int] = field(default_factory=dict)
    protocol_ops: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "spec_id": self.spec_id,
            "vocab": self.vocab,
            "regex": self.regex,
            "states": self.states,
            "disagreements": [d.to_json() for d in self.disagreements],
            "skipped": self.skipped,
            "steps": self.steps,
            "lane_regex": self.lane_regex,
            "protocol_walks": self.protocol_walks,
            "protocol_ops": self.protocol_ops,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> SpecDiff:
        regex = data["regex"]
        lanes = dict(data.get("lane_regex", {}))
        return SpecDiff(
            data["spec_id"],
            data["vocab"],
            regex,
            dict(data["states"]),
            [
                Disagreement.from_json(d, lanes.get(d["engine"], regex))
                for d in data["disagreements"]
            ],
            dict(data["skipped"]),
            dict(data.get("steps", {})),
            lanes,
            dict(data.get("protocol_walks", {})),
            dict(data.get("protocol_ops", {})),
        )
