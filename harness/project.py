"""Where the project's own files are: the checkout (or installed tree) the harness runs
from. A leaf, so that every layer can name a file of the project without importing the
layer that reads it."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CORPORA_DIR = PROJECT_ROOT / "corpora"
