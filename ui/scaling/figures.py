"""Pure Plotly builders for the Scaling page: DataFrames / configs in, `go.Figure` out.

Every chart marks the current config with the same red star (or outline) so a reader finds "me" at
a glance. No streamlit import: tests call these without a server.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.basedatatypes import BaseTraceType

from albert_core import ModelConfig, Workload, count_flops, count_params, estimate_memory
from albert_core.configuration.coerce import bert_twin
from albert_core.configuration.config import LORA_MATRICES, SHARING_LABELS, family_of
from albert_core.counting.memory import MemoryEstimate
from albert_core.format import fmt_bytes, fmt_flops, fmt_params, fmt_pct
from albert_core.paper import PAPER_TABLE4, QUOTED_EMBEDDING, QUOTED_VOCAB, TABLE4_MODES
from ui import plotly_dicts
from ui.colors import FAMILY_COLORS  # BERT blue, ALBERT orange, as on every page
from ui.figure_style import LEGEND_BELOW, TITLE_FONT, colorscale, si_ticks

CURRENT_COLOR = "#d62728"
CURRENT_NAME = "current config"
_CURRENT_MARKER = dict(symbol="star", size=18, color=CURRENT_COLOR, line=dict(width=1, color="black"))

# The circulating embedding chart's setting: BERT's vocabulary and E = 128 for every ALBERT size.
SEED_VOCAB = QUOTED_VOCAB
SEED_EMBEDDING = QUOTED_EMBEDDING

MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations")
MEMORY_COLORS = {"weights": "#4c78a8", "gradients": "#f58518", "optimizer": "#54a24b", "activations": "#b279a2"}


def family_label(cfg: ModelConfig) -> str:
    return "ALBERT" if cfg.family == "albert" else "BERT"


_MARGIN = dict(l=10, r=10, t=50, b=10)


def layout_spec(title: str, x_title: str, y_title: str, **more: object) -> dict:
    """The layout every chart here shares, as a dict for `plotly_dicts.figure` (``more``: other keys)."""
    return {
        "title": dict(text=title, font=TITLE_FONT),  # at most ~45 characters: a phone's width
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "legend": LEGEND_BELOW,  # under the axis labels: above the plot it collided with the title
        "margin": _MARGIN,
        "hovermode": "closest",
        **more,
    }


def log_ticks(lo: float, hi: float, fmt: Callable[..., str]) -> dict:
    """Tick values and labels for a log axis spanning [lo, hi]: decades (1M, 10M, 100M), or 1-2-5 steps
    when the span is under two decades, labelled in people's units ("100 GFLOP", not Plotly's "100B",
    and no "2, 5" minor labels)."""
    lo, hi = max(float(lo), 1.0), max(float(hi), 1.0)
    steps = (1,) if hi / lo >= 100 else (1, 2, 5)
    vals = [m * 10.0**k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) for m in steps]
    first = max([v for v in vals if v <= lo], default=vals[0])  # one tick at or below the data, one above
    last = min([v for v in vals if v >= hi], default=vals[-1])
    vals = [v for v in vals if first <= v <= last]
    pad = max(math.log10(hi / lo), 0.5) * 0.08  # room for the marker labels at both ends
    return dict(type="log", tickvals=vals, ticktext=[fmt(v, 0) for v in vals],
                range=[math.log10(lo) - pad, math.log10(hi) + pad])


def floats(values: Iterable[float]) -> list[float]:
    """A chart's values as floats: an exact count (FLOPs, bytes) may pass 2^63 at the largest sizes, which a
    chart's JSON cannot hold as an integer (and a browser draws no integer past 2^53 exactly anyway)."""
    return [float(v) for v in values]


def linear_ticks(vmax: float, fmt: Callable[..., str]) -> dict:
    """Round linear ticks from 0, labelled with ``fmt`` ("1 GB", "50 MB")."""
    vals, text = si_ticks(vmax, fmt)
    return dict(tickvals=vals, ticktext=text, range=[0, max(vmax, 1) * 1.12])


def short_params(n: float) -> str:
    """Three significant digits ("235M", "24.6M", "4.41M"): fits a heatmap cell."""
    v = abs(n)
    if v < 1000:
        return f"{n:.0f}"
    m = v / 1000 ** math.floor(math.log10(v) / 3)
    return fmt_params(n, 0 if m >= 99.95 else 1 if m >= 9.995 else 2)


def _outline_marks(labels: list[str], tops: list[float], current_label: str | None
                   ) -> tuple[list[dict], list[dict]]:
    """(shapes, traces) that outline the current config's bar with a shape (a per-bar marker line would
    also draw on every legend swatch) and give the outline its legend key; none if it is not charted."""
    if current_label not in labels:
        return [], []
    i = labels.index(current_label)
    rect = dict(type="rect", xref="x", yref="y", x0=i - 0.46, x1=i + 0.46, y0=0, y1=float(tops[i]),
                line=dict(color=CURRENT_COLOR, width=3), fillcolor="rgba(0,0,0,0)", layer="above")
    key = dict(type="scatter", x=[None], y=[None], mode="markers", name=f"{CURRENT_NAME} (outlined)",
               hoverinfo="skip", marker=dict(symbol="square-open", size=14, color=CURRENT_COLOR, line=dict(width=3)))
    return [rect], [key]


