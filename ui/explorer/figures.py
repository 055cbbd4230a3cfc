"""Pure Plotly builders of the Explorer page (no streamlit import).

Inputs are a `ParamBreakdown`, a `Result` (`albert_core.counting.report.analyze`) or per-component FLOPs; every
figure's numbers are exactly those inputs, so tests compare trace values with the breakdown. The one-line
takeaways under the charts are built here too, from the same numbers.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from albert_core.configuration.config import family_of
from albert_core.counting.flops import differences_words, flop_differences, outside_layers
from albert_core.counting.memory import DEVICE_MEMORY_GB, estimate_memory, largest_batches
from albert_core.counting.params import COMPONENT_INFO, ParamBreakdown
from albert_core.counting.report import Result
from albert_core.format import (
    change_words,
    direction,
    fmt_bytes,
    fmt_flops,
    fmt_params,
    fmt_pct,
    fmt_ratio,
    sentence_case,
)
from albert_core.hardware.time_model import TABLE2_MLM_FRACTION, table2_size_ratios
from albert_core.paper import PAPER_TABLE2_SPEEDUP
from ui import colors, plotly_dicts
from ui.figure_style import LEGEND_BELOW, TITLE_FONT, si_ticks

GROUP_COLORS = {"embeddings": "#4c78a8", "encoder": "#f58518", "heads": "#54a24b"}
CONFIG_COLOR, TWIN_COLOR = colors.ALBERT, colors.BERT  # the config (ALBERT-style) and its BERT twin
_MARGIN = dict(l=10, r=10, t=60, b=10)
def breakdown_treemap(bd: ParamBreakdown) -> go.Figure:
    """Treemap of unique parameters: model -> group (embeddings / encoder / heads) -> component."""
    groups = {g: n for g, n in bd.group_totals().items() if n}
    ids = ["model", *groups, *(c.name for c in bd.components)]
    labels = [bd.config.label, *(g.capitalize() for g in groups), *(c.label for c in bd.components)]
    parents = ["", *(["model"] * len(groups)), *(c.group for c in bd.components)]
    values = [bd.total, *groups.values(), *(c.params for c in bd.components)]
    colors = ["#ffffff", *(GROUP_COLORS[g] for g in groups), *(GROUP_COLORS[c.group] for c in bd.components)]
    return plotly_dicts.figure(
        [dict(type="treemap", ids=ids, labels=labels, parents=parents, values=values, branchvalues="total",
              marker=dict(colors=colors), text=[fmt_params(v) for v in values],
              texttemplate="%{label}<br>%{text}<br>%{percentRoot:.1%}",
              hovertemplate="<b>%{label}</b><br>%{value:,} params<br>%{percentRoot:.2%} of the model"
                            "<extra></extra>")],
        # As tall as the breakdown table beside it (35 px rows, one header row).
        dict(title=dict(text="Where the parameters are (area = params)", font=TITLE_FONT), margin=_MARGIN,
             height=max(420, 35 * (len(bd.components) + 1) + 40)),
    )


def breakdown_takeaway(bd: ParamBreakdown) -> str:
    groups, total = bd.group_totals(), bd.total
    biggest = max(bd.components, key=lambda comp: comp.params)
    text = (f"Takeaway: embeddings hold {fmt_pct(groups['embeddings'] / total)} of the {fmt_params(total)} "
            f"parameters and the encoder {fmt_pct(groups['encoder'] / total)}; the largest component is "
            f"{biggest.label} ({fmt_params(biggest.params)}).")
    if bd.saved_by_sharing:
        text += (f" Without sharing the model would have {fmt_params(bd.unshared_total)} "
                 f"({fmt_ratio(bd.unshared_total / total)} as many).")
    return text


def wrap_label(text: str, width: int = 24) -> str:
    """A long axis label in two lines (a Plotly line break at the space nearest its middle), so the names of
    a horizontal bar chart leave its plot room on a phone; short labels as they are."""
    if len(text) <= width or " " not in text:
        return text
    spaces = [i for i, c in enumerate(text) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return f"{text[:cut]}<br>{text[cut + 1:]}"


def flops_bars(components: Mapping[str, int]) -> go.Figure:
    """Horizontal bars of forward FLOPs per component (one sequence), largest first."""
    items = sorted(((n, v) for n, v in components.items() if v), key=lambda kv: kv[1])
    names = [wrap_label(COMPONENT_INFO.get(n, (n, ""))[0]) for n, _ in items]
    # floats: an exact count may pass 2^63 (the largest sizes), which a chart's JSON cannot hold as an integer
    values = [float(v) for _, v in items]
    total = sum(v for _, v in items) or 1
    colors = [GROUP_COLORS.get(COMPONENT_INFO.get(n, ("", "encoder"))[1], "#999999") for n, _ in items]
    bars = [dict(
        type="bar", x=values, y=names, orientation="h", marker=dict(color=colors),
        showlegend=False,  # the key below names the colours
        text=[fmt_flops(v) for _, v in items], textposition="auto",
        customdata=[v / total for _, v in items],
        hovertemplate="<b>%{y}</b><br>%{x:,} FLOP<br>%{customdata:.1%} of the forward pass<extra></extra>",
    )]
    present = sorted({COMPONENT_INFO.get(n, ("", "encoder"))[1] for n, _ in items}, key=list(GROUP_COLORS).index)
    bars += [dict(type="bar", x=[None], y=[None], orientation="h", name=group, marker=dict(color=GROUP_COLORS[group]),
                  hoverinfo="skip") for group in present]  # the colour key, as legend entries under the plot
    tickvals, ticktext = si_ticks(max(values, default=0), fmt_flops)
    return plotly_dicts.figure(bars, dict(
        title=dict(text="Forward FLOPs per sequence by component", font=TITLE_FONT),
        # no axis title: the chart's title says what the ticks (2 GFLOP, 4 GFLOP) count, and a centred axis title
        # ran past a phone's edge beside the long component names
        xaxis=dict(tickvals=tickvals, ticktext=ticktext,
                   range=[0, max(values, default=1) * 1.02]),
        showlegend=True, legend=LEGEND_BELOW, barmode="overlay",
        margin=_MARGIN, height=max(300, 32 * len(items) + 150)))


def flops_takeaway(components: Mapping[str, int], forward: int, seq_len: int) -> str:
    scores = components.get("encoder.attention.scores", 0)
    ffn = components.get("encoder.ffn.ffn", 0) + components.get("encoder.ffn.ffn_output", 0)
    return (f"Takeaway: at S = {seq_len}, the feed-forward block is {fmt_pct(ffn / forward)} of the "
            f"{fmt_flops(forward)} forward pass and the attention scores (QKᵀ and the weighted values, "
            f"4·S²·H per executed layer) {fmt_pct(scores / forward)}; the scores grow with S², the rest with S.")


def twin_metrics(result: Result) -> list[tuple[str, float, float, Any]]:
    """(metric, this config, BERT twin, formatter) for the "faster or smaller than BERT?" chart
    (memory: training, or inference for int8 weights)."""
    own, twin = result.own, result.twin
    return [
        ("Parameters", own.params.total, twin.params.total, fmt_params),
        ("Forward FLOPs", own.flops_sequence.forward, twin.flops_sequence.forward, fmt_flops),
        ("Activations", own.memory.activations, twin.memory.activations, fmt_bytes),
        ("Weights memory", own.memory.weights, twin.memory.weights, fmt_bytes),
    ]


TWIN_NAMES = {"bert": ("this config", "BERT twin"), "albertized": ("this encoder", "ALBERTized twin"),
              "original": ("this ALBERTized encoder", "original")}


def twin_bars(result: Result, names: tuple[str, str] = ("this config", "BERT twin")) -> go.Figure:
    """The result's config against its twin (an ALBERT's BERT twin, an encoder's ALBERTized twin or original),
    each metric relative to the twin (twin = 100%). Horizontal bars: the metric names and the value labels keep
    their size on a phone."""
    rows = twin_metrics(result)
    labels = [r[0] for r in rows]
    bars = [
        dict(
            type="bar", name=label, y=labels, x=[r[idx] / r[2] for r in rows], orientation="h",
            marker=dict(color=color), text=[r[3](r[idx]) for r in rows], textposition="outside", cliponaxis=False,
            textfont=dict(size=12), customdata=[float(r[idx]) for r in rows],  # a count may pass 2^63
            hovertemplate="%{y}: %{customdata:,} (%{x:.1%} of the " + names[1] + ")<extra>" + label + "</extra>",
        )
        for label, idx, color in ((names[0], 1, CONFIG_COLOR), (names[1], 2, TWIN_COLOR))
    ]
    top = max(max(r[1] / r[2] for r in rows), 1.0)
    return plotly_dicts.figure(bars, dict(
        barmode="group",
        title=dict(text=twin_title(names), font=TITLE_FONT),
        xaxis=dict(tickformat=".0%", title=dict(text=f"relative to the {names[1]}"), range=[0, top * 1.5],
                   **(dict(tickvals=[0, 0.5, 1.0]) if top <= 1.2 else {})),
        yaxis=dict(autorange="reversed"), legend=LEGEND_BELOW,
        margin=_MARGIN, height=420, uniformtext=dict(minsize=10, mode="show")))


PHONE_TITLE_CHARS = 45  # what a title at TITLE_FONT holds on a 390 px phone (ui.figure_style)


def twin_title(names: tuple[str, str]) -> str:
    """The twin chart's title, short enough for a phone (issue 42: "This encoder vs ALBERTized twin (ALBERTized twin
    = 100%)" was cut at 390 px): the twin named once when naming it twice is too long."""
    title = f"{sentence_case(names[0])} vs {names[1]} ({_short(names[1])} = 100%)"
    return title if len(title) <= PHONE_TITLE_CHARS else f"{sentence_case(names[0])} vs {names[1]} (= 100%)"


