"""Pure Plotly builders for the Explorer and Compare pages (no streamlit import).

Inputs are a `ParamBreakdown`, a `ui.exports.report` dict or a DataFrame of pinned configs; every
figure's numbers are exactly those inputs, so tests compare trace values with the breakdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from albert_core.format import fmt_bytes, fmt_flops, fmt_params, fmt_pct
from albert_core.params import COMPONENT_INFO, ParamBreakdown

GROUP_COLORS = {"embeddings": "#4c78a8", "encoder": "#f58518", "heads": "#54a24b"}
CONFIG_COLOR, TWIN_COLOR = "#1f77b4", "#ff7f0e"
_MARGIN = dict(l=10, r=10, t=60, b=10)

# Compare metrics: (DataFrame column, axis label, formatter).
COMPARE_METRICS: Sequence[tuple[str, str, Any]] = (
    ("params", "Parameters", fmt_params),
    ("forward_flops", "Forward FLOPs / sequence", fmt_flops),
    ("training_memory", "Training memory", fmt_bytes),
)


def breakdown_treemap(bd: ParamBreakdown) -> go.Figure:
    """Treemap of unique parameters: model -> group (embeddings / encoder / heads) -> component."""
    groups = {g: n for g, n in bd.group_totals().items() if n}
    ids = ["model", *groups, *(c.name for c in bd.components)]
    labels = [bd.config.label, *(g.capitalize() for g in groups), *(c.label for c in bd.components)]
    parents = ["", *(["model"] * len(groups)), *(c.group for c in bd.components)]
    values = [bd.total, *groups.values(), *(c.params for c in bd.components)]
    colors = ["#ffffff", *(GROUP_COLORS[g] for g in groups), *(GROUP_COLORS[c.group] for c in bd.components)]
    fig = go.Figure(
        go.Treemap(
            ids=ids, labels=labels, parents=parents, values=values, branchvalues="total",
            marker=dict(colors=colors),
            text=[fmt_params(v) for v in values],
            texttemplate="%{label}<br>%{text}<br>%{percentRoot:.1%}",
            hovertemplate="%{label}: %{value:,} params (%{percentRoot:.2%} of the model)<extra></extra>",
        )
    )
    fig.update_layout(title="Where the parameters are", margin=_MARGIN)
    return fig


def flops_bars(components: Mapping[str, int]) -> go.Figure:
    """Horizontal bars of forward FLOPs per component (one sequence), largest first."""
    items = sorted(((n, v) for n, v in components.items() if v), key=lambda kv: kv[1])
    names = [COMPONENT_INFO.get(n, (n, ""))[0] for n, _ in items]
    values = [v for _, v in items]
    colors = [GROUP_COLORS.get(COMPONENT_INFO.get(n, ("", "encoder"))[1], "#999999") for n, _ in items]
    fig = go.Figure(
        go.Bar(
            x=values, y=names, orientation="h", marker_color=colors,
            text=[fmt_flops(v) for v in values], textposition="auto",
            hovertemplate="%{y}: %{x:,} FLOP<extra></extra>",
        )
    )
    fig.update_layout(title="Forward FLOPs per sequence, by component", xaxis_title="FLOP",
                      margin=_MARGIN, height=max(260, 32 * len(items) + 100))
    return fig


def twin_metrics(rep: Mapping[str, Any]) -> list[tuple[str, float, float, Any]]:
    """(metric, this config, BERT twin, formatter) for the "faster or smaller than BERT?" chart."""
    twin = rep["bert_twin"]
    rows: list[tuple[str, float, float, Any]] = [
        ("Parameters", rep["params"]["total"], twin["params"], fmt_params),
        ("Forward FLOPs", rep["flops"]["forward_per_sequence"], twin["flops"]["forward_per_sequence"], fmt_flops),
    ]
    mem, twin_mem = rep["memory"]["training"], twin["memory"]["training"]
    if mem is None:  # int8: inference only
        mem, twin_mem = rep["memory"]["inference"], twin["memory"]["inference"]
    rows += [
        ("Activations", mem["activations"], twin_mem["activations"], fmt_bytes),
        ("Weights memory", mem["weights"], twin_mem["weights"], fmt_bytes),
    ]
    return rows


def twin_bars(rep: Mapping[str, Any]) -> go.Figure:
    """This config against its BERT twin, each metric relative to the twin (twin = 100%)."""
    rows = twin_metrics(rep)
    names = [r[0] for r in rows]
    fig = go.Figure()
    for label, idx, color in (("this config", 1, CONFIG_COLOR), ("BERT twin", 2, TWIN_COLOR)):
        fig.add_trace(
            go.Bar(
                name=label, x=names, y=[r[idx] / r[2] for r in rows], marker_color=color,
                text=[r[3](r[idx]) for r in rows], textposition="outside",
                customdata=[r[idx] for r in rows],
                hovertemplate="%{x}: %{customdata:,} (%{y:.1%} of the twin)<extra>" + label + "</extra>",
            )
        )
    fig.update_layout(barmode="group", title="This config vs its BERT twin (twin = 100%)",
                      yaxis=dict(tickformat=".0%", title="relative to the BERT twin"), margin=_MARGIN)
    return fig


def compare_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Pinned configs (name + the COMPARE_METRICS columns), with deltas relative to the first row."""
    df = pd.DataFrame(list(rows))
    for col, _, _ in COMPARE_METRICS:
        base = df[col].iloc[0]
        df[f"{col}_delta"] = df[col] / base - 1 if base else float("nan")
    return df


def compare_bars(df: pd.DataFrame) -> go.Figure:
    """Grouped bars: one group per metric, one bar per pinned config, height relative to the first."""
    fig = go.Figure()
    labels = [m[1] for m in COMPARE_METRICS]
    for _, row in df.iterrows():
        rel = [row[f"{c}_delta"] + 1 for c, _, _ in COMPARE_METRICS]
        text = [f"{fmt(row[c])} ({fmt_pct(row[f'{c}_delta'], 0, signed=True)})" for c, _, fmt in COMPARE_METRICS]
        fig.add_trace(
            go.Bar(name=row["name"], x=labels, y=rel, text=text, textposition="outside",
                   hovertemplate="%{x}: %{text}<extra>" + str(row["name"]) + "</extra>")
        )
    first = df["name"].iloc[0]
    fig.update_layout(barmode="group", title=f"Relative to {first} (= 100%)", margin=_MARGIN,
                      yaxis=dict(type="log", title=f"relative to {first}", tickformat=".0%"))
    return fig