def with_marks(base: go.Figure, traces: Sequence[BaseTraceType | Mapping[str, Any]] = (),
               shapes: Sequence[Mapping] = (), axes: Mapping[str, Mapping] | None = None) -> go.Figure:
    """``base`` with the current config's marks: ``traces`` appended to its data, ``shapes`` to its
    shapes, and per axis (``{"yaxis": {...}}``) properties that replace the base's. The same figure
    as adding them to a copy of ``base`` one by one; but ``base`` (a figure that depends only on what
    it shows, built and cached once) is not validated again: its dict is already Plotly's valid form,
    and the marks are validated on their own (a trace given as a dict, the star, is trusted as written: the
    page test compares every chart with its validated self): a chart's rerun costs its marks, not a whole build."""
    spec = base.to_dict()  # shared with the cached base: only new lists and dicts below
    data = [*spec["data"], *(dict(t) if isinstance(t, Mapping) else t.to_plotly_json() for t in traces)]
    layout = dict(spec["layout"])
    if shapes:
        layout["shapes"] = [*layout.get("shapes", ()), *(go.layout.Shape(s).to_plotly_json() for s in shapes)]
    for name, props in (axes or {}).items():
        axis_type = go.layout.XAxis if name.startswith("xaxis") else go.layout.YAxis
        layout[name] = {**layout.get(name, {}), **axis_type(props).to_plotly_json()}
    return plotly_dicts.figure(data, layout)


def _traces(fig: go.Figure) -> list[Mapping[str, Any]]:
    """The figure's traces as dicts, read without building a trusted figure's graph objects."""
    if isinstance(fig, plotly_dicts.TrustedFigure):
        return fig.to_dict()["data"]
    return [t.to_plotly_json() for t in fig.data]


def _extent(fig: go.Figure, axis: str) -> list[float]:
    """Every plotted value of the figure's traces on ``axis`` ("x" or "y"), Nones left out."""
    return [v for t in _traces(fig) for v in (t.get(axis) or ()) if v is not None]


def star_point(x: float, y: float, text: str) -> dict[str, Any]:
    """The star of the current config, as the trace dict Plotly's validation makes of it (the page test compares
    every chart with its validated self): a go.Scatter would be validated again on every run."""
    return dict(type="scatter", x=[x], y=[y], mode="markers", name=CURRENT_NAME, marker=_CURRENT_MARKER,
                hovertemplate=f"{text}<extra>{CURRENT_NAME}</extra>")


def _lines_by_model(df: pd.DataFrame, x: str, y: str, hover_x: str) -> list[dict]:
    """One line per model (in the order of the model column's categories, else alphabetical), its points by x.
    Read from the columns as lists: a pandas groupby and sort per model was most of the chart's build."""
    models = df["model"]
    points: dict[object, list[tuple]] = {}
    for model, xv, yv in zip(models.tolist(), df[x].tolist(), df[y].tolist(), strict=True):
        points.setdefault(model, []).append((xv, yv))
    order = models.cat.categories if isinstance(models.dtype, pd.CategoricalDtype) else sorted(points)
    traces = []
    for model in (m for m in order if m in points):
        xs, ys = zip(*sorted(points[model], key=lambda p: p[0]), strict=True)
        color = FAMILY_COLORS.get(str(model))
        traces.append(dict(
            type="scatter", x=list(xs), y=list(ys), mode="lines+markers", name=str(model),
            line={} if color is None else dict(color=color),
            text=[fmt_params(v) for v in ys],
            hovertemplate=f"{hover_x}=%{{x}}<br>%{{text}} params<extra>{model}</extra>",
        ))
    return traces


# ----------------------------------------------------------------------------- series charts
def params_vs_hidden_base(df: pd.DataFrame) -> go.Figure:
    """Total params against hidden size H for ALBERT and BERT (log y), without the current config (its star:
    `mark_params_vs_hidden`); ``df`` is a `sweep` over H (or a `hidden_frame`)."""
    return plotly_dicts.figure(_lines_by_model(df, "hidden_size", "params", "H"),
                             layout_spec("Parameters vs hidden size H", "hidden size H", "parameters (log scale)"))


def mark_params_vs_hidden(base: go.Figure, cfg: ModelConfig, current_params: int) -> go.Figure:
    ys = [*_extent(base, "y"), current_params]
    return with_marks(base, [star_point(cfg.hidden_size, current_params,
                                            f"{cfg.label}: {fmt_params(current_params)}")],
                      axes={"yaxis": log_ticks(min(ys), max(ys), fmt_params)})


def params_vs_layers_base(df: pd.DataFrame) -> go.Figure:
    """Total params against the number of layers L (the star: `mark_params_vs_layers`); ``df`` is a `sweep` over
    num_layers."""
    return plotly_dicts.figure(_lines_by_model(df, "num_layers", "params", "L"),
                             layout_spec("Parameters vs number of layers L", "layers L", "parameters"))


def mark_params_vs_layers(base: go.Figure, cfg: ModelConfig, current_params: int) -> go.Figure:
    return with_marks(base, [star_point(cfg.num_layers, current_params,
                                            f"{cfg.label}: {fmt_params(current_params)}")],
                      axes={"yaxis": linear_ticks(max([*_extent(base, "y"), current_params]), fmt_params)})