def _short(name: str) -> str:
    """'BERT twin' -> 'BERT' (the paper's chart title), else the name itself."""
    return "BERT" if name.endswith("BERT twin") else name


def family_twin_summary(result: Result) -> str:
    """Markdown bullets for an encoder after BERT and its twin (ALBERTized or original), from the library's
    comparison: every sentence from the config's own numbers."""
    from albert_core.hardware.albertized import compare_albertized

    original, twin = ((result.config, result.twin.config) if result.twin_kind == "albertized"
                      else (result.twin.config, result.config))
    pair = compare_albertized(original, twin, result.workload)
    return "\n".join(f"- {sentence}" for sentence in pair.sentences())


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@functools.cache
def _table2_flops() -> tuple[str, int]:
    """ALBERT-large's training FLOPs against BERT-large's in the paper's Table 2 setting: in words, and their
    `direction` (counted once)."""
    ratio = table2_size_ratios("albert-large")["flops"]
    return f"{fmt_pct(ratio)} of BERT-large's, {change_words(ratio, 1.0)}", direction(ratio, 1.0)


def twin_summary(result: Result, names: tuple[str, str] = ("this config", "BERT")) -> str:
    """Markdown bullets answering "does it run faster or use less memory than BERT?" with the result's
    own numbers (the result is the ALBERT's; its twin is the BERT). Every word that compares ("down", "nearly
    equal", which part differs) comes from the numbers in the same bullet (`albert_core.format.change_words`).
    ``names``: what to call the ALBERT and the BERT ("its ALBERT counterpart" and "this BERT" on a BERT's page)."""
    (_, p, pt, _), (_, f, ft, _), (_, a, at, _), (_, w, wt, _) = twin_metrics(result)
    c, twin = result.config, result.twin.config
    me, bert = names
    depth, k = c.executed_layers, c.inner_group_num
    wl = result.workload
    notes = []
    if c.hidden_act != twin.hidden_act:
        notes.append(f"{me} runs {c.hidden_act}, which saves other tensors than {bert}'s {twin.hidden_act}")
    drop, drop_twin = family_of(c.family).dropout, family_of(twin.family).dropout
    if drop != drop_twin:
        notes.append(f"{bert} trains with dropout {drop_twin:g} (its masks are saved too), {me} with {drop:g}")
    act_note = ("; ".join(notes) if notes else f"both run {c.hidden_act} with the same dropout") + "."
    diffs = flop_differences(result.own.flops_sequence, result.twin.flops_sequence)
    if k == 1:
        where = ("both run the same matmuls." if not diffs else
                 f"what differs is outside the layers: {differences_words(diffs)}." if outside_layers(diffs) else
                 f"what differs: {differences_words(diffs)}.")
        why_flops = (f"Sharing saves no compute: the shared layer still runs L×K = {depth} times, as {bert}'s "
                     f"{twin.num_layers} layers do; {where}")
    else:
        why_flops = (f"K = {k} inner repeats run every layer's blocks {k} times, so it executes L×K = {depth} "
                     f"blocks where {bert} runs {twin.num_layers}.")
    if result.own.training_memory is None:  # int8 weights: inference memory, no backward
        sdpa_note = "the peak forward working set, an estimate"
    else:
        a_s, at_s = (estimate_memory(m, wl.batch, wl.seq_len, wl.dtype, wl.optimizer, precision=wl.precision,
                                     checkpointing=wl.checkpointing, attention="sdpa").activations for m in (c, twin))
        sdpa_note = (f"estimates for transformers' eager attention; with its default SDPA attention, whose fused "
                     f"kernels keep no attention probabilities, {fmt_bytes(a_s)} vs {fmt_bytes(at_s)}: "
                     f"{change_words(a_s, at_s)}")
    reasons = ([f"factorized embeddings (V·E + E·H instead of V·H, E = {c.embedding_size})"]
               if c.embedding_size < c.hidden_size else []) + (["cross-layer sharing"] if c.sharing != "none" else [])
    from_ = f", from {_and(reasons)}" if direction(p, pt) < 0 and reasons else ""
    size = {-1: "a *smaller* model", 0: "a model of nearly the same size", 1: "a *larger* model"}[direction(p, pt)]
    flops_way = direction(f, ft)
    if k > 1:
        closing = (f"So {me} is {size} but {'a *slower* one' if flops_way > 0 else 'not a faster one'} than "
                   f"{bert}: K = {k} buys depth with compute and activation memory, not with parameters.")
    else:
        runs = ("not a *faster* one: at the same H and L it runs nearly the same matmuls" if flops_way == 0 else
                f"whose forward FLOPs are {change_words(f, ft)} only outside the shared layers (above); the layers "
                "run the same matmuls" if outside_layers(diffs) else f"whose forward FLOPs are {change_words(f, ft)}")
        table2_words, table2_way = _table2_flops()
        closing = (f"So {me} is {size}, {runs} as {bert}. The paper's Table 2 does compare models of the same H "
                   "and L: ALBERT-large and BERT-large both have H = 1024 and L = 24, and the paper measures "
                   f"ALBERT-large {PAPER_TABLE2_SPEEDUP['albert-large']}x faster in training throughput, and says "
                   "ALBERT models have higher data throughput \"because of less communication and fewer "
                   "computations\" (section 4.3). In that setting (pre-training heads, MLM on "
                   f"{fmt_pct(TABLE2_MLM_FRACTION, 0)} of the positions) the exact count puts ALBERT-large's training "
                   f"FLOPs at {table2_words}, "
                   + ("so most of that speed-up comes from the communication: fewer parameters to synchronise."
                      if table2_way == 0 else
                      "which accounts for part of that speed-up; the rest comes from the communication."))
    return f"""
- **Parameters: {change_words(p, pt)}** ({fmt_params(p)} vs {fmt_params(pt)}){from_}.
- **Forward FLOPs: {change_words(f, ft)}** ({fmt_flops(f)} vs {fmt_flops(ft)}). {why_flops}
- **Activations: {change_words(a, at)}** ({fmt_bytes(a)} vs {fmt_bytes(at)}, {sdpa_note}): every executed
  layer keeps its own activations for backward, shared weights or not; {act_note}
- **Weights memory: {change_words(w, wt)}** ({fmt_bytes(w)} vs {fmt_bytes(wt)}); gradients and optimizer
  states scale with it.

{closing}
"""


