"""Pure builders of the Live model page's post-hoc section (no streamlit): what ALBERT's ideas keep of a trained
MiniLM against the parameters they keep, one curve for factorization (E), one for sharing + LoRA rank, one for both
at E = 128, the original as the reference point, every point with its interval and beside its baselines on the same
dev sentences (a figure without them is refused: `check_baselines`), and the grid as a table."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from albert_core.counting.posthoc import GRID_E, GRID_RANKS
from albert_core.lab.posthoc_reference import fmt_p
from ui import plotly_dicts
from ui.colors import ALBERT, BERT
from ui.figure_style import LEGEND_BELOW, TITLE_FONT

FACTORIZED_COLOR = "#2ca02c"
COMBINED_COLOR = "#9467bd"
BASELINE_COLOR = "#7f7f7f"
CURVES = (  # name, colour, the variants' keys in order (most parameters first)
    ("factorization: E", FACTORIZED_COLOR, ["original", *[f"E{e}" for e in sorted(GRID_E, reverse=True)]]),
    ("all shared + LoRA r", ALBERT, [*[f"shared-r{r}" for r in sorted(GRID_RANKS, reverse=True)], "shared"]),
    ("E = 128, shared + LoRA r", COMBINED_COLOR,
     [*[f"E128-shared-r{r}" for r in sorted(GRID_RANKS, reverse=True)], "E128-shared"]),
)
METRICS = {  # metric -> (title, axis, the baselines drawn as lines: (key in doc["baselines"], label))
    "accuracy": ("Accuracy kept against parameters kept", "dev accuracy (%)",
                 (("bag_of_words", "bag-of-words (same train sentences)"), ("majority", "majority class"))),
    "fidelity": ("Fidelity kept against parameters kept", "cosine to the original",
                 (("unrelated_cosine", "unrelated sentences (original)"),)),
}


def check_baselines(doc: dict[str, Any], metric: str) -> list[tuple[str, float]]:
    """The baselines the ``metric``'s figure draws, (label, value); ValueError when the grid lacks one: a measured
    figure is never shown without them."""
    out = []
    for key, label in METRICS[metric][2]:
        value = (doc.get("baselines") or {}).get(key, {}).get("mean")
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"the grid has no {label} baseline: its {metric} is not shown without it")
        out.append((label, float(value)))
    return out


# Points labelled on the chart (the others by their hover): a phone's 390 px leaves no room for a label per rank.
LABELLED = {"E32", "E64", "E128", "E256", "shared", "shared-r64", "E128-shared", "E128-shared-r64"}


def _short(label: str) -> str:
    """'E = 128, shared + LoRA r 8' -> 'r 8'; 'E = 64' -> 'E 64'; 'shared' -> 'shared' (the point's text)."""
    if "LoRA r" in label:
        return "r " + label.rsplit("r ", 1)[1]
    return label.replace("E = ", "E ").replace("E 128, shared", "shared")


def tradeoff_figure(doc: dict[str, Any], metric: str = "accuracy") -> go.Figure:
    """``metric`` ("accuracy" or "fidelity") of every variant against its parameters, both as kept shares of the
    original, with 95 % bootstrap intervals, the baselines as horizontal lines and the original as a star."""
    title, axis, _ = METRICS[metric]
    baselines = check_baselines(doc, metric)
    rows = {r["key"]: r for r in doc["variants"]}
    scale = 100.0 if metric == "accuracy" else 1.0
    orig = rows["original"][metric]["mean"] * scale
    data: list[dict[str, Any]] = []
    for label, value in baselines:
        data.append(dict(type="scatter", x=[0, 105], y=[value * scale] * 2, mode="lines", name=label,
                         line=dict(color=BASELINE_COLOR, dash="dash" if "majority" not in label else "dot", width=1.5),
                         hovertemplate=f"{label}: %{{y:.3g}}<extra></extra>"))
    for name, color, keys in CURVES:
        pts = [rows[k] for k in keys if k in rows]
        if not pts:
            continue
        y = [p[metric]["mean"] * scale for p in pts]
        data.append(dict(
            type="scatter", x=[p["params_kept"] * 100 for p in pts], y=y, mode="lines+markers+text", name=name,
            text=[_short(p["label"]) if p["key"] in LABELLED else "" for p in pts],
            textposition=["top center" if i % 2 else "bottom center" for i in range(len(pts))],
            textfont=dict(size=10, color=color), line=dict(color=color, width=2), marker=dict(size=7, color=color),
            error_y=dict(type="data", symmetric=False, color=color, thickness=1, width=3,
                         array=[(p[metric]["high"] - p[metric]["mean"]) * scale for p in pts],
                         arrayminus=[(p[metric]["mean"] - p[metric]["low"]) * scale for p in pts]),
            customdata=[[p["label"], p["parameters"]] for p in pts],
            hovertemplate="%{customdata[0]}<br>%{customdata[1]:,} parameters (%{x:.1f} %)<br>"
                          f"{axis}: %{{y:.3g}}<extra></extra>"))
    data.append(dict(type="scatter", x=[100.0], y=[orig], mode="markers", name="original (trained MiniLM)",
                     marker=dict(symbol="star", size=15, color=BERT, line=dict(color="white", width=1)),
                     hovertemplate=f"original: 22,713,216 parameters<br>{axis}: %{{y:.3g}}<extra></extra>"))
    lows = [v * scale for _, v in baselines] + [p[metric]["low"] * scale for p in rows.values()]
    highs = [v * scale for _, v in baselines] + [p[metric]["high"] * scale for p in rows.values()]
    bottom, top = min(lows), max(highs)
    pad = (top - bottom) * 0.08
    layout = dict(
        title=dict(text=title, font=TITLE_FONT), legend=LEGEND_BELOW, height=520,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(title=dict(text="parameters kept (% of 22.71M)"), range=[20, 104], ticksuffix=" %"),
        yaxis=dict(title=dict(text=axis), range=[bottom - pad, top + pad]),
    )
    return plotly_dicts.figure(data, layout)


def grid_frame(doc: dict[str, Any]) -> pd.DataFrame:
    """One row per variant and one per baseline, with its counts and measured figures (the baselines' own rows
    beside the variants)."""
    out = []
    resamples = doc["settings"]["bootstrap"]
    for r in doc["variants"]:
        vs = r.get("vs_original")
        out.append({
            "variant": r["label"], "parameters": r["parameters"], "kept %": r["params_kept"] * 100,
            "FLOPs / 128 tokens": r["flops_per_sequence"],
            "fidelity": r["fidelity"]["mean"],
            "fidelity 95 %": f"{r['fidelity']['low']:.3f}-{r['fidelity']['high']:.3f}",
            "accuracy %": r["accuracy"]["mean"] * 100,
            "accuracy 95 %": f"{r['accuracy']['low'] * 100:.1f}-{r['accuracy']['high'] * 100:.1f}",
            "vs original (points)": "" if vs is None else
            f"{vs['effect'] * 100:+.1f} [{vs['low'] * 100:+.1f}, {vs['high'] * 100:+.1f}]",
            "p": "" if vs is None else fmt_p(vs["p"], resamples).removeprefix("p = ").removeprefix("p "),
            "verdict": "reference" if vs is None else vs["verdict"],
            "vs bag-of-words": r["vs_bag_of_words"]["verdict"].replace("costs quality", "below")
                                                           .replace("gains", "above"),
        })
    b = doc["baselines"]
    for key, label in (("bag_of_words", "bag-of-words (same train sentences)"), ("majority", "majority class")):
        out.append({"variant": f"baseline: {label}", "accuracy %": b[key]["mean"] * 100,
                    "accuracy 95 %": f"{b[key]['low'] * 100:.1f}-{b[key]['high'] * 100:.1f}", "verdict": "baseline"})
    u = b["unrelated_cosine"]
    out.append({"variant": "baseline: unrelated sentences (original)", "fidelity": u["mean"],
                "fidelity 95 %": f"{u['low']:.3f}-{u['high']:.3f}", "verdict": "baseline"})
    return pd.DataFrame(out)