def embedding_vs_vocab_base(df: pd.DataFrame) -> go.Figure:
    """Embedding params against vocabulary size V: one ALBERT line per E, and BERT (E = H); the star:
    `mark_embedding_vs_vocab`. ``df`` is a 2-D `sweep` over vocab_size x embedding_size (BERT rows repeat over E;
    kept once); columns model, vocab_size, embedding_size, hidden_size, embedding_params are all it reads."""
    # read from the columns as lists (a pandas groupby and sort per E was most of this chart's build)
    albert: dict[int, dict[int, int]] = {}  # E -> V -> params
    bert: dict[int, int] = {}  # V -> params (BERT rows repeat over E: the first is kept)
    h = None
    for model, v, e, hidden, p in zip(df["model"].tolist(), df["vocab_size"].tolist(), df["embedding_size"].tolist(),
                                      df["hidden_size"].tolist(), df["embedding_params"].tolist(), strict=True):
        if model == "ALBERT":
            albert.setdefault(e, {})[v] = p
        elif model == "BERT":
            bert.setdefault(v, p)
            h = hidden if h is None else h
    traces = []
    for e in sorted(albert):
        vs = sorted(albert[e])
        ys = [albert[e][v] for v in vs]
        traces.append(dict(
            type="scatter", x=vs, y=ys, mode="lines",
            name=f"ALBERT E={e}", text=[fmt_params(v) for v in ys],
            hovertemplate=f"V=%{{x:,}}<br>%{{text}}<extra>ALBERT E={e}</extra>",
        ))
    if bert:
        vs = sorted(bert)
        ys = [bert[v] for v in vs]
        traces.append(dict(
            type="scatter", x=vs, y=ys, mode="lines",
            name=f"BERT (E = H = {h})", line=dict(color=FAMILY_COLORS["BERT"], dash="dash", width=3),
            text=[fmt_params(v) for v in ys],
            hovertemplate="V=%{x:,}<br>%{text}<extra>BERT</extra>",
        ))
    return plotly_dicts.figure(traces, layout_spec("Embedding parameters vs vocabulary size V", "vocabulary size V",
                                                    "embedding parameters"))

def mark_embedding_vs_vocab(base: go.Figure, cfg: ModelConfig, current_embedding: int) -> go.Figure:
    point = star_point(cfg.vocab_size, current_embedding,
                           f"{cfg.label}, V={cfg.vocab_size:,}: {fmt_params(current_embedding)}")
    top = max([*_extent(base, "y"), current_embedding])
    return with_marks(base, [point], axes={"yaxis": linear_ticks(top, fmt_params)})


# ----------------------------------------------------------------------------- seed embedding chart
def seed_embedding_table(
    configs: Mapping[str, ModelConfig], vocab: int = SEED_VOCAB, embedding: int = SEED_EMBEDDING
) -> pd.DataFrame:
    """The circulating embedding chart's formula per model size: standard V*H against factorized V*E + E*H.

    These are token-embedding-only figures (no position / type tables, biases or
    LayerNorms); the exact totals are on the Explorer page.
    """
    rows = []
    for label, cfg in configs.items():
        h = cfg.hidden_size
        rows.append({"label": label, "hidden_size": h, "standard": vocab * h,
                     "factorized": vocab * embedding + embedding * h})
    df = pd.DataFrame(rows, columns=["label", "hidden_size", "standard", "factorized"])
    df["reduction"] = 1 - df["factorized"] / df["standard"]
    return df


def embedding_reduction(df: pd.DataFrame, current_label: str | None = None) -> go.Figure:
    """Grouped bars, standard vs factorized, per model size (``df`` from `seed_embedding_table`).

    The row named ``current_label`` is outlined in the highlight colour.
    """
    labels = df["label"].tolist()
    data = [dict(type="bar", x=labels, y=df[col].tolist(), name=name, marker=dict(color=color),
                 text=[short_params(v) for v in df[col]], textposition="outside", cliponaxis=False,
                 customdata=[fmt_pct(r) for r in df["reduction"]],
                 hovertemplate="%{x}<br>%{text}<br>reduction %{customdata}<extra>" + name + "</extra>")
            for col, name, color in (("standard", "standard V×H", FAMILY_COLORS["BERT"]),
                                     ("factorized", "factorized V×E + E×H", FAMILY_COLORS["ALBERT"]))]
    shapes, marks = _outline_marks(labels, df[["standard", "factorized"]].max(axis=1).tolist(), current_label)
    layout = layout_spec("Embedding parameters: standard vs factorized", "ALBERT size", "token-embedding parameters",
                          barmode="group", **({"shapes": shapes} if shapes else {}))
    layout["xaxis"]["tickangle"] = 0  # short labels: rotated ones pushed the axis title into the legend
    layout["yaxis"].update(linear_ticks(df["standard"].max(), fmt_params))
    return plotly_dicts.figure(data + marks, layout)

# ----------------------------------------------------------------------------- presets
def flops_vs_params_base(df: pd.DataFrame) -> go.Figure:
    """Scatter of forward FLOPs against total params for named configs (columns label, model, params,
    forward_flops); the current config: `mark_flops_vs_params`."""
    data = [dict(type="scatter", x=floats(part["params"]), y=floats(part["forward_flops"]), mode="markers+text",
                 name=str(model), text=part["label"].tolist(), textposition="top center", cliponaxis=False,
                 marker=dict(size=12, color=FAMILY_COLORS.get(str(model))),
                 customdata=[[fmt_params(p), fmt_flops(f)]
                             for p, f in zip(part["params"], part["forward_flops"], strict=True)],
                 hovertemplate="%{text}<br>%{customdata[0]} params<br>%{customdata[1]}<extra></extra>")
            for model, part in df.groupby("model", sort=True)]
    return plotly_dicts.figure(data, layout_spec("Forward FLOPs per sequence vs parameters", "parameters (log scale)",
                                                  "forward FLOPs per sequence (log scale)"))

