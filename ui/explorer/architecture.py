"""The architecture diagram of one config (pure Plotly builder, no streamlit import), and its sentences.

One column per executed layer (L*K*repeat of them: layer i runs its K inner attention + FFN pairs in order, and
with a repeat r runs them r times in a row), two rows (attention above, feed-forward below) and the embeddings on
the left. A block's colour and label name the parameter copy it uses (`ModelConfig.block_index`, which follows the
block order and the unique first and last layers): blocks that share weights share a colour, so all-shared is one
colour across the row, G groups are G colours, and not-shared gives every column its own. Dashed lines separate
contiguous groups and the unique ends; with K > 1 or a repeat an outline encloses each layer's K x r blocks; a dark
band at a block's foot marks an executed position with a LoRA of its own. Every shape carries a `name`
("attention copy 0.1, layer 3 repeat 1", "LoRA on attention (q, v), executed layer 5", ...) that the tests read.
"""

from __future__ import annotations

import plotly.graph_objects as go

from albert_core import ModelConfig
from albert_core.configuration.config import ATTENTION_MATRICES, SHARING_LABELS, family_of
from albert_core.format import fmt_flops, fmt_params, fmt_pct
from ui import plotly_dicts

ATTENTION_COLORS = ("#4c78a8", "#72b7b2", "#9ecae9", "#2a5783", "#5fa2ce", "#a0cbe8")
FFN_COLORS = ("#f58518", "#e45756", "#ffbf79", "#b9520e", "#ff9d9a", "#d37295")
EMBEDDING_COLOR = "#bab0ac"
MAX_LABELLED = 24  # more executed layers than this: block labels only on hover
MAX_DRAWN = 768  # more executed layers than this: the first MAX_DRAWN are drawn (the title says so)
MAX_SCHEDULE = 32  # layers written out in the schedule sentence
LORA_COLOR = "#222222"
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
KIND_MATRICES = {"attention": ATTENTION_MATRICES, "FFN": ("in", "out")}
MATRIX_WORDS = {"q": "q", "k": "k", "v": "v", "o": "o", "in": "FFN up", "out": "FFN down"}


def copy_name(cfg: ModelConfig, layer: int, shared: bool, repeat: int) -> str:
    """The copy a block uses: its copy set, and the inner repeat when K > 1 (``"1"``, ``"1.0"``)."""
    index = cfg.block_index(layer, shared)
    return f"{index}.{repeat}" if cfg.inner_group_num > 1 else str(index)


def set_label(cfg: ModelConfig, index: int) -> str:
    """What a shared copy set is: a group, or the unique first or last layer's own (``unique_ends``)."""
    if cfg.unique_ends and index == 0:
        return "first layer's own"
    if cfg.unique_ends and index == cfg.num_hidden_groups + 1:
        return "last layer's own"
    return f"group {index}"


def lora_at(cfg: ModelConfig, layer: int, kind: str) -> tuple[str, ...]:
    """The matrices of ``kind`` ("attention" or "FFN") that carry a LoRA at each executed position of ``layer``
    (`ModelConfig.lora_targets_at`, the positions `ModelConfig.lora_terms` counts)."""
    return tuple(m for m in cfg.lora_targets_at(layer) if m in KIND_MATRICES[kind])


