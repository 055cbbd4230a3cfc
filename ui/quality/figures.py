"""Pure builders of the Quality page: published scores against exact cost (one chart per cost axis), the sentence
under each in numbers, and the paper's Table 2 trade-off as a table. Rows come from
`albert_core.quality_cost.points` (a published figure with its provenance and its model's exact cost); no streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from albert_core.configuration.presets import config_name
from albert_core.format import column_unit, fmt_flops, fmt_params, fmt_ratio
from albert_core.quality import COMPUTE_DEVICE, METRICS, PROTOCOLS, fmt_value, protocols_of
from albert_core.quality_cost import COST_SEQ_LEN, SERIES, Cost, Twin, nearest, pareto_front, points
from ui.colors import ALBERT, BERT
from ui.figure_style import LEGEND_BELOW, TITLE_FONT
from ui.plotly_dicts import TrustedFigure, figure

SERIES_COLORS: Mapping[str, str] = {
    "ALBERT": ALBERT, "BERT": BERT, "RoBERTa": "#2ca02c", "XLM-R": "#9467bd", "ELECTRA": "#8c564b",
    "DeBERTa-v3": "#e377c2", "ModernBERT": "#7f7f7f", "Ettin": "#bcbd22", "mmBERT": "#17becf", "EuroBERT": "#393b79",
    "NomicBERT": "#637939", "NeoBERT": "#843c39", "MosaicBERT": "#7b4173", "other": "#aaaaaa",
}
CURRENT_COLOR = "#d62728"  # the app's current-config red (Scaling's star)
FRONT_COLOR = "#555555"
TWIN_NAME = "ALBERTized twin: no published score"
AXIS_TITLES: Mapping[str, str] = {
    "params": "Parameters (exact)",
    "flops": f"Forward FLOPs per token at {COST_SEQ_LEN} (exact)",
    "compute": f"Training compute, {COMPUTE_DEVICE}-hours (published)",
}
CHART_TITLES: Mapping[str, str] = {
    "params": "Published quality vs parameters",
    "flops": "Published quality vs FLOPs per token",
    "compute": "Published quality vs training compute",
}
LABEL_POINTS = 8  # at most this many points are labelled on the chart (more would overlap on a phone)


def fmt_cost(axis: str, value: float) -> str:
    if axis == "params":
        return fmt_params(value)
    if axis == "flops":
        return fmt_flops(value)
    return f"{value:,.0f} {COMPUTE_DEVICE}-hours"


def _log_ticks(lo: float, hi: float, axis: str) -> tuple[list[float], list[str]]:
    """1, 2 and 5 x 10^k between ``lo`` and ``hi`` (only decades when the span is wide), in the app's units."""
    steps = (1,) if hi / lo > 1e3 else (1, 2, 5)
    vals = [m * 10.0 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) for m in steps]
    vals = [v for v in vals if lo / 1.5 <= v <= hi * 1.5]
    labels = [fmt_cost(axis, v).replace(f" {COMPUTE_DEVICE}-hours", "").replace(".00", "").replace(".0 ", " ")
              for v in vals]
    return vals, labels