def mark_flops_vs_params(base: go.Figure, current: Mapping[str, float | str]) -> go.Figure:
    point = star_point(
        float(current["params"]), float(current["forward_flops"]),
        f"{current['label']}: {fmt_params(current['params'])}, {fmt_flops(current['forward_flops'])}",
    )
    xs, ys = [*_extent(base, "x"), current["params"]], [*_extent(base, "y"), current["forward_flops"]]
    return with_marks(base, [point], axes={"xaxis": log_ticks(min(xs), max(xs), fmt_params),
                                           "yaxis": log_ticks(min(ys), max(ys), fmt_flops)})


def params_heatmap_base(df: pd.DataFrame) -> go.Figure:
    """Heatmap of total params over (E, H) (``df``: ALBERT rows over E and H); the current cell:
    `mark_params_heatmap`."""
    # the (H, E) grid without pandas' pivot (which took most of this chart's build)
    cell = {(h, e): p for e, h, p in zip(df["embedding_size"].tolist(), df["hidden_size"].tolist(),
                                         df["params"].tolist(), strict=True)}
    es, hs = sorted({e for _, e in cell}), sorted({h for h, _ in cell})
    z = [[cell[h, e] for e in es] for h in hs]
    top = max((max(row) for row in z), default=0)
    x = [str(v) for v in es]
    y = [str(v) for v in hs]
    heat = dict(
        type="heatmap", z=z, x=x, y=y, colorscale=colorscale("Blues"), name="params",
        text=[[short_params(v) for v in row] for row in z], texttemplate="%{text}",
        textfont=dict(size=11), customdata=[[f"{v:,}" for v in row] for row in z],
        hovertemplate="E=%{x}, H=%{y}<br>%{customdata} params<extra></extra>",
        # under the plot: at the side it took a third of a phone's width from the cells
        colorbar=dict(title=dict(text="params", side="top"), orientation="h", y=-0.22, yanchor="top",
                      thickness=12, **{k: v for k, v in linear_ticks(top, fmt_params)
                                       .items() if k != "range"}),
    )
    layout = layout_spec("Total parameters over E and H", "embedding size E", "hidden size H", height=520)
    layout["xaxis"]["type"] = layout["yaxis"]["type"] = "category"
    return plotly_dicts.figure([heat], layout)

def mark_params_heatmap(base: go.Figure, cfg: ModelConfig) -> go.Figure:
    """The cell of ``cfg``'s (E, H) outlined, when it is in the grid."""
    heat = _traces(base)[0]
    xs, ys = list(heat["x"]), list(heat["y"])
    e, h = str(cfg.embedding_size), str(cfg.hidden_size)
    if e not in xs or h not in ys:
        return base
    total = int(heat["z"][ys.index(h)][xs.index(e)])
    # an open square around the cell: a star would hide the cell's number
    cell = star_point(e, h, f"{cfg.label}: {fmt_params(total)}")
    return with_marks(base, [{**cell, "marker": dict(symbol="square-open", size=40, color=CURRENT_COLOR,
                                                     line=dict(width=3))}])


def sharing_modes_base(df: pd.DataFrame) -> go.Figure:
    """Paper Table 4: exact params per sharing mode (bars) with the printed figures (diamonds); ``df`` columns:
    embedding_size, sharing, exact, paper. The current config's dotted line: `mark_sharing_modes`."""
    data = []
    colors = {768: "#9ecae1", 128: FAMILY_COLORS["ALBERT"]}
    for e in sorted(df["embedding_size"].unique(), reverse=True):
        part = df[df["embedding_size"] == e].set_index("sharing").loc[list(TABLE4_MODES)]
        x = [SHARING_LABELS[m] for m in part.index]
        data.append(dict(
            type="bar", x=x, y=part["exact"].tolist(), name=f"exact, E={e}", marker=dict(color=colors.get(int(e))),
            offsetgroup=str(e), text=[short_params(v) for v in part["exact"]], textposition="inside",
            insidetextanchor="middle", textangle=-90, customdata=[f"{v:,}" for v in part["exact"]],
            hovertemplate="%{x}<br>exact %{customdata}<extra>E=" + str(e) + "</extra>",
        ))
        data.append(dict(
            type="scatter", x=x, y=part["paper"].tolist(), mode="markers", name=f"paper, E={e}", offsetgroup=str(e),
            marker=dict(symbol="diamond", size=11, color="black"),
            text=[fmt_params(v, 0) for v in part["paper"]],
            hovertemplate="%{x}<br>paper %{text}<extra>E=" + str(e) + "</extra>",
        ))
    layout = layout_spec("Cross-layer sharing, ALBERT-base (paper Table 4)", "sharing mode", "parameters",
                          barmode="group", scattermode="group", height=480)
    layout["yaxis"].update(linear_ticks(max([*df["exact"], *df["paper"], 0]), fmt_params))
    return plotly_dicts.figure(data, layout)

def mark_sharing_modes(base: go.Figure, current_params: int) -> go.Figure:
    """A dotted line at the current config's count, labelled in the legend (an annotation on the plot
    collided with the bar labels); the y axis then spans it too."""
    line = dict(color=CURRENT_COLOR, dash="dot", width=2)
    # the shape add_hline draws, without its subplot lookup
    shape = dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=current_params, y1=current_params,
                 line=line)
    legend = dict(type="scatter", x=[None], y=[None], mode="lines", line=line, hoverinfo="skip",
                  name=f"{CURRENT_NAME}: {fmt_params(current_params)}")
    top = max([*_extent(base, "y"), current_params])
    return with_marks(base, [legend], [shape], axes={"yaxis": linear_ticks(top, fmt_params)})


