"""Pure Plotly builders for the Live model page (no streamlit; tests call them without a server)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from albert_core.format import fmt_bytes
from albert_core.paper import SMOOTHNESS_FIGURE_SHORT
from ui import plotly_dicts
from ui.figure_style import TITLE_FONT, colorscale, si_ticks, subplot_grid

MEASURED_COLOR = "#1f77b4"
ESTIMATE_COLOR = "#9ecae1"


def same_decimals(*values: float, least: int = 3, most: int = 6) -> list[str]:
    """``values`` printed with one number of decimals (at least ``least``), more while two different
    values would print alike: 0.0241 and 1/43 -> '0.024', '0.023' (never '0.02' next to '0.023')."""
    digits = least
    while digits < most and len({f"{v:.{digits}f}" for v in values}) < len(set(values)):
        digits += 1
    return [f"{v:.{digits}f}" for v in values]


def attention_takeaway(weights: np.ndarray, labels: Sequence[str]) -> str:
    """The attention map's conclusion: the query that attends most sharply and its largest weight,
    against a uniform row's 1/T, both with the same decimals."""
    T = len(labels)
    peak_q = int(weights.max(axis=1).argmax())
    peak, uniform = same_decimals(float(weights[peak_q].max()), 1 / T)
    return (f"each row is one query token's attention over the keys (rows sum to 1); here {labels[peak_q]} "
            f"attends most sharply ({peak} on one key), a uniform row would give every key 1/{T} = {uniform}.")


def smoothness_figure(df: pd.DataFrame, title: str = "") -> go.Figure:
    """The ALBERT paper's Figure 2 for this model: per layer, the L2 distance between its input and
    output hidden states, and their cosine similarity as an angle in degrees (raw cosine on hover).

    ``df``: `albert_core.live.analysis.layer_smoothness` (layer, l2_distance, cosine_similarity, angle_degrees).
    """
    layout = subplot_grid(1, 2, ("L2 distance", "angle (degrees)"), horizontal_spacing=0.14)  # short titles: two
    layers = df["layer"].tolist()  # panels share a phone's 360 px
    data = [
        dict(type="scatter", x=layers, y=df["l2_distance"].tolist(), mode="lines+markers", name="L2 distance",
             hovertemplate="layer %{x}<br>L2 %{y:.4g}<extra></extra>", xaxis="x", yaxis="y"),
        dict(type="scatter", x=layers, y=df["angle_degrees"].tolist(), mode="lines+markers", name="angle (degrees)",
             customdata=df["cosine_similarity"].tolist(),
             hovertemplate="layer %{x}<br>%{y:.3g}°, cosine %{customdata:.4f}<extra></extra>", xaxis="x2",
             yaxis="y2"),
    ]
    # at most ~6 ticks a panel: two panels side by side on a phone had 13 labels each, run together
    for axis in ("xaxis", "xaxis2"):
        layout[axis].update(title=dict(text="layer (executed)"), dtick=max(1, -(-len(layers) // 6)))
    for note in layout["annotations"]:
        note["font"] = dict(size=13)
    layout.update(title=dict(text=title or f"Input vs output of every layer ({SMOOTHNESS_FIGURE_SHORT})",
                             font=TITLE_FONT),
                  showlegend=False, margin=dict(l=10, r=10, t=70, b=10))
    return plotly_dicts.figure(data, layout)


def attention_heatmap(weights: np.ndarray, labels: Sequence[str], layer: int, head: int) -> go.Figure:
    """One head's (T, T) attention weights: row = query token, column = key token (rows sum to 1)."""
    labels = list(labels)
    heat = dict(type="heatmap", z=np.asarray(weights).tolist(), x=labels, y=labels, colorscale=colorscale("Viridis"),
                zmin=0.0,
                hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>",
                colorbar=dict(title=dict(text="weight")))
    return plotly_dicts.figure([heat], dict(
        yaxis=dict(autorange="reversed", title=dict(text="query token"), type="category"),
        xaxis=dict(title=dict(text="key token"), type="category", tickangle=-60),
        title=dict(text=f"Attention weights, executed layer {layer + 1}, head {head + 1}", font=TITLE_FONT),
        margin=dict(l=10, r=10, t=50, b=10)))


def activation_bars(measured: int, estimate: int) -> go.Figure:
    """Saved-for-backward activation bytes: measured on the live model vs `estimate_memory`'s estimate."""
    names = ["measured (autograd saved tensors)", "estimate (estimate_memory)"]
    values = [int(measured), int(estimate)]
    bars = dict(type="bar", x=names, y=values, marker=dict(color=[MEASURED_COLOR, ESTIMATE_COLOR]),
                text=[fmt_bytes(v) for v in values], textposition="outside",
                hovertemplate="%{x}<br>%{y:,} bytes<extra></extra>", cliponaxis=False)
    tickvals, ticktext = si_ticks(max(values), fmt_bytes)
    return plotly_dicts.figure([bars], dict(
        title=dict(text="Activations saved for backward, one sequence", font=TITLE_FONT),
        margin=dict(l=10, r=10, t=50, b=10),
        yaxis=dict(title=dict(text="memory saved for backward"), tickvals=tickvals, ticktext=ticktext,
                   range=[0, max(max(values), 1) * 1.15]),
        xaxis=dict(title=dict(text="source")), height=360))
