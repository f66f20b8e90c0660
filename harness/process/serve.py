"""The child side of a `Worker`: `python -m harness.process.serve`.

Protocol, one JSON line each way:
- the parent's first line is the header `{"service": "module:factory", "setup": ...,
  "parent": PID, "address_space": bytes or null}`; the child builds the service with
  `factory(setup)` and answers `{"ok": service.ready}` (or an error reply, then exits);
- each later line is a request; the answer is `{"ok": service.handle(request)}`, or
  `{"error": {"status": ..., "message": ...}}` when `handle` raised: UnsupportedSpec is
  `unsupported`, MemoryError `oom`, anything else `error`. The kind comes from the
  exception's type, never from its message.

Replies go to a private duplicate of the original stdout; file descriptor 1 is pointed at
stderr (a file the parent reads the tail of after a crash), so an engine printing to
stdout cannot corrupt the protocol. The child ignores SIGINT (Ctrl-C belongs to the
parent) and asks Linux to kill it when the parent dies, so a killed controller leaves no
orphan working on.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import sys
import traceback
from typing import IO, Any

from harness.errors import TokensieveError, UnsupportedSpec, WorkBudget
from harness.results.status import Status


def error_reply(exc: BaseException) -> dict[str, Any]:
    """The error reply for an exception raised by a service, classified by its type."""
    if isinstance(exc, UnsupportedSpec):
        status, message = Status.UNSUPPORTED, str(exc)
    elif isinstance(exc, WorkBudget):
        status, message = Status.TIMEOUT, str(exc)
    elif isinstance(exc, MemoryError):
        status, message = Status.OOM, f"MemoryError: {exc}".rstrip(": ")
    elif isinstance(exc, TokensieveError):
        status, message = Status.ERROR, str(exc)
    else:
        status, message = Status.ERROR, f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return {"error": {"status": status.value, "message": message}}


def _die_with_parent(parent: int | None) -> None:
    """Ask Linux to SIGKILL this process when its parent exits."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:  # it died before prctl took effect
        os._exit(1)


def _limit_address_space(limit: int | None) -> None:
    """With a limit, an allocation past it fails in this process instead of taking the
    machine (Rust code then aborts, which the parent reports). Only for services that
    load no torch, which reserves far more address space than it uses."""
    if limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _send(out: IO[str], message: Any) -> None:
    # ASCII escapes: a reply may quote text holding lone surrogates.
    out.write(json.dumps(message) + "\n")
    out.flush()


def build(spec: str, setup: Any) -> Any:
    """The service `module:factory` built with `setup`."""
    module_name, _, factory = spec.partition(":")
    return getattr(importlib.import_module(module_name), factory)(setup)


def serve(inp: IO[str], out: IO[str]) -> int:
    header = json.loads(inp.readline())
    _die_with_parent(header.get("parent"))
    _limit_address_space(header.get("address_space"))
    try:
        service = build(header["service"], header.get("setup"))
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        _send(out, error_reply(exc))
        return 0
    _send(out, {"ok": getattr(service, "ready", None)})
    for line in inp:
        try:
            reply = {"ok": service.handle(json.loads(line))}
        except BaseException as exc:  # pyo3 panics derive from BaseException
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            reply = error_reply(exc)
        _send(out, reply)
    return 0


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        return serve(sys.stdin, protocol)
    except BrokenPipeError:
        return 0
    except Exception:
        traceback.print_exc()
        return 3


if __name__ == "__main__":
    sys.exit(main())