def memory_bars(df: pd.DataFrame, current_label: str, kind: str = "training",
                names: Mapping[str, str] | None = None) -> go.Figure:
    """Stacked training-memory bars (weights, gradients, optimizer, activations) per config.

    ``df`` columns: label plus the four parts in bytes. The current config's bar is outlined.
    ``names``: legend name per part (`MemoryEstimate.part_labels`: the fp32 master copy, the estimate).
    """
    names = {**{p: p for p in MEMORY_PARTS}, "activations": "activations (estimate)", **(names or {})}
    labels = df["label"].tolist()
    parts = {part: df[part].tolist() for part in MEMORY_PARTS}  # read as lists: a pandas sum and iteration per
    totals = [sum(row) for row in zip(*parts.values(), strict=True)]  # bar cost more than the chart
    top = float(max(totals, default=0)) or 1.0
    data = []
    for part, values in parts.items():
        sizes = [fmt_bytes(v) for v in values]
        data.append(dict(
            type="bar", x=labels, y=floats(values), name=names[part], marker=dict(color=MEMORY_COLORS[part]),
            # a label only on a segment tall enough to hold it; hover has every value
            text=[t if v >= 0.06 * top else "" for t, v in zip(sizes, values, strict=True)],
            textposition="inside", insidetextanchor="middle", customdata=sizes,
            hovertemplate="%{x}<br>" + names[part] + ": %{customdata}<extra></extra>",
        ))
    data.append(dict(
        type="scatter", x=labels, y=floats(totals), mode="text", name="total", showlegend=False,
        text=[f"total {fmt_bytes(v)}" for v in totals], textposition="top center", hoverinfo="skip",
    ))
    shapes, marks = _outline_marks(labels, totals, current_label)
    layout = layout_spec(f"{kind.capitalize()} memory by part", "", f"{kind} memory", barmode="stack",
                          shapes=shapes)
    layout["yaxis"].update(linear_ticks(top, fmt_bytes))
    return plotly_dicts.figure(data + marks, layout)


# ----------------------------------------------------------------------------- data for the charts
def _i_follows_h(cfg: ModelConfig) -> bool:
    return cfg.intermediate_size == 4 * cfg.hidden_size


def _at_hidden(cfg: ModelConfig, h: int, i_follows: bool) -> ModelConfig:
    """``cfg`` at hidden size ``h`` with one head (heads change neither params nor matmul FLOPs, so every
    H is valid) and I = 4H when ``i_follows``."""
    return cfg.replace(num_heads=1, hidden_size=h, **({"intermediate_size": 4 * h} if i_follows else {}))


def hidden_frame(cfg: ModelConfig, hs: Sequence[int]) -> tuple[pd.DataFrame, str]:
    """Total params of ``cfg`` over the hidden sizes ``hs`` (rows model, hidden_size, params: the config's
    family and, for ALBERT, its BERT twin), and how I was set ("I = 4H" when the config has I = 4H, as
    every published model: I then follows H; else the fixed I). One head makes every H valid, and 4H stays
    within I's limit for every H allowed."""
    i_follows = _i_follows_h(cfg)
    key = _grid_key(cfg, i_follows)
    cols: dict[str, list] = {"model": [], "hidden_size": [], "params": []}
    for h in hs:
        rows = _GRID_CELLS.get((key, "hidden", h))
        if rows is None:
            c = _at_hidden(cfg, h, i_follows)
            rows = tuple((family_label(m), count_params(m).total)
                         for m in ((c, bert_twin(c)) if c.family == "albert" else (c,)))
            _remember_cell((key, "hidden", h), rows)
        for model, params in rows:
            cols["model"].append(model)
            cols["hidden_size"].append(h)
            cols["params"].append(params)
    note = "I = 4H" if i_follows else f"I = {cfg.intermediate_size:,}"
    return pd.DataFrame(cols), note


def heatmap_frame(cfg: ModelConfig, es: Sequence[int], hs: Sequence[int]) -> pd.DataFrame:
    """Total params of ``cfg`` (an ALBERT) over every (E, H) of ``es`` x ``hs`` (I follows H when the
    config has I = 4H), rows embedding_size, hidden_size, params (every combination is a valid model:
    see `hidden_frame`)."""
    i_follows = _i_follows_h(cfg)
    key = _grid_key(cfg, i_follows, "embedding_size")
    cells = [(e, h) for e in es for h in hs]
    params = []
    for e, h in cells:
        total = _GRID_CELLS.get((key, e, h))
        if total is None:
            total = count_params(_at_hidden(cfg.replace(embedding_size=e), h, i_follows)).total
            _remember_cell((key, e, h), total)
        params.append(total)
    return pd.DataFrame({"embedding_size": [e for e, _ in cells], "hidden_size": [h for _, h in cells],
                         "params": params})


# The cells of the H and (E, H) grids, remembered across runs and sessions: a move of H adds the current H's row to
# both grids and changes the config, but every other row is the same count of the same config as before. A cell's
# key is every field of the config but those the grid sets itself (`_at_hidden`: H, the heads, I when it follows H;
# the heatmap's E; a BERT's E, which is its H), so equal keys mean equal configs. Bounded: cleared when full.
_GRID_CELLS: dict[tuple, Any] = {}
_GRID_CELLS_LIMIT = 50_000
_FIELDS = tuple(f.name for f in dataclasses.fields(ModelConfig))


