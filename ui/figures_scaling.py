"""Pure Plotly builders for the Scaling page: DataFrames / configs in, `go.Figure` out.

Every chart marks the current config with the same red star (or outline) so a reader finds "me" at
a glance. No streamlit import: tests call these without a server.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from albert_core import ModelConfig, count_flops, count_params
from albert_core.config import SHARING_LABELS
from albert_core.format import fmt_bytes, fmt_flops, fmt_params, fmt_pct

FAMILY_COLORS = {"ALBERT": "#1f77b4", "BERT": "#ff7f0e"}
CURRENT_COLOR = "#d62728"
CURRENT_NAME = "current config"
_CURRENT_MARKER = dict(symbol="star", size=18, color=CURRENT_COLOR, line=dict(width=1, color="black"))

# Paper Table 4 (ALBERT-base, V=30,000): printed totals per embedding size and sharing mode.
PAPER_TABLE4: Mapping[int, Mapping[str, float]] = {
    768: {"all": 31e6, "attention": 83e6, "ffn": 57e6, "none": 108e6},
    128: {"all": 12e6, "attention": 64e6, "ffn": 38e6, "none": 89e6},
}
TABLE4_MODES = ("all", "attention", "ffn", "none")  # the paper's row order

# The seed document's embedding chart: BERT's vocabulary and E = 128 for every ALBERT size.
SEED_VOCAB = 30_522
SEED_EMBEDDING = 128

MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations")
MEMORY_COLORS = {"weights": "#4c78a8", "gradients": "#f58518", "optimizer": "#54a24b", "activations": "#b279a2"}


def family_label(cfg: ModelConfig) -> str:
    return "ALBERT" if cfg.family == "albert" else "BERT"


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, *, log_y: bool = False) -> go.Figure:
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title=y_title,
        # legend under the axis title: several series would collide with the title above the plot
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0),
        margin=dict(l=10, r=10, t=50, b=10),
        hovermode="closest",
    )
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def _current_point(x: float, y: float, text: str) -> go.Scatter:
    return go.Scatter(
        x=[x], y=[y], mode="markers", name=CURRENT_NAME, marker=_CURRENT_MARKER,
        hovertemplate=f"{text}<extra>{CURRENT_NAME}</extra>",
    )


def _lines_by_model(df: pd.DataFrame, x: str, y: str, hover_x: str) -> list[go.Scatter]:
    traces = []
    for model, part in df.groupby("model", sort=True):
        part = part.sort_values(x)
        traces.append(go.Scatter(
            x=part[x].tolist(), y=part[y].tolist(), mode="lines+markers", name=str(model),
            line=dict(color=FAMILY_COLORS.get(str(model))),
            text=[fmt_params(v) for v in part[y]],
            hovertemplate=f"{hover_x}=%{{x}}<br>%{{text}} params<extra>{model}</extra>",
        ))
    return traces


# ----------------------------------------------------------------------------- series charts
def params_vs_hidden(df: pd.DataFrame, cfg: ModelConfig, current_params: int) -> go.Figure:
    """Total params against hidden size H for ALBERT and BERT (log y); ``df`` is a `sweep` over H."""
    fig = go.Figure(_lines_by_model(df, "hidden_size", "params", "H"))
    fig.add_trace(_current_point(cfg.hidden_size, current_params, f"{cfg.label}: {fmt_params(current_params)}"))
    return _layout(fig, "Parameters vs hidden size H", "hidden size H", "parameters (log)", log_y=True)


def params_vs_layers(df: pd.DataFrame, cfg: ModelConfig, current_params: int) -> go.Figure:
    """Total params against the number of layers L; ``df`` is a `sweep` over num_layers."""
    fig = go.Figure(_lines_by_model(df, "num_layers", "params", "L"))
    fig.add_trace(_current_point(cfg.num_layers, current_params, f"{cfg.label}: {fmt_params(current_params)}"))
    return _layout(fig, "Parameters vs number of layers L", "layers L", "parameters")


def embedding_vs_vocab(df: pd.DataFrame, cfg: ModelConfig, current_embedding: int) -> go.Figure:
    """Embedding params against vocabulary size V: one ALBERT line per E, and BERT (E = H).

    ``df`` is a 2-D `sweep` over vocab_size x embedding_size (BERT rows repeat over E; kept once).
    """
    traces = []
    albert = df[df["model"] == "ALBERT"]
    for e, part in albert.groupby("embedding_size", sort=True):
        part = part.sort_values("vocab_size")
        traces.append(go.Scatter(
            x=part["vocab_size"].tolist(), y=part["embedding_params"].tolist(), mode="lines",
            name=f"ALBERT E={e}", text=[fmt_params(v) for v in part["embedding_params"]],
            hovertemplate=f"V=%{{x:,}}<br>%{{text}}<extra>ALBERT E={e}</extra>",
        ))
    bert = df[df["model"] == "BERT"].drop_duplicates("vocab_size").sort_values("vocab_size")
    if len(bert):
        h = int(bert["hidden_size"].iloc[0])
        traces.append(go.Scatter(
            x=bert["vocab_size"].tolist(), y=bert["embedding_params"].tolist(), mode="lines",
            name=f"BERT (E = H = {h})", line=dict(color=FAMILY_COLORS["BERT"], dash="dash", width=3),
            text=[fmt_params(v) for v in bert["embedding_params"]],
            hovertemplate="V=%{x:,}<br>%{text}<extra>BERT</extra>",
        ))
    fig = go.Figure(traces)
    fig.add_trace(_current_point(
        cfg.vocab_size, current_embedding, f"{cfg.label}, V={cfg.vocab_size:,}: {fmt_params(current_embedding)}"
    ))
    return _layout(fig, "Embedding parameters vs vocabulary size V", "vocabulary size V", "embedding parameters")


# ----------------------------------------------------------------------------- seed embedding chart
def seed_embedding_table(
    configs: Mapping[str, ModelConfig], vocab: int = SEED_VOCAB, embedding: int = SEED_EMBEDDING
) -> pd.DataFrame:
    """The seed document's formula per model size: standard V*H against factorized V*E + E*H.

    These are the seed's token-embedding-only figures (no position / type tables, biases or
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
    outline = [3 if lab == current_label else 0 for lab in df["label"]]
    fig = go.Figure()
    for col, name, color in (("standard", "standard V×H", FAMILY_COLORS["BERT"]),
                             ("factorized", "factorized V×E + E×H", FAMILY_COLORS["ALBERT"])):
        fig.add_trace(go.Bar(
            x=df["label"].tolist(), y=df[col].tolist(), name=name, marker_color=color,
            marker_line=dict(width=outline, color=CURRENT_COLOR),
            text=[fmt_params(v) for v in df[col]], textposition="outside",
            customdata=[fmt_pct(r) for r in df["reduction"]],
            hovertemplate="%{x}<br>%{text}<br>reduction %{customdata}<extra>" + name + "</extra>",
        ))
    fig.update_layout(barmode="group")
    return _layout(fig, "Embedding parameters: standard vs factorized", "model", "embedding parameters")


