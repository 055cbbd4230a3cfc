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


# ----------------------------------------------------------------------------- words
def points(x: float, signed: bool = True) -> str:
    """An accuracy difference in points: 0.0123 -> '+1.2'."""
    return f"{x * 100:+.1f}" if signed else f"{x * 100:.1f}"


def how_measured(doc: dict[str, Any]) -> str:
    """Where and how the grid was measured: data, subsample, seeds, CPU, threads, load, time."""
    d, env, load = doc["data"], doc["environment"], doc["load_average"]
    s = doc["settings"]
    return (f"Measured once and shipped: every one of the {d['dev_scored']:,} dev sentences of the probe's Rotten "
            f"Tomatoes split is scored; the regressions are fitted on {d['train_per_seed']:,} of its "
            f"{d['train']:,} train sentences per train seed (seeds {', '.join(map(str, d['train_seeds']))}: a "
            f"subsample, to keep the grid near 20 CPU-minutes); intervals from {s['bootstrap']:,} paired bootstrap "
            f"resamples of the dev sentences (seed {s['bootstrap_seed']}). {env['cpu']}, {doc['threads']} torch "
            f"thread at nice 19, {doc['seconds']['cpu'] / 60:.0f} CPU-minutes ({doc['seconds']['wall'] / 60:.0f} "
            f"minutes of wall time) while the 2-core machine's load average was {load['during']['min']:.1f}-"
            f"{load['during']['max']:.1f}; torch {env['torch']}.")


def verdict_phrase(test: dict[str, Any]) -> str:
    """'+1.2 points [0.4, 2.0], p = 0.004'."""
    return (f"{points(test['effect'])} points [{points(test['low'])}, {points(test['high'])}], "
            f"p = {test['p']:.2g}")


def claim_sentence(claim: dict[str, Any], doc: dict[str, Any]) -> str:
    """The paper's claim, then what was measured here and the word: agrees / disagrees / not separated."""
    rows = {r["key"]: r for r in doc["variants"]}
    accs = ", ".join(f"{rows[k]['label']} {rows[k]['accuracy']['mean']:.1%}" for k in claim["variants"] if k in rows)
    extra = ""
    if claim.get("recovered_share") is not None:
        extra = f"; it recovered {claim['recovered_share']:.0%} of the accuracy sharing lost"
    return (f"{claim['source']}: {claim['claim']}. Here, post hoc on the trained MiniLM: {accs}; {claim['test']}: "
            f"{verdict_phrase(claim)}{extra}. **{claim['word'].capitalize()}.**")