def _grid_key(cfg: ModelConfig, i_follows: bool, *overwritten: str) -> tuple:
    free = {"hidden_size", "num_heads", *overwritten} | ({"intermediate_size"} if i_follows else set())
    if not family_of(cfg.family).albert_ideas:  # E follows H (BERT)
        free.add("embedding_size")
    return (i_follows, *(getattr(cfg, name) for name in _FIELDS if name not in free))


def _remember_cell(key: tuple, value: Any) -> None:
    if len(_GRID_CELLS) >= _GRID_CELLS_LIMIT:
        _GRID_CELLS.clear()
    _GRID_CELLS[key] = value


def least_depth(cfg: ModelConfig) -> int:
    """The least depth ``cfg`` allows: L = G, or G + 2 with unique first and last layers around the shared middle."""
    return cfg.num_hidden_groups + 2 * cfg.unique_ends


def any_depth(cfg: ModelConfig) -> ModelConfig:
    """``cfg`` at the least depth it allows (`least_depth`): the base of a sweep whose charted values do not
    depend on L (a sweep over L itself, embedding parameters), so that its cached frame serves every
    depth."""
    return cfg.replace(num_layers=least_depth(cfg))


def params_depth_key(cfg: ModelConfig) -> ModelConfig:
    """``cfg`` as far as its parameter count goes: at any depth (`any_depth`) when every layer is shared and no
    LoRA is (the copies held do not change with L; a LoRA's positions do), else as it is. A cache of parameter
    counts keyed by it serves every depth of an all-shared model."""
    flat = cfg.family == "albert" and cfg.sharing == "all" and not cfg.lora_rank
    return any_depth(cfg) if flat else cfg


def hidden_sizes_that_fit(cfg: ModelConfig, hs: Iterable[int]) -> tuple[int, ...]:
    """The hidden sizes of ``hs`` at which ``cfg`` is a valid model (`hidden_frame`'s and `heatmap_frame`'s configs):
    all of them, but those too small for the config's LoRA rank (a rank past a target's smaller side)."""
    i_follows = _i_follows_h(cfg)
    out = []
    for h in hs:
        try:
            _at_hidden(cfg, h, i_follows)
        except ValueError:
            continue
        out.append(h)
    return tuple(out)


def current_point(cfg: ModelConfig, seq_len: int) -> dict[str, float | str]:
    """The current config as a point of `mark_flops_vs_params`: label, params, forward FLOPs of one
    sequence of ``seq_len`` tokens."""
    return {"label": cfg.label, "params": count_params(cfg).total,
            "forward_flops": count_flops(cfg, 1, seq_len).forward}


def memory_frame(rows: Mapping[str, MemoryEstimate]) -> pd.DataFrame:
    """One row per labelled memory estimate: label and its parts (`MemoryEstimate.as_dict`)."""
    return pd.DataFrame([{"label": label, **mem.as_dict()} for label, mem in rows.items()])


def table4_frame() -> pd.DataFrame:
    """Paper Table 4 recomputed: ALBERT-base (with pooler) at E = 768 and 128 in the four sharing
    modes; columns embedding_size, sharing, exact (count_params), paper (printed)."""
    rows = [
        {"embedding_size": e, "sharing": mode,
         "exact": count_params(ModelConfig(embedding_size=e, sharing=mode)).total,
         "paper": PAPER_TABLE4[e][mode]}
        for e in PAPER_TABLE4 for mode in TABLE4_MODES
    ]
    return pd.DataFrame(rows)


def presets_frame(presets: Mapping[str, ModelConfig], seq_len: int, head: str = "model") -> pd.DataFrame:
    """Params and forward FLOPs per sequence of ``seq_len`` tokens for named configs (with ``head``)."""
    rows = []
    for name, p in presets.items():
        cfg = p.replace(head=head)
        rows.append({"label": name, "model": family_label(cfg), "params": count_params(cfg).total,
                     "forward_flops": count_flops(cfg, 1, seq_len).forward})
    return pd.DataFrame(rows, columns=["label", "model", "params", "forward_flops"])


# ----------------------------------------------------------------------------- sequence length and batch
SCORES = "encoder.attention.scores"


def workload_values(current: int, lo: int, hi: int) -> tuple[int, ...]:
    """Powers of two from ``lo`` to ``hi`` (both kept in range), plus the current value."""
    values = {current, hi}
    v = lo
    while v < hi:
        values.add(v)
        v *= 2
    return tuple(sorted(x for x in values if lo <= x <= hi))


def workload_frame(cfg: ModelConfig, wl: Workload, field: str, values: tuple[int, ...]) -> pd.DataFrame:
    """One row per value of ``field`` ("seq_len" or "batch") at the rest of ``wl``: forward FLOPs of the
    batch (attention scores, the S² term, apart), training FLOPs (with the recomputed forward under
    checkpointing), and the memory parts (training, or inference for int8)."""
    if field not in ("seq_len", "batch"):
        raise ValueError(f"field must be seq_len or batch, got {field!r:.40}")
    rows = []
    for v in values:
        w = wl.replace(**{field: v})
        flops = count_flops(cfg, w.batch, w.seq_len, recompute=w.checkpointing)
        scores = flops.by_name().get(SCORES, 0)
        mem = estimate_memory(cfg, w.batch, w.seq_len, w.dtype, w.optimizer, w.training,
                              precision=w.precision if w.training else "pure",
                              checkpointing=w.checkpointing and w.training)
        rows.append({field: v, "forward_flops": flops.forward, "attention_scores_flops": scores,
                     "other_flops": flops.forward - scores, "attention_share": scores / flops.forward,
                     "training_flops": flops.training, **mem.as_dict(), "memory_kind": w.training})
    df = pd.DataFrame(rows)
    df.attrs["names"] = mem.part_labels()  # the legend names (master copy, estimate) of this workload
    return df


