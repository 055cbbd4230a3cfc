"""The architecture diagram of one config (pure Plotly builder, no streamlit import).

One column per executed layer (L*K of them: layer i runs its K inner attention + FFN pairs in order),
two rows (attention above, feed-forward below) and the embeddings on the left. A block's colour and
label name the parameter copy it uses (`ModelConfig.block_index`): blocks that share weights share a
colour, so all-shared is one colour across the row, G groups are G colours, and not-shared gives
every column its own. Dashed lines separate the groups; with K > 1 an outline encloses each layer's
K repeats. Every shape carries a `name` ("attention copy 0.1, layer 3 repeat 1", ...) that the tests
read.
"""

from __future__ import annotations

import plotly.graph_objects as go

from albert_core import ModelConfig
from albert_core.configuration.config import SHARING_LABELS, family_of
from ui import plotly_dicts

ATTENTION_COLORS = ("#4c78a8", "#72b7b2", "#9ecae9", "#2a5783", "#5fa2ce", "#a0cbe8")
FFN_COLORS = ("#f58518", "#e45756", "#ffbf79", "#b9520e", "#ff9d9a", "#d37295")
EMBEDDING_COLOR = "#bab0ac"
MAX_LABELLED = 24  # more executed layers than this: block labels only on hover
SHADES = {"attention": "Blues", "FFN": "Oranges"}  # more copies than a palette holds: one shade per copy


def copy_colors(kind: str, copies: int) -> list[str]:
    """One distinct colour per parameter copy of ``kind``: the palette while it lasts, else evenly spaced
    shades of one scale (so two different copies never share a colour, which would say "same weights")."""
    palette = ATTENTION_COLORS if kind == "attention" else FFN_COLORS
    if copies <= len(palette):
        return list(palette[:copies])
    from plotly.colors import sample_colorscale

    return sample_colorscale(SHADES[kind], [0.35 + 0.6 * i / (copies - 1) for i in range(copies)])
ROWS = {"attention": 1.0, "FFN": 0.0}


def copy_name(cfg: ModelConfig, layer: int, shared: bool, repeat: int) -> str:
    """The copy a block uses: its copy set, and the inner repeat when K > 1 (``"1"``, ``"1.0"``)."""
    index = cfg.block_index(layer, shared)
    return f"{index}.{repeat}" if cfg.inner_group_num > 1 else str(index)


def blocks(cfg: ModelConfig) -> list[dict]:
    """Every executed block: kind, executed position x, layer, repeat, the copy it uses, its group."""
    out = []
    K = cfg.inner_group_num
    for i in range(cfg.num_layers):
        for k in range(K):
            for kind, shared in (("attention", cfg.attention_shared), ("FFN", cfg.ffn_shared)):
                out.append({"kind": kind, "x": i * K + k, "layer": i, "repeat": k,
                            "copy": copy_name(cfg, i, shared, k), "index": cfg.block_index(i, shared),
                            "group": cfg.group_of_layer(i) if cfg.sharing != "none" else None})
    return out


def architecture_title(cfg: ModelConfig) -> str:
    return f"L×K = {cfg.num_layers}×{cfg.inner_group_num} = {cfg.executed_layers} executed layers"


def architecture_summary(cfg: ModelConfig) -> str:
    """One sentence: executed blocks against the copies held."""
    record = family_of(cfg.family)
    mode = f"{record.label}, nothing shared" if not record.albert_ideas else SHARING_LABELS[cfg.sharing]
    groups = (f", G = {cfg.num_hidden_groups} group{'s' if cfg.num_hidden_groups > 1 else ''}"
              if cfg.sharing != "none" else "")
    return (f"{cfg.num_layers} layers × K = {cfg.inner_group_num} inner repeats run {cfg.executed_layers} "
            f"attention and {cfg.executed_layers} feed-forward blocks; the model holds "
            f"{cfg.attention_copies} attention and {cfg.ffn_copies} feed-forward copies ({mode}{groups}). "
            + ("Same colour = same weights." if max(cfg.attention_copies, cfg.ffn_copies) <= len(ATTENTION_COLORS)
               else "Same colour = same weights; with this many distinct copies the shades are close, so hover a "
               "block for the copy it runs."))