def several_protocols(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``rows`` come from more than one protocol."""
    return len({r["protocol"] for r in rows}) > 1


def _text_side(x: float, rows: Sequence[Mapping[str, Any]], axis: str) -> str:
    """A point label's side: away from the nearer end of the (log) axis, so an end point's label stays inside."""
    lo, hi = (math.log10(f(r[axis] for r in rows)) for f in (min, max))
    at = (math.log10(x) - lo) / (hi - lo) if hi > lo else 0.5
    return "top right" if at < 0.15 else "top left" if at > 0.85 else "top center"


def _hover(row: Mapping[str, Any], axis: str) -> list[str]:
    return [row["model"], fmt_value(row["value"]) + (" (computed from the source's per-task scores)"
                                                     if row["computed"] else ""),
            row["split"], row["fine_tuned_by"], PROTOCOLS[row["protocol"]].label, row["source"], row["training"],
            ("about " if axis == "compute" and row["compute_approximate"] else "") + fmt_cost(axis, row[axis]),
            row["note"] or "-"]


_HOVER = ("<b>%{customdata[0]}</b>: %{customdata[1]}<br>split: %{customdata[2]}; fine-tuned by "
          "%{customdata[3]}<br>protocol: %{customdata[4]}<br>source: %{customdata[5]}<br>training: %{customdata[6]}"
          "<br>cost: %{customdata[7]}<br>note: %{customdata[8]}<extra></extra>")


def quality_chart(rows: Sequence[Mapping[str, Any]], axis: str, metric: str, twins: Sequence[Twin] = (),
                  current: tuple[str, float] | None = None) -> TrustedFigure:
    """Published ``metric`` against ``axis`` ("params", "flops" or "compute"), one marker per figure (filled: dev,
    open: test; ALBERT's as diamonds), the Pareto front as a step line, and under the plot a strip of costs without
    a score: each ALBERTized twin and ``current`` (name, cost), the sidebar's config, with a line up the plot."""
    plotted = [r for r in rows if r.get(axis)]
    traces: list[dict[str, Any]] = []
    label = len(plotted) <= LABEL_POINTS
    for series in SERIES + ("other",):
        mine = [r for r in plotted if r["series"] == series]
        if not mine:
            continue
        color = SERIES_COLORS[series]
        symbol = ["diamond" if series == "ALBERT" else "circle" for _ in mine]
        symbol = [s if r["split"] == "dev" else f"{s}-open" for s, r in zip(symbol, mine, strict=True)]
        trace = dict(type="scatter", x=[r[axis] for r in mine], y=[r["value"] for r in mine], name=series,
                     mode="markers+text" if label else "markers", legendgroup=series,
                     marker=dict(color=color, size=12 if series == "ALBERT" else 10, symbol=symbol,
                                 line=dict(width=1.5, color=color)),
                     customdata=[_hover(r, axis) for r in mine], hovertemplate=_HOVER)
        if label:
            trace.update(text=[r["model"] for r in mine], textposition=[_text_side(r[axis], plotted, axis)
                                                                         for r in mine], textfont=dict(size=10))
        traces.append(trace)
    # no front across protocols: it would rank figures that are not comparable
    front = [] if several_protocols(plotted) else pareto_front(plotted, axis)
    if len(front) > 1:
        traces.append(dict(type="scatter", x=[r[axis] for r in front], y=[r["value"] for r in front],
                           mode="lines", name="Pareto front", line=dict(color=FRONT_COLOR, dash="dot", shape="hv"),
                           hoverinfo="skip"))
    strip = bool(twins) or current is not None
    xs = [r[axis] for r in plotted]
    if twins:
        tw = [t for t in twins if (t.params if axis == "params" else t.flops) is not None]
        xs += [t.params if axis == "params" else t.flops for t in tw]
        traces.append(dict(
            type="scatter", x=[t.params if axis == "params" else t.flops for t in tw], y=[0] * len(tw),
            yaxis="y2", mode="markers", name=TWIN_NAME,
            marker=dict(symbol="diamond-open", size=11, color=ALBERT, line=dict(width=2, color=ALBERT)),
            customdata=[[t.label, fmt_cost(axis, t.params if axis == "params" else t.flops), config_name(t.config)]
                        for t in tw],
            hovertemplate="<b>%{customdata[0]}</b> (%{customdata[2]}): %{customdata[1]}<br>no published score: "
                          "nobody trained and evaluated it, and none is estimated<extra></extra>"))
    shapes = []
    if current is not None:
        name, x = current
        xs.append(x)
        traces.append(dict(type="scatter", x=[x], y=[0], yaxis="y2", mode="markers", name="your config (sidebar)",
                           marker=dict(symbol="star", size=16, color=CURRENT_COLOR, line=dict(width=1, color="black")),
                           hovertemplate=f"<b>{name}</b>: {fmt_cost(axis, x)}<br>no published score<extra></extra>"))
        shapes.append(dict(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1,
                           line=dict(color=CURRENT_COLOR, width=1, dash="dash")))
    layout: dict[str, Any] = dict(
        title=dict(text=CHART_TITLES[axis], font=TITLE_FONT), height=480 if strip else 420,
        margin=dict(t=50, b=10, l=10, r=10), legend=LEGEND_BELOW, hovermode="closest",
        yaxis=dict(title=dict(text=METRICS[metric].label), domain=[0.2, 1] if strip else [0, 1]),
        xaxis=dict(title=dict(text=AXIS_TITLES[axis]), type="log", anchor="y2" if strip else "y"),
    )
    if shapes:
        layout["shapes"] = shapes
    if xs:
        lo, hi = math.log10(min(xs)), math.log10(max(xs))
        pad = 0.06 * (hi - lo) + 0.05  # room for the end points' markers and labels
        vals, labels = _log_ticks(min(xs), max(xs), axis)
        layout["xaxis"].update(tickvals=vals, ticktext=labels, range=[lo - pad, hi + pad])
    if strip:
        layout["yaxis2"] = dict(domain=[0, 0.1], range=[-1, 1], tickvals=[0], ticktext=["no score"],
                                fixedrange=True, showgrid=False, zeroline=False)
    return figure(traces, layout)


# ----------------------------------------------------------------------------- sentences in numbers
AXES_WORDS: Mapping[str, str] = {"params": "parameter count", "flops": "FLOP count",
                                 "compute": f"training compute in {COMPUTE_DEVICE}-hours"}


def compute_hint(rows: Sequence[Mapping[str, Any]], metric: str) -> str:
    """Where published training compute meets a protocol, when fewer than two of ``rows`` have it: the
    (metric, protocol) pairs with the most such models (" Published compute meets ...", or "")."""
    if sum(bool(r["compute"]) for r in rows) > 1:
        return ""
    pairs = []
    for m in METRICS:
        for p in protocols_of(m):
            n = sum(bool(r["compute"]) for r in points(m, p))
            if n > 1:
                pairs.append((n, m, p))
    if not pairs:
        return ""
    pairs.sort(key=lambda x: (-x[0], x[1] != metric))
    return " Two or more models with published compute under one protocol: " + "; ".join(
        f"{METRICS[m].label} under {PROTOCOLS[p].label} ({n})" for n, m, p in pairs) + "."


def _pair(rows: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """The two models a sentence compares: the best ALBERT against the best BERT when both are there (the
    paper's question), else the best model against the cheapest one of the front."""
    def best(series: str) -> Mapping[str, Any] | None:
        mine = [r for r in rows if r["series"] == series and r.get("params")]
        return max(mine, key=lambda r: r["value"], default=None)

    albert, bert = best("ALBERT"), best("BERT")
    if albert is not None and bert is not None:
        return albert, bert
    front = pareto_front(rows, "params")
    return (front[-1], front[0]) if len(front) > 1 else None


def _gap(a: float, b: float) -> str:
    return f"{a - b:+.1f} points"


def chart_sentence(rows: Sequence[Mapping[str, Any]], axis: str, twins: Sequence[Twin] = (),
                   current: tuple[str, Cost] | None = None, mixed: bool = False) -> str:
    """What a chart shows, in numbers: its spread, the comparison the paper makes (quality gap, parameter ratio and
    FLOP ratio), the front, the twins and where the sidebar's config sits among the published models."""
    plotted = [r for r in rows if r.get(axis)]
    if not plotted:
        return (f"No model of this protocol has a published {AXES_WORDS[axis]}: nothing to plot. "
                + ("" if mixed else "Mixing protocols shows every model that has one."))
    protocols = sorted({r["protocol"] for r in plotted})
    where = (f"{len(protocols)} protocols mixed (each point's split and fine-tuner in its hover)" if mixed
             else f"{PROTOCOLS[protocols[0]].label}, {plotted[0]['split']}")
    lo, hi = min(plotted, key=lambda r: r["value"]), max(plotted, key=lambda r: r["value"])
    parts = [f"{len(plotted)} published figures ({where}) run from {fmt_value(lo['value'])} ({lo['model']}) to "
             f"{fmt_value(hi['value'])} ({hi['model']})."]
    pair = _pair(plotted)
    if pair is not None and axis != "compute":
        a, b = pair
        ratio = (f"{fmt_ratio(a['params'] / b['params'])} the parameters and {fmt_ratio(a['flops'] / b['flops'])} "
                 "the forward FLOPs per token") if a.get("flops") and b.get("flops") else \
            f"{fmt_ratio(a['params'] / b['params'])} the parameters"
        parts.append(f"{a['model']} against {b['model']}: {_gap(a['value'], b['value'])} with {ratio}.")
    elif axis == "compute" and len(plotted) > 1:
        a, b = hi, min(plotted, key=lambda r: r["compute"])
        if a is not b:
            parts.append(f"{a['model']} against {b['model']}: {_gap(a['value'], b['value'])} for "
                         f"{fmt_ratio(a['compute'] / b['compute'])} the published training compute.")
    front = [] if several_protocols(plotted) else pareto_front(plotted, axis)
    if several_protocols(plotted):
        parts.append("No Pareto front is drawn: it would rank figures of different protocols against each other.")
    elif len(front) > 1:
        parts.append(f"On the front (no model both cheaper and better): {', '.join(r['model'] for r in front)}.")
    if twins and axis != "compute":
        own = [(t, t.params if axis == "params" else t.flops) for t in twins]
        own = [(t, x) for t, x in own if x is not None]
        if own:
            saved = max(own, key=lambda tx: tx[0].original_params / tx[0].params)[0]
            parts.append(f"{len(own)} ALBERTized twin{'s' if len(own) > 1 else ''} (E = 128, all layers shared) "
                         f"sit on the strip below: no published score, and none is estimated"
                         + (f"; {saved.label} keeps {fmt_params(saved.params)} of {fmt_params(saved.original_params)}"
                            " parameters." if axis == "params" else "; sharing saves parameters, not FLOPs."))
    if current is not None and axis != "compute":
        name, cost = current
        x = cost.params if axis == "params" else cost.flops_per_token
        if x is None:
            parts.append(f"Your config ({name}) takes fewer than {COST_SEQ_LEN} positions: not on this axis.")
        else:
            near = nearest(plotted, axis, x)
            parts.append(f"Your config ({name}, {fmt_cost(axis, x)}) has no published score; nearest in cost: "
                         + "; ".join(f"{r['model']} ({fmt_cost(axis, r[axis])}, {fmt_value(r['value'])})"
                                     for r in near) + ".")
    return " ".join(parts)


# ----------------------------------------------------------------------------- the Table 2 trade-off
TABLE2_LABELS: Mapping[str, str] = {
    "squad1-f1": "SQuAD1.1 F1", "squad1-em": "SQuAD1.1 EM", "squad2-f1": "SQuAD2.0 F1", "squad2-em": "SQuAD2.0 EM",
    "mnli": "MNLI", "sst2": "SST-2", "race": "RACE", "albert-avg": "Avg",
}


def table2_frame(rows: Sequence[Mapping[str, Any]]) -> tuple[pd.DataFrame, dict[str, str]]:
    """The trade-off table (`quality_cost.table2_tradeoff`) as a frame whose cells stay numbers, and the printf
    format of each cost column (one unit per column, `column_unit`)."""
    df = pd.DataFrame([{  # what it bought (Avg) and paid (the exact costs) first, then every printed column
        "model": r["model"], "table": "Table 2" if r["protocol"] == "albert-t2" else "Table 6", "steps": r["steps"],
        "Avg": r["albert-avg"], "params": r["params"], "training FLOPs": float(r["training_flops"]),
        "training FLOPs / step": r["training_flops_per_step"],
        "speedup": "" if r["speedup"] is None else f"{r['speedup']:.1f}x",  # as printed; Table 6 prints none
        "hours": "" if r["hours"] is None else f"{r['hours']} h",  # Table 6 only
        **{TABLE2_LABELS[k]: r[k] for k in TABLE2_LABELS if k != "albert-avg"},
    } for r in rows])
    df["training FLOPs"] = df["training FLOPs"] / 1e18  # a whole pretraining run: 1.5e20 and up, past fmt_flops' T
    formats = {"training FLOPs": "%.1f EFLOP"}
    for col, kind in (("params", "params"), ("training FLOPs / step", "flops")):
        scale, fmt = column_unit(df[col], kind)
        df[col] = df[col] / scale
        formats[col] = fmt
    return df, formats


def table2_sentence(rows: Sequence[Mapping[str, Any]]) -> str:
    """What ALBERT bought and what it paid, from the table: ALBERT-xxlarge against BERT-large at the same steps
    (Table 2) and at the same training time (Table 6)."""
    by = {(r["preset"], r["protocol"]): r for r in rows}
    xx, bl = by["albert-xxlarge", "albert-t2"], by["bert-large", "albert-t2"]
    xx6, bl6 = by["albert-xxlarge", "albert-t6"], by["bert-large", "albert-t6"]
    steps_flops = fmt_ratio(xx["training_flops"] / bl["training_flops"])
    time_flops = fmt_ratio(xx6["training_flops"] / bl6["training_flops"])
    return (
        f"At the same 125k steps ALBERT-xxlarge scores {fmt_value(xx['albert-avg'])} against BERT-large's "
        f"{fmt_value(bl['albert-avg'])} ({_gap(xx['albert-avg'], bl['albert-avg'])}) with "
        f"{fmt_ratio(xx['params'] / bl['params'])} the parameters, and pays {steps_flops} the training FLOPs and "
        f"the paper's {xx['speedup']:g}x training speed. For the same time ({xx6['hours']} h against "
        f"{bl6['hours']} h, Table 6) BERT-large runs {bl6['steps'] // 1000}k steps and reaches "
        f"{fmt_value(bl6['albert-avg'])}: ALBERT-xxlarge is still {_gap(xx6['albert-avg'], bl6['albert-avg'])}, "
        f"having done {time_flops} BERT-large's training FLOPs in that time."
    )
