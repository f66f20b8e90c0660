"""A whole `tokensieve logits` run: the device, every case checked then timed, the table
printed row by row as cases end, then the findings and the files.

The output folder is made before the first case, so a run never measures for minutes and
then finds it cannot write. A case that runs out of memory is one line and the run goes
on with the next.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import xgrammar

from harness.errors import BadInput
from harness.logits import reference, report
from harness.logits.layouts import Case, Check, Layout, bits, check, layouts, make_data
from harness.logits.methods import APPLY
from harness.logits.options import LogitsOptions
from harness.logits.report import CaseResult
from harness.logits.timing import Timings, time_methods
from harness.results.provenance import machine


def drive(options: LogitsOptions) -> int:
    """Run every case of `options` (dtype, then vocabulary size, then batch), print the
    table, the findings and the summary, write the files; 0. torch's thread count is
    set for the run (`options.threads`) and put back after it."""
    device = resolve_device(options.device)
    if options.out.exists() and not options.out.is_dir():
        raise BadInput(f"--out {str(options.out)!r} is a file, not a folder")
    options.out.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(options.threads or threads)
    try:
        meta = environment(device, options)
        results = _cases(options, device, meta)
    finally:
        torch.set_num_threads(threads)
    for line in [*report.findings(results), report.summary(results)]:
        print(line)
    paths = report.write(options.out, meta, results)
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def _cases(options: LogitsOptions, device: torch.device, meta: dict[str, Any]) -> list[CaseResult]:
    """Every case, its table row printed (after the header) as it ends."""
    for line in report.header(meta):
        print(line, flush=True)
    sync = synchronizer(device)
    results = []
    for dtype in options.dtypes:
        for tokens in options.vocabs:
            for batch in options.batches:
                result = run_case(Case(tokens, batch, dtype), options, device, sync)
                results.append(result)
                print(report.row(result), flush=True)
    return results


def resolve_device(name: str) -> torch.device:
    """The torch device named `name` (cpu, cuda, cuda:N), or BadInput when it is not one
    or this machine has none."""
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise BadInput(f"--device {name!r}: not a device (cpu, cuda or cuda:N)") from None
    if device.type == "cpu":
        return device
    if device.type != "cuda":
        raise BadInput(f"--device {name!r}: only cpu and cuda are measured")
    if not torch.cuda.is_available():
        raise BadInput(f"--device {name!r}: no CUDA device here (torch {torch.__version__})")
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise BadInput(f"--device {name!r}: this machine has {count} CUDA device(s)")
    return device if device.index is not None else torch.device("cuda", 0)


def synchronizer(device: torch.device) -> Callable[[], None]:
    """What waits for the device's queued work: CUDA's synchronize, nothing on the CPU."""
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    return lambda: None


def environment(device: torch.device, options: LogitsOptions) -> dict[str, Any]:
    """The run's provenance: device and its name, versions, threads, machine, options."""
    host = machine()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else host["cpu"]
    try:
        xgr_version = importlib.metadata.version("xgrammar")
    except importlib.metadata.PackageNotFoundError:
        xgr_version = str(getattr(xgrammar, "__version__", "unknown"))
    opts = {k: v for k, v in vars(options).items() if k != "out"}
    return {
        "device": str(device),
        "device_name": name or platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "xgrammar": xgr_version,
        "threads": torch.get_num_threads(),
        "python": sys.version.split()[0],
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": host,
        "options": {**opts, "out": str(options.out)},
    }


def run_case(
    case: Case, options: LogitsOptions, device: torch.device, sync: Callable[[], None]
) -> CaseResult:
    """Check `case` in every layout, then time both methods on the dense one; a case
    that runs out of memory ends with the checks it got and a note."""
    result = CaseResult(case, Timings())
    try:
        for layout in layouts(case, options.padding):
            data = make_data(case, layout, options.allowed, options.seed)
            result.checks += check(case, layout, APPLY, device, data, sync)
            if layout.name == "dense":
                dense = (layout, data)
            del data
        result.timings, after = _time(case, dense, options, device, sync)
        result.checks += after
    except (MemoryError, torch.OutOfMemoryError) as exc:
        result.note = f"out of memory: {' '.join(str(exc).split())[:160]}"
    return result


def _time(
    case: Case,
    dense: tuple[Layout, tuple[torch.Tensor, np.ndarray]],
    options: LogitsOptions,
    device: torch.device,
    sync: Callable[[], None],
) -> tuple[Timings, list[Check]]:
    """Time the methods on the dense layout; each method's logits after its last call is
    held to the reference too (layout "dense-timed"), so what was timed is what was
    checked."""
    layout, (base, bitmask) = dense
    logits = base.to(device)
    rounds = (options.warmup, options.reps)
    mask = torch.from_numpy(bitmask).to(device)
    timings, work = time_methods(APPLY, logits, mask, layout.call, rounds, sync)
    want = reference.expected(bits(base, case.dtype), layout.view, bitmask, None, case.dtype)
    checks = []
    for name, tensor in work.items():
        if name not in timings.errors and not np.array_equal(bits(tensor, case.dtype), want):
            detail = "its logits after the timed calls differ from the reference"
            checks.append(Check(case, "dense-timed", name, "wrong", detail))
    return timings, checks
