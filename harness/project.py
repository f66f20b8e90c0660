"""Where the project's own files are: the checkout the harness runs from, or where the
wheel installed it (`harness/` and `corpora/` side by side in site-packages: maturin
places the files it includes at the wheel's root). A leaf, so that every layer can name a
file of the project without importing the layer that reads it."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CORPORA_DIR = PROJECT_ROOT / "corpora"
