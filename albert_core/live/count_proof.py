"""The count proof: a live model's parameters per component (`live_counts`) beside the closed forms of
`count_params` (`match_table`), one MATCH / MISMATCH mark per component. No torch import (the model is
only walked), no streamlit."""

from __future__ import annotations

from typing import Any

import pandas as pd

from albert_core.counting.params import COMPONENT_INFO, ParamBreakdown, component_of

# Plain words, not emoji: a browser without an emoji font (headless Chromium) drew empty boxes.
MATCH, MISMATCH = "match", "MISMATCH"


def live_counts(model: Any) -> dict[str, int]:
    """Parameters of a live model per component (tied / shared tensors once), on any device."""
    out: dict[str, int] = {}
    for name, p in model.named_parameters():  # named_parameters() yields each tensor once
        comp = component_of(name)
        out[comp] = out.get(comp, 0) + p.numel()
    return out


def match_table(analytic: ParamBreakdown, live: dict[str, int]) -> pd.DataFrame:
    """Component, label, analytic count, live count and a MATCH / MISMATCH mark; the last row holds the totals."""
    names = [c.name for c in analytic.components] + sorted(set(live) - set(analytic.by_name()))
    exact = analytic.by_name()
    rows = []
    for name in names:
        a, b = exact.get(name), live.get(name)
        rows.append({
            "component": name,
            "label": COMPONENT_INFO.get(name, (name, ""))[0],
            "analytic": a,
            "live": b,
            "match": MATCH if a is not None and a == b else MISMATCH,
        })
    a_total, b_total = analytic.total, sum(live.values())
    rows.append({"component": "total", "label": "Total (tied weights once)", "analytic": a_total,
                 "live": b_total, "match": MATCH if a_total == b_total else MISMATCH})
    df = pd.DataFrame(rows)
    return df.astype({"analytic": "Int64", "live": "Int64"})
