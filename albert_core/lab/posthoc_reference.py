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


def fmt_p(p: float, resamples: int) -> str:
    """A bootstrap p-value: 'p = 0.38', or 'p < 0.0005' when no resample of ``resamples`` crossed zero (the
    bootstrap cannot say less than 1 / resamples)."""
    return f"p < {1 / resamples:.2g}" if p == 0 else f"p = {p:.2g}"


def verdict_phrase(test: dict[str, Any], resamples: int) -> str:
    """'+1.2 points [+0.4, +2.0], p = 0.004'."""
    return (f"{points(test['effect'])} points [{points(test['low'])}, {points(test['high'])}], "
            f"{fmt_p(test['p'], resamples)}")


# What the paper did that this measurement does not (said beside each claim)
CLAIM_NOTES = {
    "factorization": " (the SVD of the trained table, not a table pretrained at E = 128 as ALBERT's)",
    "sharing": " (the layers' mean, not a shared layer pretrained as ALBERT's)",
    "relaxed": " (the LoRA as the SVD initialises it, never trained; the paper uptrains it)",
}


def claim_sentence(claim: dict[str, Any], doc: dict[str, Any]) -> str:
    """The paper's claim, then what was measured here and the word: agrees / disagrees / not separated."""
    rows = {r["key"]: r for r in doc["variants"]}
    accs = ", ".join(f"{rows[k]['label']} {rows[k]['accuracy']['mean']:.1%}" for k in claim["variants"] if k in rows)
    extra = ""
    share = claim.get("recovered_share")
    if share is not None and {"original", "shared"} <= set(rows):
        lost = rows["original"]["accuracy"]["mean"] - rows["shared"]["accuracy"]["mean"]
        extra = (f"; of the {points(lost, signed=False)} points sharing lost it recovered "
                 + (f"{share:.0%}" if share > 0 else f"none ({points(share * lost)} points)"))
    note = next((n for prefix, n in CLAIM_NOTES.items() if claim["key"].startswith(prefix)), "")
    return (f"{claim['source']}: {claim['claim']}. Here, post hoc on the trained MiniLM{note}: {accs}; "
            f"{claim['test']}: {verdict_phrase(claim, doc['settings']['bootstrap'])}{extra}. "
            f"**{claim['word'].capitalize()}.**")
