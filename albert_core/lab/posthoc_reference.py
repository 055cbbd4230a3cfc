"""The shipped grid of post-hoc variants of MiniLM (`albert_core.lab.posthoc_grid` measures it; the Live model page
and ``python -m albert_core albertize-real`` show it): where it lives and how it is read. No torch, no numpy."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from albert_core.counting.posthoc import Variant

GRID_FILE = Path(__file__).resolve().parent / "reference" / "albertize_real.json"
VERDICTS = ("costs quality", "gains", "not distinguishable")  # a variant against the original (the stated rule)
CLAIM_WORDS = ("agrees", "disagrees", "not separated")  # a paper's claim against what was measured


@lru_cache(maxsize=2)
def load_grid(path: Path = GRID_FILE) -> dict[str, Any] | None:
    """The shipped grid's document (None when the file is missing)."""
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def grid_row(doc: dict[str, Any] | None, v: Variant) -> dict[str, Any] | None:
    """The measured figures of ``v`` in the grid ``doc``, or None."""
    if doc is None:
        return None
    return next((row for row in doc["variants"] if row["key"] == v.key), None)


def write_grid(doc: dict[str, Any], path: Path = GRID_FILE) -> Path:
    """Write the grid's document (sorted keys, no NaN) and forget the cached read."""
    path.write_text(json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8")
    load_grid.cache_clear()
    return path