def architecture_diagram(cfg: ModelConfig) -> go.Figure:
    """The diagram (see the module docstring)."""
    n = cfg.executed_layers
    labelled = n <= MAX_LABELLED
    shapes: list[dict] = []
    annotations: list[dict] = []
    hx, hy, htext = [], [], []
    colors = {"attention": copy_colors("attention", cfg.attention_copies), "FFN": copy_colors("FFN", cfg.ffn_copies)}
    emb = "V×E + E→H" if cfg.is_factorized else "V×H"
    shapes.append(dict(type="rect", x0=-1.9, x1=-0.7, y0=-0.4, y1=1.4, fillcolor=EMBEDDING_COLOR,
                       line=dict(width=0), name=f"embeddings {emb}"))
    annotations.append(dict(x=-1.3, y=0.5, text="emb", showarrow=False, textangle=-90,
                            font=dict(size=11, color="#222222")))  # dark on the grey block, readable
    hx.append(-1.3), hy.append(0.5), htext.append(f"embeddings: {emb} (E = {cfg.embedding_size})")
    for b in blocks(cfg):
        y = ROWS[b["kind"]]
        palette = colors[b["kind"]]
        color = palette[b["index"] * cfg.inner_group_num + b["repeat"]]  # one per copy
        shapes.append(dict(type="rect", x0=b["x"] - 0.42, x1=b["x"] + 0.42, y0=y - 0.38, y1=y + 0.38,
                           fillcolor=color, line=dict(width=1, color="white"),
                           name=f"{b['kind']} copy {b['copy']}, layer {b['layer']} repeat {b['repeat']}"))
        letter = "A" if b["kind"] == "attention" else "F"
        if labelled:
            annotations.append(dict(x=b["x"], y=y, text=f"{letter}{b['copy']}", showarrow=False,
                                    font=dict(size=10 if n <= 12 else 8, color="white")))
        hx.append(b["x"]), hy.append(y)
        group = "" if b["group"] is None else f", group {b['group']}"
        htext.append(f"layer {b['layer']}, repeat {b['repeat']}{group}: {b['kind']} copy {b['copy']}")
    K = cfg.inner_group_num
    if K > 1:
        for i in range(cfg.num_layers):
            shapes.append(dict(type="rect", x0=i * K - 0.5, x1=i * K + K - 0.5, y0=-0.47, y1=1.47,
                               line=dict(width=1, color="#555", dash="dot"), name=f"layer {i}"))
    if cfg.sharing != "none" and cfg.num_hidden_groups > 1:
        starts = [i for i in range(1, cfg.num_layers) if cfg.group_of_layer(i) != cfg.group_of_layer(i - 1)]
        for i in starts:
            shapes.append(dict(type="line", x0=i * K - 0.5, x1=i * K - 0.5, y0=-0.55, y1=1.55,
                               line=dict(width=2, color="#333", dash="dash"), name=f"group boundary {i}"))
        for g, first in enumerate([0, *starts]):
            annotations.append(dict(x=first * K - 0.45, y=1.62, xanchor="left", yanchor="bottom",
                                    text=f"group {g}", showarrow=False, font=dict(size=10)))
    return plotly_dicts.figure(
        [dict(type="scatter", x=hx, y=hy, mode="markers", marker=dict(size=14, opacity=0), hovertext=htext,
              hoverinfo="text", showlegend=False, name="blocks")],
        dict(
            title=dict(text=architecture_title(cfg), font=dict(size=15)),
            shapes=shapes, annotations=annotations, showlegend=False, height=260,
            margin=dict(l=10, r=10, t=50, b=40), plot_bgcolor="white",
            xaxis=dict(range=[-2.1, n - 0.4], showgrid=False, zeroline=False, title=dict(text="executed layer"),
                       tickmode="array", tickvals=list(range(0, n, max(1, n // 8))), fixedrange=True),
            yaxis=dict(range=[-0.7, 1.95], tickvals=[1, 0], ticktext=["attn", "FFN"], showgrid=False,
                       zeroline=False, fixedrange=True),
        ),
    )
