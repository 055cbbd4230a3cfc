"""Pure Plotly builders for the Train page (no streamlit; tests call them without a server).

Runs come in as ``groups``: a mapping from a run label to the history DataFrames of its seeds (one
per seed, the lab's history schema: step, tokens, elapsed_s, lr, train_mlm_loss, train_order_loss,
val_mlm_loss, val_mlm_acc, val_order_acc, tokens_per_s; val_* NaN on rows that were not evaluated).
Several seeds of one label draw a band (min to max over the seeds) around their median line.

Every chart is readable at 390 px: short titles, the legend below the plot, small margins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from albert_core.configuration.config import ModelConfig
from albert_core.lab.baselines import Baselines
from albert_core.paper import SMOOTHNESS_FIGURE_SHORT
from ui import colors, plotly_dicts
from ui.figure_style import colorscale
from ui.live import figures as figures_live

PALETTE = qualitative.Plotly
PAPER_COLOR = "#9e9e9e"
BASELINE_COLOR = "#555555"
MEASURED_COLOR = "#1f77b4"
PAPER_LABEL = "paper (Lan et al.)"
MEASURED_LABEL = "measured here"

# metric key -> (short chart title, y axis title, history columns drawn: solid first, then dotted)
METRICS: Mapping[str, tuple[str, str, tuple[str, ...]]] = {
    "mlm_loss": ("MLM loss", "MLM loss (nats)", ("val_mlm_loss", "train_mlm_loss")),
    "val_mlm_acc": ("MLM accuracy", "MLM accuracy", ("val_mlm_acc", "train_mlm_acc")),
    "val_order_acc": ("Sentence-task accuracy", "validation NSP / SOP accuracy", ("val_order_acc",)),
}
COLUMN_NAMES = {
    "val_mlm_loss": "validation", "train_mlm_loss": "training", "val_mlm_acc": "validation",
    "train_mlm_acc": "training", "val_order_acc": "validation",
}
TASK_NAMES = {"nsp": "NSP", "sop": "SOP", "none": "none"}


@dataclass(frozen=True)
class Separation:
    """Whether two runs' seed ranges have come apart on a metric: ``step`` is the first logged step
    from which they stay apart, None if they have not (yet). ``note`` says why, in plain words."""

    a: str
    b: str
    step: int | None
    note: str = ""


def _layout(layout: dict, title: str, x_title: str = "", y_title: str = "", height: int = 380) -> dict:
    """The layout every chart here shares, merged into ``layout`` (what the chart set before keeps what this does
    not set, as `update_layout` merges)."""
    _merge(layout, dict(
        title=dict(text=title, x=0, xanchor="left"),
        xaxis=dict(title=dict(text=x_title)),
        yaxis=dict(title=dict(text=y_title)),
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),  # below: a right legend eats 390 px
        margin=dict(l=10, r=10, t=50, b=10),
        hovermode="closest",
        height=height,
    ))
    return layout


def _merge(into: dict, more: Mapping) -> dict:
    """``more`` merged into ``into``, nested dicts key by key (as Plotly's `update_layout` does)."""
    for key, value in more.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value
    return into


def color_of(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def seed_band(histories: Sequence[pd.DataFrame], column: str) -> pd.DataFrame:
    """Per logged step: the median, min and max of ``column`` over the seeds that logged it, and how
    many did (``n``). Rows where the column is NaN (not an evaluation step) are left out."""
    parts = [h[["step", column]].dropna() for h in histories if column in h and len(h)]
    if not parts:
        return pd.DataFrame({"step": [], "median": [], "lo": [], "hi": [], "n": []})
    by_step = pd.concat(parts).groupby("step")[column]
    out = pd.DataFrame({"median": by_step.median(), "lo": by_step.min(), "hi": by_step.max(),
                        "n": by_step.count()}).reset_index()
    return out.sort_values("step", ignore_index=True)


BERT_LINE = colors.BERT
ALBERT_LINES = (colors.ALBERT, "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
SHARING_DASH = {"none": "solid", "all": "dash", "attention": "dashdot", "ffn": "longdash"}


def variant_styles(configs: Mapping[str, ModelConfig]) -> dict[str, tuple[str, str]]:
    """(colour, dash) per label of run ``configs`` (label -> ModelConfig): BERT blue; each ALBERT embedding
    size its own colour (orange first); the sharing mode as the dash (not shared solid, all-shared dashed),
    so Table 3's E x sharing grid reads as colour x dash instead of eight near-identical hues."""
    albert_sizes = sorted({c.embedding_size for c in configs.values() if c.family != "bert"})
    out = {}
    for label, c in configs.items():
        color = (BERT_LINE if c.family == "bert"
                 else ALBERT_LINES[albert_sizes.index(c.embedding_size) % len(ALBERT_LINES)])
        out[label] = (color, SHARING_DASH.get(c.sharing, "dot"))
    return out


X_AXES = {"step": "training step", "tokens": "token positions seen", "elapsed_s": "wall time (s, measured)"}
MAX_SMOOTHING = 0.99  # an EMA weight of 1 would never move


def ema(values: Sequence[float], weight: float) -> list[float]:
    """TensorBoard's smoothing: an exponential moving average with weight ``weight`` (0 = none, below 1),
    debiased so that the first points are not pulled towards 0."""
    if not 0 <= weight <= MAX_SMOOTHING:
        raise ValueError(f"smoothing must be between 0 and {MAX_SMOOTHING}, got {weight!r:.20}")
    out, last = [], 0.0
    for n, v in enumerate(values, start=1):
        last = weight * last + (1 - weight) * float(v)
        out.append(last / (1 - weight**n) if weight else float(v))
    return out


def x_values(histories: Sequence[pd.DataFrame], steps: Sequence[int], x: str) -> list[float]:
    """The x of each logged step on axis ``x``: the step, the token positions seen by then, or the
    median over the seeds of the measured wall time at that step."""
    if x == "step":
        return [float(s) for s in steps]
    if x not in X_AXES:
        raise ValueError(f"x must be one of {', '.join(X_AXES)}; got {x!r:.40}")
    by_step = pd.concat([h[["step", x]] for h in histories]).groupby("step")[x].median()
    return [float(by_step.get(s, np.nan)) for s in steps]


def curves_figure(
    groups: Mapping[str, Sequence[pd.DataFrame]],
    metric: str = "mlm_loss",
    separation: Separation | None = None,
    *,
    baselines: Baselines | None = None,
    title_suffix: str = "",
    training: bool = True,
    smoothing: float = 0.0,
    x: str = "step",
    log_y: bool = False,
    log_x: bool = False,
    styles: Mapping[str, tuple[str, str]] | None = None,
) -> go.Figure:
    """Curves of several runs on one chart: for each label its median over seeds (one seed: the run itself),
    with a min-max seed band when two or more seeds logged the step. ``mlm_loss`` draws the validation value
    solid and the training value dotted (loss and MLM accuracy). ``separation`` marks the step where two runs
    separate beyond their seed ranges, or says honestly that they have not. ``baselines`` (of the held-out
    batches the runs were scored on) draws the levels the metric must beat as labelled horizontal lines: the
    frequency-only and neighbour models for MLM, the majority class for the sentence task. ``training`` False
    leaves the training curves out (many runs on one chart).

    Dashboard conventions: ``smoothing`` (an EMA weight below 1, as TensorBoard's) draws each training curve
    smoothed with its raw points faint behind it (validation points stay as measured); ``x`` is "step",
    "tokens" or "elapsed_s" (measured wall time); ``log_y`` / ``log_x`` use log axes; ``styles`` gives a label
    its (colour, dash) (e.g. colour by family, dash by sharing), else the palette in order. A legend click
    hides a run, a double click isolates it."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r:.40}")
    title, y_title, columns = METRICS[metric]
    if not training and len(columns) > 1:
        title, columns = f"Validation {title}", columns[:1]
    data: list[dict] = []
    layout: dict = {}
    for i, (label, histories) in enumerate(groups.items()):
        color, dash = (styles or {}).get(label, (color_of(i), "solid"))
        seeds = len(histories)
        for j, column in enumerate(columns):
            band = seed_band(histories, column)
            if band.empty:
                continue
            xs = x_values(histories, band["step"].tolist(), x)
            name = label if len(columns) == 1 else f"{label} · {COLUMN_NAMES[column]}"
            several = band[band["n"] >= 2]
            if j == 0 and len(several):
                sx = x_values(histories, several["step"].tolist(), x)
                data.append(dict(
                    type="scatter", x=[*sx, *sx[::-1]], y=[*several["hi"], *several["lo"][::-1]],
                    fill="toself", fillcolor=_rgba(color, 0.18), line=dict(width=0), hoverinfo="skip",
                    name=f"{label} · seed range ({seeds} seeds)", legendgroup=label, showlegend=False,
                ))
            raw = band["median"].tolist()
            line_dash = dash if j == 0 else "dot"
            # only the training curves are noisy step to step: each validation point already averages every
            # held-out pair, and smoothing it would shift it against the baselines it is read beside
            weight = smoothing if column.startswith("train_") else 0.0
            if weight > 0:  # the raw points stay visible, faint, behind the smoothed line
                data.append(dict(type="scatter", x=xs, y=raw, mode="lines", name=f"{name} · raw", legendgroup=label,
                                 showlegend=False, hoverinfo="skip", opacity=0.3,
                                 line=dict(color=color, width=1, dash=line_dash)))
            data.append(dict(
                type="scatter", x=xs, y=ema(raw, weight), mode="lines", name=name,
                legendgroup=label, line=dict(color=color, width=2 if j == 0 else 1.2, dash=line_dash),
                customdata=np.stack([band["step"], raw, band["lo"], band["hi"], band["n"]], axis=-1).tolist(),
                hovertemplate=(f"{label}<br>step %{{customdata[0]}}<br>{COLUMN_NAMES[column]} %{{customdata[1]:.4g}}"
                               + (" (smoothed %{y:.4g})" if weight > 0 else "")
                               + ("<br>seeds %{customdata[4]}: %{customdata[2]:.4g} to %{customdata[3]:.4g}"
                                  if seeds > 1 else "") + "<extra></extra>"),
            ))
    if baselines is not None:
        add_baselines(layout, baselines, metric)
    if separation is not None:
        _mark_separation(layout, separation, vline=x == "step")
    _layout(layout, f"{title} · {title_suffix}" if title_suffix else title, X_AXES.get(x, x), y_title)
    if log_y:
        layout["yaxis"]["type"] = "log"
    if log_x:
        layout["xaxis"]["type"] = "log"
    return plotly_dicts.figure(data, layout)


def baseline_levels(baselines: Baselines, metric: str) -> list[tuple[str, float]]:
    """(label, level) of each baseline ``metric`` must beat, on the same held-out batches."""
    if metric == "mlm_loss":
        return [("frequency-only", baselines.frequency_loss), ("neighbour (bigram)", baselines.neighbour_loss)]
    if metric == "val_mlm_acc":
        return [("always the most frequent", baselines.frequency_acc),
                ("neighbour (bigram)", baselines.neighbour_acc)]
    if metric == "val_order_acc" and baselines.order_majority is not None:
        return [("majority class", baselines.order_majority)]
    return []


def add_baselines(layout: dict, baselines: Baselines, metric: str) -> None:
    """The baselines of ``metric`` as grey labelled lines (frequency-only dashed, neighbour dotted) across the plot,
    each labelled at its bottom right: the shape and annotation Plotly's `add_hline` makes."""
    for (label, level), dash in zip(baseline_levels(baselines, metric), ("dash", "dot"), strict=False):
        layout.setdefault("shapes", []).append(dict(
            type="line", x0=0, x1=1, xref="x domain", y0=level, y1=level, yref="y",
            line=dict(color=BASELINE_COLOR, dash=dash, width=1.3)))
        layout.setdefault("annotations", []).append(dict(
            text=f"{label} {level:.3g}", showarrow=False, x=1, xanchor="right", xref="x domain", y=level,
            yanchor="top", yref="y", font=dict(color=BASELINE_COLOR, size=11)))


def _mark_separation(layout: dict, sep: Separation, vline: bool = True) -> None:
    notes = layout.setdefault("annotations", [])
    if sep.step is None or not vline:
        text = (f"{sep.a} vs {sep.b}: not separated yet" + (f" ({sep.note})" if sep.note else "") if sep.step is None
                else f"{sep.a} vs {sep.b} apart from step {sep.step}")
        notes.append(dict(text=text, xref="paper", yref="paper", x=0, y=1.0, xanchor="left", yanchor="bottom",
                          showarrow=False, font=dict(size=11, color="#555")))
        return
    layout.setdefault("shapes", []).append(dict(  # the shape Plotly's add_vline makes
        type="line", x0=sep.step, x1=sep.step, xref="x", y0=0, y1=1, yref="y domain",
        line=dict(color="#d62728", dash="dash", width=1.5)))
    # from the plot's left edge, the pair on one line and the step on the next: at the line itself the text
    # ran past the right edge of a phone's plot ("E=16 not shared vs E=32 not share")
    notes.append(dict(text=f"{sep.a} vs {sep.b}<br>apart from step {sep.step:,} (dashed line)", xref="paper",
                      yref="paper", x=0, y=1.0, xanchor="left", yanchor="bottom", align="left", showarrow=False,
                      font=dict(size=11, color="#d62728")))
    _merge(layout, dict(margin=dict(t=92), title=dict(y=0.985, yanchor="top")))  # room for the two lines


def cross_accuracy_heatmap(matrix: pd.DataFrame, title: str) -> go.Figure:
    """Paper Table 5 as a matrix: row = the task a model was trained on, column = the task it is
    evaluated on, cell = accuracy (0..1). ``matrix``: index trained-on task, columns evaluated-on task."""
    rows = [TASK_NAMES.get(str(r), str(r)) for r in matrix.index]
    cols = [TASK_NAMES.get(str(c), str(c)) for c in matrix.columns]
    z = matrix.to_numpy(dtype=float)
    text = [["n/a" if np.isnan(v) else f"{v:.1%}" for v in row] for row in z]
    heat = dict(
        type="heatmap", z=np.where(np.isnan(z), None, z).tolist(), x=[f"eval {c}" for c in cols],
        y=[f"trained {r}" for r in rows], text=text, texttemplate="%{text}", zmin=0.4, zmax=1.0,
        colorscale=colorscale("Blues"), showscale=False,
        hovertemplate="%{y}, %{x}: %{text}<extra></extra>",
    )
    layout = dict(yaxis=dict(autorange="reversed", type="category"), xaxis=dict(type="category", side="bottom"))
    return plotly_dicts.figure([heat], _layout(layout, title, height=300))


def smoothness_runs(frames: Mapping[str, pd.DataFrame], title: str = "") -> go.Figure:
    """The paper's Figure 2 for several trained models on the same two panels (L2 distance, angle):
    each model's panels come from `figures_live.smoothness_figure`, recoloured and named by label."""
    if not frames:
        raise ValueError("frames must hold at least one model's layer smoothness")
    data: list[dict] = []
    layout: dict | None = None
    for i, (label, df) in enumerate(frames.items()):
        one = figures_live.smoothness_figure(df, title=title or f"Layer smoothness ({SMOOTHNESS_FIGURE_SHORT})")
        spec = one.to_dict()
        if layout is None:
            layout = {k: v for k, v in spec["layout"].items() if k != "template"}
        for k, trace in enumerate(spec["data"]):
            data.append({**trace, "name": label, "legendgroup": label, "showlegend": k == 0,
                         "line": {**trace.get("line", {}), "color": color_of(i)},
                         "marker": {**trace.get("marker", {}), "color": color_of(i)}})
    _merge(layout, dict(showlegend=True, legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),
                        title=dict(x=0, xanchor="left"), height=380))
    return plotly_dicts.figure(data, layout)


def depth_dial_bars(df: pd.DataFrame, trained_depth: int, baselines: Baselines | None = None) -> go.Figure:
    """The same all-shared weights run at several depths: validation MLM loss per depth (``df``:
    columns depth, val_mlm_loss), the trained depth highlighted, beside the ``baselines``."""
    depths = [int(d) for d in df["depth"]]
    colors = [MEASURED_COLOR if d == trained_depth else "#9ecae1" for d in depths]
    bars = dict(
        type="bar", x=[f"L={d}" + (" (trained)" if d == trained_depth else "") for d in depths],
        y=df["val_mlm_loss"].tolist(), marker=dict(color=colors), text=[f"{v:.3g}" for v in df["val_mlm_loss"]],
        textposition="outside", cliponaxis=False, name=MEASURED_LABEL,
        hovertemplate="%{x}<br>validation MLM loss %{y:.4g}<extra></extra>",
    )
    layout: dict = {}
    levels = [v for _, v in baseline_levels(baselines, "mlm_loss")] if baselines is not None else []
    if baselines is not None:
        add_baselines(layout, baselines, "mlm_loss")
    values = [*df["val_mlm_loss"], *levels]
    lo, hi = min(values), max(values)
    pad = max(0.1, (hi - lo) * 0.25)
    layout["yaxis"] = dict(range=[max(0.0, lo - pad), hi + pad])  # a loss axis from 0 hides what moved
    return plotly_dicts.figure([bars], _layout(layout, "Depth dial: one shared layer, run L times",
                                               "depth at evaluation", "validation MLM loss", height=340))