# ----------------------------------------------------------------------------- presets
def flops_vs_params(df: pd.DataFrame, current: Mapping[str, float | str]) -> go.Figure:
    """Scatter of forward FLOPs against total params for named configs (columns label, model,
    params, forward_flops); ``current`` holds label, params, forward_flops of the current config."""
    fig = go.Figure()
    for model, part in df.groupby("model", sort=True):
        fig.add_trace(go.Scatter(
            x=part["params"].tolist(), y=part["forward_flops"].tolist(), mode="markers+text",
            name=str(model), text=part["label"].tolist(), textposition="top center",
            marker=dict(size=12, color=FAMILY_COLORS.get(str(model))),
            customdata=[[fmt_params(p), fmt_flops(f)] for p, f in zip(part["params"], part["forward_flops"], strict=True)],
            hovertemplate="%{text}<br>%{customdata[0]} params<br>%{customdata[1]}<extra></extra>",
        ))
    fig.add_trace(_current_point(
        current["params"], current["forward_flops"],
        f"{current['label']}: {fmt_params(current['params'])}, {fmt_flops(current['forward_flops'])}",
    ))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return _layout(fig, "Forward FLOPs per sequence vs parameters", "parameters (log)", "forward FLOPs (log)")


def params_heatmap(df: pd.DataFrame, cfg: ModelConfig, highlight: bool = True) -> go.Figure:
    """Heatmap of total params over (E, H) (``df``: ALBERT rows over E and H); with ``highlight``
    the cell of ``cfg``'s (E, H) is starred when it is in the grid."""
    grid = df.pivot_table(index="hidden_size", columns="embedding_size", values="params", aggfunc="first")
    grid = grid.sort_index().sort_index(axis=1)
    x = [str(v) for v in grid.columns]
    y = [str(v) for v in grid.index]
    fig = go.Figure(go.Heatmap(
        z=grid.to_numpy().tolist(), x=x, y=y, colorscale="Blues", name="params",
        text=[[fmt_params(v) for v in row] for row in grid.to_numpy()], texttemplate="%{text}",
        hovertemplate="E=%{x}, H=%{y}<br>%{text}<extra></extra>", colorbar=dict(title="params"),
    ))
    current = df[(df["embedding_size"] == cfg.embedding_size) & (df["hidden_size"] == cfg.hidden_size)]
    if highlight and len(current):
        total = int(current["params"].iloc[0])
        fig.add_trace(_current_point(str(cfg.embedding_size), str(cfg.hidden_size), fmt_params(total)))
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return _layout(fig, "Total parameters over embedding size E and hidden size H",
                   "embedding size E", "hidden size H")