def blocks(cfg: ModelConfig, limit: int | None = None) -> list[dict]:
    """Every executed block (the first ``limit`` executed layers' when given): kind, executed position x, layer,
    pass (of the layer's ``repeat`` runs), inner repeat, the copy it uses, its copy set's label and the matrices
    that carry a LoRA there."""
    out = []
    K, R = cfg.inner_group_num, cfg.repeat
    n = cfg.executed_layers if limit is None else min(limit, cfg.executed_layers)
    for i in range(-(-n // (K * R))):
        kinds = [(kind, shared, cfg.block_index(i, shared), lora_at(cfg, i, kind))
                 for kind, shared in (("attention", cfg.attention_shared), ("FFN", cfg.ffn_shared))]
        for p in range(R):
            for k in range(K):
                x = (i * R + p) * K + k
                if x >= n:
                    return out
                for kind, shared, index, lora in kinds:
                    out.append({"kind": kind, "x": x, "layer": i, "pass": p, "repeat": k,
                                "copy": copy_name(cfg, i, shared, k), "index": index,
                                "group": set_label(cfg, index) if shared else None, "lora": lora})
    return out


def depth_words(cfg: ModelConfig) -> str:
    """The executed depth as a product: "L×K = 12×1 = 12", with a repeat "L×K×r = 12×1×2 = 24"."""
    if cfg.repeat > 1:
        return f"L×K×r = {cfg.num_layers}×{cfg.inner_group_num}×{cfg.repeat} = {cfg.executed_layers}"
    return f"L×K = {cfg.num_layers}×{cfg.inner_group_num} = {cfg.executed_layers}"


def depth_short(cfg: ModelConfig) -> str:
    """The executed depth named by its factors: "L×K = 12", with a repeat "L×K×r = 24"."""
    return f"{'L×K×r' if cfg.repeat > 1 else 'L×K'} = {cfg.executed_layers}"


def architecture_title(cfg: ModelConfig) -> str:
    drawn = f" (the first {MAX_DRAWN} drawn)" if cfg.executed_layers > MAX_DRAWN else ""
    return f"{depth_words(cfg)} executed layers{drawn}"


def _matrices_words(matrices: tuple[str, ...] | list[str]) -> str:
    return ", ".join(MATRIX_WORDS[m] for m in matrices)


def schedule_text(cfg: ModelConfig) -> str:
    """The block schedule in words: the copy each layer runs (attention / FFN when they differ), layer by layer,
    the unique ends set apart, the repeat, and where a LoRA sits."""
    if cfg.sharing == "none" and cfg.repeat == 1:
        return ""
    same = cfg.attention_shared == cfg.ffn_shared
    tokens = []
    for i in range(min(cfg.num_layers, MAX_SCHEDULE)):
        a, f = cfg.block_index(i, cfg.attention_shared), cfg.block_index(i, cfg.ffn_shared)
        tokens.append(str(a) if same else f"A{a}/F{f}")
    if cfg.unique_ends and cfg.num_layers <= MAX_SCHEDULE:
        tokens = [tokens[0], "|", *tokens[1:-1], "|", tokens[-1]]
    elif cfg.unique_ends:
        tokens = [tokens[0], "|", *tokens[1:]]
    more = f" … ({cfg.num_layers} layers)" if cfg.num_layers > MAX_SCHEDULE else ""
    what = "copy" if same else "attention / FFN copy"
    parts = [f"The {what} each layer runs: {' '.join(tokens)}{more}"]
    if cfg.sharing != "none":
        if cfg.block_order == "cycle" and cfg.num_hidden_groups > 1:
            parts.append(f"the {cfg.num_hidden_groups} groups take turns layer after layer (cycle, ABAB), not "
                         "contiguous runs (ALBERT, AABB)")
        if cfg.unique_ends:
            parts.append(f"the first and last layers run copies of their own ({'0' if same else 'A0/F0'} and "
                         f"{cfg.num_hidden_groups + 1}), the {cfg.num_hidden_groups} group"
                         f"{'s' if cfg.num_hidden_groups > 1 else ''} share the {cfg.num_layers - 2} between them")
    if cfg.repeat > 1:
        parts.append(f"every layer runs {cfg.repeat} times in a row with the same weights, {depth_words(cfg)} "
                     "executed layers")
    text = "; ".join(parts) + "."
    if cfg.lora_rank:
        where = []
        for kind, n in (("attention", cfg.attention_lora_positions), ("FFN", cfg.ffn_lora_positions)):
            matrices = [m for m in KIND_MATRICES[kind] if m in cfg.lora_targets.split("-")]
            if matrices and n:
                where.append(f"on {_matrices_words(matrices)} at {n:,} executed {kind} blocks")
        ends = " (not at the unique ends, whose weights are their own)" if cfg.unique_ends else ""
        text += (f" A LoRA of rank {cfg.lora_rank} per position sits {' and '.join(where)}{ends}: the dark band at a "
                 "block's foot.")
    return text


def lora_cost_text(params, flops, batch: int = 1) -> str:
    """The parameters and FLOPs a per-position LoRA adds, with the config's own numbers: ``params`` a
    `ParamBreakdown`, ``flops`` the `FlopBreakdown` of one sequence (its ``encoder.lora.*`` components); ``batch``
    the workload's. "" without a LoRA."""
    added = sum(c.params for c in params.components if c.name.startswith("encoder.lora."))
    cost = sum(c.forward for c in flops.components if c.name.startswith("encoder.lora."))
    if not added:
        return ""
    per_batch = f" ({fmt_flops(cost * batch)} for the batch of {batch:,})" if batch > 1 else ""
    return (f"The per-position LoRA adds {added:,} parameters ({fmt_params(added)}, {fmt_pct(added / params.total)} "
            f"of the {fmt_params(params.total)}) and {fmt_flops(cost)} per forward pass of one {flops.seq_len:,}-token "
            f"sequence, {fmt_pct(cost / flops.forward)} of its {fmt_flops(flops.forward)}{per_batch}. A LoRA on a "
            "weight that other positions share cannot be merged into that weight (every position would need its own "
            "merged copy): it runs beside it at every position, 2 × rank × (d_in + d_out) FLOPs per token. Unlike "
            "sharing, which saves parameters at no cost in compute, the LoRA costs compute.")


def architecture_summary(cfg: ModelConfig) -> str:
    """One sentence: executed blocks against the copies held."""
    record = family_of(cfg.family)
    mode = f"{record.label}, nothing shared" if not record.albert_ideas else SHARING_LABELS[cfg.sharing]
    groups = (f", G = {cfg.num_hidden_groups} group{'s' if cfg.num_hidden_groups > 1 else ''}"
              if cfg.sharing != "none" else "")
    repeat = f" × {cfg.repeat} runs in a row" if cfg.repeat > 1 else ""
    return (f"{cfg.num_layers} layers × K = {cfg.inner_group_num} inner repeats{repeat} run {cfg.executed_layers} "
            f"attention and {cfg.executed_layers} feed-forward blocks; the model holds "
            f"{cfg.attention_copies} attention and {cfg.ffn_copies} feed-forward copies ({mode}{groups}). "
            + ("Same colour = same weights." if max(cfg.attention_copies, cfg.ffn_copies) <= len(ATTENTION_COLORS)
               else "Same colour = same weights; with this many distinct copies the shades are close, so hover a "
               "block for the copy it runs."))


def _segment(cfg: ModelConfig, layer: int) -> int:
    """The stretch of layers a layer belongs to in the diagram: its copy set with contiguous groups; with the cycle
    order only the unique first layer (0), the cycling middle (1) and the unique last layer (2)."""
    if cfg.block_order == "cycle":
        return 0 if cfg.unique_ends and layer == 0 else 2 if cfg.unique_ends and layer == cfg.num_layers - 1 else 1
    return cfg.shared_group_of_layer(layer)


def _segment_label(cfg: ModelConfig, segment: int) -> str:
    """A segment's label above the diagram, short enough for a phone: the unique ends are "first" and "last" (the
    hover says whose copy it is)."""
    last = cfg.num_hidden_groups + 1 if cfg.block_order != "cycle" else 2
    if cfg.unique_ends and segment in (0, last):
        return "first" if segment == 0 else "last"
    if cfg.block_order != "cycle" or (segment == 1 and cfg.num_hidden_groups == 1):
        return set_label(cfg, segment if cfg.block_order != "cycle" else int(cfg.unique_ends))
    first = int(cfg.unique_ends)
    return f"groups {first}-{first + cfg.num_hidden_groups - 1} in turn"


def architecture_diagram(cfg: ModelConfig) -> go.Figure:
    """The diagram (see the module docstring)."""
    n = min(cfg.executed_layers, MAX_DRAWN)
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
    R = cfg.repeat
    for b in blocks(cfg, MAX_DRAWN):
        y = ROWS[b["kind"]]
        palette = colors[b["kind"]]
        color = palette[b["index"] * cfg.inner_group_num + b["repeat"]]  # one per copy
        run = f" pass {b['pass']}" if R > 1 else ""
        shapes.append(dict(type="rect", x0=b["x"] - 0.42, x1=b["x"] + 0.42, y0=y - 0.38, y1=y + 0.38,
                           fillcolor=color, line=dict(width=1, color="white"),
                           name=f"{b['kind']} copy {b['copy']}, layer {b['layer']} repeat {b['repeat']}{run}"))
        if b["lora"]:
            shapes.append(dict(type="rect", x0=b["x"] - 0.42, x1=b["x"] + 0.42, y0=y - 0.38, y1=y - 0.24,
                               fillcolor=LORA_COLOR, line=dict(width=0),
                               name=f"LoRA on {b['kind']} ({', '.join(b['lora'])}), executed layer {b['x']}"))
        letter = "A" if b["kind"] == "attention" else "F"
        if labelled:
            annotations.append(dict(x=b["x"], y=y + 0.05 if b["lora"] else y, text=f"{letter}{b['copy']}",
                                    showarrow=False, font=dict(size=10 if n <= 12 else 8, color="white")))
        hx.append(b["x"]), hy.append(y)
        group = "" if b["group"] is None else f", {b['group']}"
        lora = f" + its own LoRA (rank {cfg.lora_rank}) on {_matrices_words(b['lora'])}" if b["lora"] else ""
        htext.append(f"layer {b['layer']}{run}, repeat {b['repeat']}{group}: {b['kind']} copy {b['copy']}{lora}")
    width = cfg.inner_group_num * R  # executed positions per layer
    layers = -(-n // width)
    if width > 1:
        for i in range(layers):
            shapes.append(dict(type="rect", x0=i * width - 0.5, x1=i * width + width - 0.5, y0=-0.47, y1=1.47,
                               line=dict(width=1, color="#555", dash="dot"), name=f"layer {i}"))
    if cfg.sharing != "none":
        starts = [i for i in range(1, layers) if _segment(cfg, i) != _segment(cfg, i - 1)]
        for i in starts:
            shapes.append(dict(type="line", x0=i * width - 0.5, x1=i * width - 0.5, y0=-0.55, y1=1.55,
                               line=dict(width=2, color="#333", dash="dash"), name=f"group boundary {i}"))
        if starts or (cfg.block_order == "cycle" and cfg.num_hidden_groups > 1):
            for first in [0, *starts]:
                text = _segment_label(cfg, _segment(cfg, first))
                end = text == "last"  # anchored at the diagram's right edge, never cut there
                annotations.append(dict(x=layers * width - 0.45 if end else first * width - 0.45, y=1.62,
                                        xanchor="right" if end else "left", yanchor="bottom", text=text,
                                        showarrow=False, font=dict(size=10)))
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
