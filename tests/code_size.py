"""The size limits `make lint` holds the code to: no module over 500 lines (the Python of
`harness/`, `tests/` and `benchmarks/`, and the Rust of `engines/`), and no Python function
over 80 lines.

Why: a module or function past these sizes has stopped being one idea a reader holds at
once; the limit makes the split happen when the code grows, not in a later clean-up. Rust
function length is clippy's (`too_many_lines`, engines/clippy.toml), not this script's.

How lines are counted: a module's lines are its physical lines (what `wc -l` counts); a
function's run from its `def` line to its last line (decorators not counted; comments,
docstrings and blank lines inside count), for every function, method and nested function.

`python -m tests.code_size [ROOT]` (ROOT: the repository, by default the one this file is
in) prints each offender as `path:line: what is N lines (limit L)`, paths relative to
ROOT, and exits 1 when there is any, 0 otherwise.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MODULE_LIMIT = 500
FUNCTION_LIMIT = 80
PYTHON_DIRS = ("harness", "tests", "benchmarks")
RUST_DIRS = ("engines",)
# Directories never read: build outputs, caches, environments.
SKIPPED = frozenset({"target", "__pycache__", ".venv", "node_modules", ".git"})


@dataclass(frozen=True)
class Offender:
    """One thing over its limit: `what` ("module", "function NAME") at `path`:`line`."""

    path: str
    line: int
    what: str
    lines: int
    limit: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what} is {self.lines} lines (limit {self.limit})"


def _files(root: Path, dirs: tuple[str, ...], suffix: str) -> Iterator[Path]:
    """Every `*suffix` file under `root`/`dirs`, sorted, outside SKIPPED directories."""
    for top in dirs:
        for path in sorted((root / top).rglob(f"*{suffix}")):
            if path.is_file() and not SKIPPED & set(path.relative_to(root).parts):
                yield path


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _module(path: str, text: str) -> list[Offender]:
    lines = _line_count(text)
    return [Offender(path, 1, "module", lines, MODULE_LIMIT)] if lines > MODULE_LIMIT else []


def _functions(path: str, text: str) -> list[Offender]:
    """The functions of one Python module over FUNCTION_LIMIT (a module that does not
    parse raises SyntaxError: ruff, which `make lint` runs first, names it better)."""
    out = []
    for node in ast.walk(ast.parse(text, filename=path)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > FUNCTION_LIMIT:
                what = f"function {node.name}"
                out.append(Offender(path, node.lineno, what, size, FUNCTION_LIMIT))
    return out


def offenders(root: Path) -> list[Offender]:
    """Everything under `root` over its limit, by path then line."""
    out: list[Offender] = []
    for path in _files(root, PYTHON_DIRS, ".py"):
        rel, text = path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")
        out += _module(rel, text) + _functions(rel, text)
    for path in _files(root, RUST_DIRS, ".rs"):
        rel = path.relative_to(root).as_posix()
        out += _module(rel, path.read_text(encoding="utf-8"))
    return sorted(out, key=lambda o: (o.path, o.line))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    found = offenders(root)
    for offender in found:
        print(offender)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