def sharing_modes(df: pd.DataFrame, current_params: int | None = None, current_label: str = "") -> go.Figure:
    """Paper Table 4: exact params per sharing mode (bars) with the printed figures (diamonds).

    ``df`` columns: embedding_size, sharing, exact, paper. A dotted line marks the current config.
    """
    fig = go.Figure()
    colors = {768: "#9ecae1", 128: FAMILY_COLORS["ALBERT"]}
    for e in sorted(df["embedding_size"].unique(), reverse=True):
        part = df[df["embedding_size"] == e].set_index("sharing").loc[list(TABLE4_MODES)]
        x = [SHARING_LABELS[m] for m in part.index]
        fig.add_trace(go.Bar(
            x=x, y=part["exact"].tolist(), name=f"exact, E={e}", marker_color=colors.get(int(e)),
            offsetgroup=str(e), text=[fmt_params(v) for v in part["exact"]], textposition="outside",
            hovertemplate="%{x}<br>exact %{text}<extra>E=" + str(e) + "</extra>",
        ))
        fig.add_trace(go.Scatter(
            x=x, y=part["paper"].tolist(), mode="markers", name=f"paper, E={e}", offsetgroup=str(e),
            marker=dict(symbol="diamond", size=11, color="black"),
            text=[fmt_params(v, 0) for v in part["paper"]],
            hovertemplate="%{x}<br>paper %{text}<extra>E=" + str(e) + "</extra>",
        ))
    fig.update_layout(barmode="group", scattermode="group")
    if current_params is not None:
        fig.add_hline(y=current_params, line=dict(color=CURRENT_COLOR, dash="dot", width=2),
                      annotation_text=f"{CURRENT_NAME}: {fmt_params(current_params)} {current_label}",
                      annotation_position="top right")
    return _layout(fig, "Cross-layer sharing, ALBERT-base (paper Table 4)", "sharing mode", "parameters")


def memory_bars(df: pd.DataFrame, current_label: str) -> go.Figure:
    """Stacked training-memory bars (weights, gradients, optimizer, activations) per config.

    ``df`` columns: label plus the four parts in bytes. The current config's bar is outlined.
    """
    outline = [3 if lab == current_label else 0 for lab in df["label"]]
    fig = go.Figure()
    for part in MEMORY_PARTS:
        fig.add_trace(go.Bar(
            x=df["label"].tolist(), y=df[part].tolist(), name=part, marker_color=MEMORY_COLORS[part],
            marker_line=dict(width=outline, color=CURRENT_COLOR),
            text=[fmt_bytes(v) for v in df[part]],
            hovertemplate="%{x}<br>" + part + ": %{text}<extra></extra>",
        ))
    totals = df[list(MEMORY_PARTS)].sum(axis=1)
    fig.add_trace(go.Scatter(
        x=df["label"].tolist(), y=totals.tolist(), mode="text", name="total", showlegend=False,
        text=[fmt_bytes(v) for v in totals], textposition="top center", hoverinfo="skip",
    ))
    fig.update_layout(barmode="stack")
    return _layout(fig, "Training memory: weights, gradients, optimizer, activations", "", "bytes")


# ----------------------------------------------------------------------------- data for the charts
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