def flops_vs_seq(df: pd.DataFrame, current: int) -> go.Figure:
    """Stacked forward FLOPs per batch vs sequence length: the weight matmuls (linear in S) and the
    attention scores (4·B·S²·H per layer), each bar labelled with the attention share."""
    x = [str(v) for v in df["seq_len"]]
    data = [dict(type="bar", x=x, y=floats(df[col]), name=name, marker=dict(color=color),
                 customdata=[fmt_flops(v) for v in df[col]],
                 hovertemplate="S=%{x}<br>" + name + ": %{customdata}<extra></extra>")
            for col, name, color in (("other_flops", "weight matmuls (∝ S)", "#4c78a8"),
                                     ("attention_scores_flops", "attention scores (∝ S²)", "#e45756"))]
    data.append(dict(
        type="scatter", x=x, y=floats(df["forward_flops"]), mode="text", showlegend=False, hoverinfo="skip",
        text=[fmt_pct(s, 0) for s in df["attention_share"]], textposition="top center", textfont=dict(size=10),
    ))
    return _workload_figure(data, x, df["forward_flops"].tolist(), current, fmt_flops, (
        "Forward FLOPs vs sequence length", "sequence length S (label: attention share)", "forward FLOPs per batch"),
        barmode="stack")


def _workload_figure(data: list[dict], x: list[str], tops: list[float], current: int, fmt: Callable[..., str],
                     titles: tuple[str, str, str], **layout_more: object) -> go.Figure:
    """A bar chart over workload values ``x`` (category axis) with the current one outlined."""
    shapes, marks = _outline_marks(x, tops, str(current))
    layout = layout_spec(*titles, shapes=shapes, **layout_more)
    layout["xaxis"]["type"] = "category"
    layout["yaxis"].update(linear_ticks(float(max(tops)), fmt))
    return plotly_dicts.figure(data + marks, layout)


def memory_vs_workload(df: pd.DataFrame, field: str, current: int) -> go.Figure:
    """Stacked memory parts vs ``field`` (seq_len or batch): the fixed weights / gradients / optimizer
    and the activations that grow with it."""
    x = [str(v) for v in df[field]]
    names = {**{p: p for p in MEMORY_PARTS}, **df.attrs.get("names", {})}
    data = [dict(type="bar", x=x, y=floats(df[part]), name=names[part], marker=dict(color=MEMORY_COLORS[part]),
                 customdata=[fmt_bytes(v) for v in df[part]],
                 hovertemplate=field + "=%{x}<br>" + names[part] + ": %{customdata}<extra></extra>")
            for part in MEMORY_PARTS if df[part].any()]
    kind = "Training" if df["memory_kind"].all() else "Inference"
    axis = "sequence length S" if field == "seq_len" else "batch B"
    title = f"{kind} memory vs {'sequence length' if field == 'seq_len' else 'batch'}"
    return _workload_figure(data, x, df["total"].tolist(), current, fmt_bytes, (title, axis, f"{kind.lower()} memory"),
                            barmode="stack")


def flops_vs_batch(df: pd.DataFrame, current: int) -> go.Figure:
    """Training FLOPs per step vs batch (linear in B: the per-sequence cost times B)."""
    x = [str(v) for v in df["batch"]]
    data = [dict(type="bar", x=x, y=floats(df["training_flops"]), name="training FLOPs per step",
                 marker=dict(color="#54a24b"), customdata=[fmt_flops(v) for v in df["training_flops"]],
                 hovertemplate="B=%{x}<br>%{customdata}<extra></extra>")]
    return _workload_figure(data, x, df["training_flops"].tolist(), current, fmt_flops, (
        "Training FLOPs per step vs batch", "batch B", "training FLOPs per step"))


# ----------------------------------------------------------------------------- LoRA rank
def lora_refusal(cfg: ModelConfig) -> str | None:
    """Why ``cfg`` cannot carry a LoRA per position (None when it can): a family without ALBERT's ideas shares no
    weights, and a config that shares no block and runs each layer once has no weight two positions use (a LoRA
    there would merge into its own weight)."""
    record = family_of(cfg.family)
    if not record.albert_ideas:
        return (f"A {record.label} shares no weights between layers, so a LoRA per position has nothing to "
                "specialize: switch the family to ALBERT (or ALBERTize an encoder after BERT) to see what it costs.")
    if lora_targets_for(cfg) is None:
        return ("Nothing is shared here and every layer runs once: each position has weights of its own, so a LoRA "
                "on them would merge into them. Share blocks (sharing all, attention or FFN) or repeat each layer "
                "to see what a LoRA per position costs.")
    return None


def lora_targets_for(cfg: ModelConfig) -> str | None:
    """The matrices the LoRA chart puts a LoRA on: the config's own (`lora_targets`) when it has one, else every
    matrix whose block some executed positions share (`LORA_MATRICES` order, joined by '-'); None if none is."""
    if not family_of(cfg.family).albert_ideas:
        return None
    if cfg.lora_rank:
        return cfg.lora_targets
    usable = []
    for m in LORA_MATRICES:
        try:
            cfg.replace(lora_rank=1, lora_targets=m)
        except ValueError:  # its block is not shared (and no layer repeats): a LoRA there would merge
            continue
        usable.append(m)
    return "-".join(usable) or None


