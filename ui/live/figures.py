"""Pure Plotly builders for the Live model page (no streamlit; tests call them without a server)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from albert_core.format import fmt_bytes
from albert_core.paper import SMOOTHNESS_FIGURE_SHORT
from ui.figure_style import TITLE_FONT, si_ticks

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
    fig = make_subplots(rows=1, cols=2, subplot_titles=("L2 distance", "angle (degrees)"),
                        horizontal_spacing=0.14)  # short titles: two panels share a phone's 360 px
    layers = df["layer"].tolist()
    fig.add_trace(go.Scatter(
        x=layers, y=df["l2_distance"].tolist(), mode="lines+markers", name="L2 distance",
        hovertemplate="layer %{x}<br>L2 %{y:.4g}<extra></extra>",
    ), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=layers, y=df["angle_degrees"].tolist(), mode="lines+markers", name="angle (degrees)",
        customdata=df["cosine_similarity"].tolist(),
        hovertemplate="layer %{x}<br>%{y:.3g}°, cosine %{customdata:.4f}<extra></extra>",
    ), row=1, col=2)
    # at most ~6 ticks a panel: two panels side by side on a phone had 13 labels each, run together
    fig.update_xaxes(title_text="layer (executed)", dtick=max(1, -(-len(layers) // 6)))
    fig.update_annotations(font=dict(size=13))
    fig.update_layout(title=dict(text=title or f"Input vs output of every layer ({SMOOTHNESS_FIGURE_SHORT})",
                                 font=TITLE_FONT),
                      showlegend=False,
                      margin=dict(l=10, r=10, t=70, b=10))
    return fig


def attention_heatmap(weights: np.ndarray, labels: Sequence[str], layer: int, head: int) -> go.Figure:
    """One head's (T, T) attention weights: row = query token, column = key token (rows sum to 1)."""
    labels = list(labels)
    fig = go.Figure(go.Heatmap(
        z=np.asarray(weights).tolist(), x=labels, y=labels, colorscale="Viridis", zmin=0.0,
        hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>",
        colorbar=dict(title="weight"),
    ))
    fig.update_yaxes(autorange="reversed", title_text="query token", type="category")
    fig.update_xaxes(title_text="key token", type="category", tickangle=-60)
    fig.update_layout(title=dict(text=f"Attention weights, executed layer {layer + 1}, head {head + 1}",
                                 font=TITLE_FONT),
                      margin=dict(l=10, r=10, t=50, b=10))
    return fig


def activation_bars(measured: int, estimate: int) -> go.Figure:
    """Saved-for-backward activation bytes: measured on the live model vs `estimate_memory`'s estimate."""
    names = ["measured (autograd saved tensors)", "estimate (estimate_memory)"]
    values = [int(measured), int(estimate)]
    fig = go.Figure(go.Bar(
        x=names, y=values, marker_color=[MEASURED_COLOR, ESTIMATE_COLOR],
        text=[fmt_bytes(v) for v in values], textposition="outside",
        hovertemplate="%{x}<br>%{y:,} bytes<extra></extra>", cliponaxis=False,
    ))
    tickvals, ticktext = si_ticks(max(values), fmt_bytes)
    fig.update_layout(title=dict(text="Activations saved for backward, one sequence", font=TITLE_FONT),
                      margin=dict(l=10, r=10, t=50, b=10),
                      yaxis=dict(title="memory saved for backward", tickvals=tickvals, ticktext=ticktext,
                                 range=[0, max(max(values), 1) * 1.15]),
                      xaxis_title="source", height=360)
    return fig