def fit_display_columns(fit: Mapping[str, list]) -> dict[str, list]:
    """`fit_columns` in words for the page: a batch of 0 reads "does not fit" (not a batch of "0"), others
    with thousands separators, and the memory of a batch that does not fit "–"."""
    out = dict(fit)
    for col in [c for c in fit if c.endswith(": batch")]:
        out[col] = ["does not fit" if b == 0 else f"{b:,}" for b in fit[col]]
        mem = col.replace(": batch", ": memory")
        out[mem] = [("–" if b == 0 else m) for b, m in zip(fit[col], fit[mem], strict=True)]
    return out


def fit_columns(result: Result, seq_len: int | None = None) -> dict[str, list]:
    """"Does it fit?": per device size (`DEVICE_MEMORY_GB`), the largest batch that fits at ``seq_len``
    (the workload's by default) for the config and (an ALBERT) its BERT twin, with the memory at that
    batch; the workload's dtype, optimizer, precision and checkpointing. Batch 0: not one sequence fits.
    Columns of plain lists: device, then "<model>: batch" and "<model>: memory" per model."""
    wl = result.workload
    seq_len = wl.seq_len if seq_len is None else seq_len
    models = [("this config", result.config)]
    if not result.is_bert:
        models.append((TWIN_NAMES[result.twin_kind][1], result.twin.config))
    out: dict[str, list] = {"device": [f"{gb} GB" for gb in DEVICE_MEMORY_GB]}
    for name, cfg in models:
        fits = largest_batches(cfg, seq_len, [gb * 10**9 for gb in DEVICE_MEMORY_GB], wl.dtype, wl.optimizer,
                               wl.precision, wl.checkpointing)
        out[f"{name}: batch"] = [b for b, _ in fits]
        out[f"{name}: memory"] = ["" if total is None else fmt_bytes(total) for _, total in fits]
    return out
