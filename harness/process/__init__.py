"""Isolation: every unit of work that runs an engine (or a library that can hang, abort or
take the machine's memory) runs in a child process, so it costs at most its own result.

- `worker`: `Worker`, a child serving one service under a time and memory limit per
  request, and `Service`, one started on demand and again after each failure;
- `serve`: the child's side (`python -m harness.process.serve`);
- `memory`: resident-set polling of a process tree.

Bench cells, diff cells, jump-forward cells, schema conversions and hypothesis draws all
go through `Worker`.
"""

from harness.process.worker import Reply, Service, Worker

__all__ = ["Reply", "Service", "Worker"]