def lora_base(cfg: ModelConfig) -> ModelConfig:
    """``cfg`` at LoRA rank 1 on the chart's matrices (`lora_targets_for`): the key of the LoRA chart, the same for
    every rank of one config (its caller checks `lora_refusal` first)."""
    targets = lora_targets_for(cfg)
    if targets is None:
        raise ValueError(f"{cfg.label} cannot carry a LoRA per position")
    return cfg.replace(lora_rank=1, lora_targets=targets)


def lora_max_rank(base: ModelConfig) -> int:
    """The largest rank the base's targets allow: each target's smaller side."""
    shapes = base.lora_shapes
    return min(min(shapes[m]) for m in base.lora_targets.split("-"))


def lora_ranks(base: ModelConfig, current: int = 0) -> tuple[int, ...]:
    """0, then powers of two up to H / 2 or the largest valid rank, whichever is smaller; ``current`` added when it
    lies past them (inside them the star lies on the straight line: parameters are linear in the rank)."""
    top = max(1, min(base.hidden_size // 2, lora_max_rank(base)))
    ranks = {0}
    r = 1
    while r <= top:
        ranks.add(r)
        r *= 2
    if current > max(ranks):
        ranks.add(current)
    return tuple(sorted(ranks))


def lora_references(base: ModelConfig) -> dict[str, tuple[str, int]]:
    """The two reference counts of the LoRA chart, by key: "unshared" (the config with sharing none and G = 1: every
    layer its own weights) and "shared" (all-shared, no LoRA); each (legend name, parameters)."""
    from albert_core.configuration.coerce import coerce

    unshared = coerce({"sharing": "none", "num_hidden_groups": 1, "lora_rank": 0}, base).config
    shared = coerce({"sharing": "all", "lora_rank": 0}, base).config
    g = f", G = {shared.num_hidden_groups}" if shared.num_hidden_groups > 1 else ""
    return {"unshared": ("not shared (every layer its own weights)", count_params(unshared).total),
            "shared": (f"all-shared{g}, no LoRA", count_params(shared).total)}


def lora_frame(base: ModelConfig, ranks: Sequence[int]) -> pd.DataFrame:
    """Total parameters of ``base`` at each LoRA rank of ``ranks`` (rank 0: no LoRA), exact (`sweep`); columns
    lora_rank, params."""
    from albert_core.counting.sweeps import sweep

    df = sweep(base, "lora_rank", list(ranks), include_bert=False, seq_len=min(128, base.max_seq_len),
               columns=("lora_rank", "params"))
    return pd.DataFrame({"lora_rank": [int(r) for r in df["lora_rank"].tolist()],
                         "params": [int(p) for p in df["params"].tolist()]})


LORA_TARGET_NAMES = {"q": "q", "k": "k", "v": "v", "o": "o", "in": "FFN in", "out": "FFN out"}


def lora_hover(rank: int, params: int, without: int) -> str:
    """A point's hover text: the rank, the total (rounded and exact), what the LoRA adds."""
    text = f"rank {rank:,}: {fmt_params(params)} params ({params:,})"
    if params != without:
        text += f"<br>LoRA +{params - without:,} ({fmt_pct((params - without) / without, signed=True)})"
    return text


def params_vs_lora_rank_base(df: pd.DataFrame, base: ModelConfig, references: Mapping[str, tuple[str, int]]
                             ) -> go.Figure:
    """Total parameters against the LoRA rank (``df``: `lora_frame`, rank 0 first), a straight line, beside the
    reference counts (`lora_references`) drawn flat across the ranks; the star: `mark_params_vs_lora_rank`."""
    ranks, params = df["lora_rank"].tolist(), df["params"].tolist()
    without = params[ranks.index(0)]
    targets = ", ".join(LORA_TARGET_NAMES[m] for m in base.lora_targets.split("-"))
    data = [dict(type="scatter", x=ranks, y=floats(params), mode="lines+markers", name=f"LoRA on {targets}",
                 line=dict(color=FAMILY_COLORS["ALBERT"]), text=[lora_hover(r, p, without)
                                                                 for r, p in zip(ranks, params, strict=True)],
                 hovertemplate="%{text}<extra></extra>")]
    styles = {"unshared": dict(color=FAMILY_COLORS["BERT"], dash="dash", width=2),
              "shared": dict(color="#7f7f7f", dash="dot", width=2)}
    for key, (name, total) in references.items():
        label = f"{name}: {fmt_params(total)}"
        data.append(dict(type="scatter", x=[ranks[0], ranks[-1]], y=[float(total)] * 2, mode="lines", name=label,
                         line=styles[key], text=[f"{name}: {fmt_params(total)} params ({total:,})"] * 2,
                         hovertemplate="%{text}<extra></extra>"))
    top = max([*params, *(total for _, total in references.values())])
    layout = layout_spec("Parameters against LoRA rank", "LoRA rank r", "parameters")
    layout["yaxis"].update(linear_ticks(top, fmt_params))
    return plotly_dicts.figure(data, layout)


def mark_params_vs_lora_rank(base: go.Figure, cfg: ModelConfig, current_params: int) -> go.Figure:
    """The current config at its own rank (0 without a LoRA)."""
    text = f"{cfg.label}: {fmt_params(current_params)} ({current_params:,})"
    top = max([*_extent(base, "y"), current_params])
    return with_marks(base, [star_point(cfg.lora_rank, current_params, text)],
                      axes={"yaxis": linear_ticks(top, fmt_params)})
