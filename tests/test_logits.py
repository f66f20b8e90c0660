"""`tokensieve logits`: both ways of applying a bitmask to logits are held to the numpy
reference in every layout (padded vocabularies, strided rows, column slices, indices), a
wrong or raising method is reported and the run goes on, and bad input is one line with
exit code 2. Small sizes on the CPU; skipped where torch or xgrammar is absent."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("xgrammar")

from harness import cli  # noqa: E402
from harness.logits import methods, reference  # noqa: E402
from harness.logits.methods import Call  # noqa: E402

# 4,099 ids: the last word is partly used; --padding 64 makes padded logits 4,163 wide
SMALL = ["--vocab-sizes", "1000,4099", "--batch", "1,3", "--reps", "2", "--warmup", "1"]
# what xgrammar 0.2.8 does on purpose or by its layout assumptions (see docs/cli.md)
XGRAMMAR_FINDINGS = {"padded-vocab-size", "padded-short-bitmask", "column-strided"}


def logits(tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "out"
    code = cli.main(["logits", *SMALL, "--out", str(out), *extra])
    document = json.loads((out / "logits.json").read_text()) if code == 0 else {}
    return code, document


def statuses(document: dict, method: str) -> dict[str, set[str]]:
    """layout -> the statuses `method` got on it over every case."""
    out: dict[str, set[str]] = {}
    for case in document["cases"]:
        for ch in case["checks"]:
            if ch["method"] == method:
                out.setdefault(ch["layout"], set()).add(ch["status"])
    return out


def test_both_methods_match_the_reference(tmp_path: Path, capsys) -> None:
    code, document = logits(tmp_path)
    assert code == 0
    torch_ = statuses(document, "torch")
    assert set(torch_) >= {"dense", "padded", "rows-strided", "column-slice", "indices"}
    assert all(s == {"ok"} for s in torch_.values()), torch_
    xgr = statuses(document, "xgrammar")
    assert all(s == {"ok"} for layout, s in xgr.items() if layout not in XGRAMMAR_FINDINGS)
    # padding left alone when told the tokenizer's size is xgrammar's documented contract
    assert xgr["padded-vocab-size"] == {"wrong"}
    for case in document["cases"]:
        assert all(len(t["samples_ns"]) == 2 for t in case["timings"].values())
        assert case["xgrammar_over_torch_p50"] > 0
    rows = list(csv.DictReader((tmp_path / "out" / "logits.csv").open()))
    assert [(r["vocab"], r["batch"]) for r in rows] == [
        ("1000", "1"),
        ("1000", "3"),
        ("4099", "1"),
        ("4099", "3"),
    ]
    printed = capsys.readouterr().out
    assert "xgrammar/torch" in printed and "wrong: xgrammar on padded-vocab-size" in printed
    assert document["torch"] == torch.__version__ and document["device"] == "cpu"


def test_a_wrong_and_a_raising_method_are_reported(tmp_path: Path, monkeypatch, capsys) -> None:
    def leaves_the_last_id(logits, bitmask, call: Call) -> None:
        allowed = methods.unpack(bitmask, logits.shape[-1])
        allowed[:, -1] = True
        logits.masked_fill_(~allowed, float("-inf"))

    def raises(logits, bitmask, call: Call) -> None:
        raise RuntimeError("no kernel\nfor this")

    monkeypatch.setitem(methods.APPLY, "torch", leaves_the_last_id)
    monkeypatch.setitem(methods.APPLY, "xgrammar", raises)
    only = ("--vocab-sizes", "1000", "--batch", "3", "--padding", "0", "--threads", "1")
    code, document = logits(tmp_path, *only)
    assert code == 0 and document["threads"] == 1
    assert set().union(*statuses(document, "xgrammar").values()) == {"error"}
    assert statuses(document, "torch")["dense"] == {"wrong"}
    printed = capsys.readouterr().out
    assert "error: xgrammar on dense: 1 of 1 cases" in printed
    assert "raised RuntimeError: no kernel for this" in printed
    assert "wrong: torch on dense" in printed and "refused ids left unmasked" in printed


def test_reference_reads_bits_low_first_and_refuses_past_the_bitmask() -> None:
    bitmask = np.array([[0b101, -1]], dtype=np.int32)
    allowed = reference.unpack(bitmask, 70)
    assert list(np.flatnonzero(allowed[0])) == [0, 2, *range(32, 64)]
    for dtype, bits in reference.NEG_INF_BITS.items():
        as_torch = torch.tensor(float("-inf"), dtype=getattr(torch, dtype))
        assert as_torch.view(torch.int32 if dtype == "float32" else torch.int16).item() == bits
    torch_bits = methods.unpack(torch.from_numpy(bitmask), 70).numpy()
    assert np.array_equal(torch_bits, allowed)


BAD = [
    (["--device", "nope"], "--device"),
    (["--device", "tpu"], "--device"),
    (["--batch", "0"], "--batch"),
    (["--vocab-sizes", "1,,2"], "--vocab-sizes"),
    (["--dtype", "float64"], "--dtype"),
    (["--allowed", "nan"], "--allowed"),
]


@pytest.mark.parametrize(("argv", "named"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_exit_2(argv: list[str], named: str, tmp_path: Path, capsys):
    code = cli.main(["logits", *SMALL, "--out", str(tmp_path / "out"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and named in err, err
    assert not (tmp_path / "out").exists()


def test_cuda_absent_or_an_out_that_is_a_file(tmp_path: Path, capsys) -> None:
    if not torch.cuda.is_available():
        assert cli.main(["logits", *SMALL, "--device", "cuda"]) == 2
        assert "no CUDA device" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert cli.main(["logits", *SMALL, "--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_a_missing_package_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "xgrammar", None)
    assert cli.main(["logits", *SMALL, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "xgrammar is not installed" in err, err
