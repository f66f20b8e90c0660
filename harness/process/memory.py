"""Resident memory of a process and its descendants, as the isolation layer polls it.

Memory is watched from outside rather than capped with `RLIMIT_AS` by default: torch,
which xgrammar loads, reserves far more address space than it ever touches.
"""

from __future__ import annotations

import os

import psutil


def tree_rss(pid: int | None = None) -> int | None:
    """Resident set size of a process and all its descendants, in bytes; None once the
    process is gone. Descendants count because an engine may run helpers of its own."""
    try:
        proc = psutil.Process(os.getpid() if pid is None else pid)
        total = proc.memory_info().rss
        for child in proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                continue
        return int(total)
    except psutil.Error:
        return None


def rss() -> int:
    """This process's resident set size, in bytes."""
    return int(psutil.Process().memory_info().rss)
