"""Pure builders of the Compare page (no streamlit import): the pinned configs' frame with deltas against the first
pin, the cost table with coloured badges, the bars and the takeaway."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from albert_core.format import column_unit, direction, fmt_bytes, fmt_flops, fmt_params, fmt_pct, fmt_ratio
from ui import colors, plotly_dicts
from ui.colors import BAD, GOOD
from ui.figure_style import TITLE_FONT, fmt_delta, short_label, si_ticks

# Compare metrics: (DataFrame column, axis label, formatter).
COMPARE_METRICS: Sequence[tuple[str, str, Any]] = (
    ("params", "Parameters", fmt_params),
    ("forward_flops", "Forward FLOPs / sequence", fmt_flops),
    ("training_memory", "Training memory", fmt_bytes),
)



def compare_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Pinned configs (name + the COMPARE_METRICS columns), with deltas relative to the first row."""
    df = pd.DataFrame(list(rows))
    for col, _, _ in COMPARE_METRICS:
        base = df[col].iloc[0]
        df[f"{col}_delta"] = df[col] / base - 1 if base else float("nan")
    return df


COMPARE_KINDS = {"params": "params", "forward_flops": "flops", "training_memory": "bytes"}  # albert_core.format
NEUTRAL = "gray"  # the baseline's badge, and a change of exactly zero


def compare_cost_table(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str], dict[str, str]]:
    """The Compare cost table for people, without a pandas Styler (Streamlit writes a Styler's display values cell
    by cell, on every rerun): each metric stays a number in one unit per column (`column_unit`:
    11.68M, 22.4 GFLOP, 1.3 GB), each change against the first pin is a badge ("baseline", "-89.3%") coloured
    green when smaller and red when larger (fewer parameters, FLOPs or bytes is better). Returns the table (name,
    then each metric and its change), each metric column's printf format, and each badge text's colour."""
    out = pd.DataFrame({"name": df["name"]})
    formats: dict[str, str] = {}
    badges: dict[str, str] = {}
    for col, _, _ in COMPARE_METRICS:
        scale, formats[col] = column_unit(df[col], COMPARE_KINDS[col])
        out[col] = [float(v) / scale for v in df[col]]
        texts = []
        for i, d in enumerate(df[f"{col}_delta"]):
            if i == 0 or d != d or d == 0:
                text, colour = ("baseline" if i == 0 else "n/a" if d != d else "no change"), NEUTRAL
            else:
                text, colour = fmt_delta(d), GOOD if d < 0 else BAD
            badges.setdefault(text, colour)  # one text, one colour: a text's sign decides it
            texts.append([text])
        out[f"{col}_delta"] = texts
    return out, formats, badges


@functools.lru_cache(maxsize=16)
def _compare_grid(pins: int) -> dict[str, Any]:
    """The layout of `make_subplots` for the Compare panels with ``pins`` bars each (axes, domains,
    subplot titles), without its template: the grid depends only on the number of pins, and building
    it is most of the chart's cost."""
    # One panel per row: side by side, three panels left ~110 px each on a phone and their titles and
    # bar labels ran together.
    grid = make_subplots(rows=len(COMPARE_METRICS), cols=1, vertical_spacing=0.3 / (1 + 0.25 * pins),
                         subplot_titles=[m[1] for m in COMPARE_METRICS])  # room for tick labels
    layout = grid.layout.to_plotly_json()
    layout.pop("template", None)
    return layout


def compare_bars(df: pd.DataFrame) -> go.Figure:
    """One panel per metric (in its own unit), one horizontal bar per pinned config, the first on top;
    the bar text is the value and its change against the first pin."""
    n = len(COMPARE_METRICS)
    layout = copy.deepcopy(_compare_grid(len(df)))
    names = [str(n) for n in df["name"]]
    pin_colors = colors.family_shades([str(f) for f in df["family"]])  # BERT blues, ALBERT oranges
    bars = []
    for j, (col, label, fmt) in enumerate(COMPARE_METRICS, start=1):
        values = [float(v) for v in df[col]]
        deltas = list(df[f"{col}_delta"])
        text = [fmt(v) if i == 0 else f"{fmt(v)} ({fmt_delta(d)})"
                for i, (v, d) in enumerate(zip(values, deltas, strict=True))]
        axis = "" if j == 1 else str(j)
        bars.append(dict(type="bar", name=label, x=values, y=names, orientation="h", marker=dict(color=pin_colors),
                         text=text, textposition="auto", customdata=[float(d) for d in deltas], showlegend=False,
                         xaxis=f"x{axis}", yaxis=f"y{axis}",
                         hovertemplate="<b>%{y}</b><br>" + label + ": %{text}<br>%{customdata:+.1%} vs "
                                       + names[0] + "<extra></extra>"))
        tickvals, ticktext = si_ticks(max(values), fmt, n=4)
        # Headroom so a label that does not fit in its bar stays inside the panel.
        layout[f"xaxis{axis}"].update(tickvals=tickvals, ticktext=ticktext, range=[0, max(values) * 1.12])
        # the first pin (the baseline) on top; long names shortened so the bars keep their room (full in the hover)
        # every name whole (issue 42: cut names told twins apart only by colour), in lines a phone holds
        layout[f"yaxis{axis}"].update(autorange="reversed", tickmode="array", tickvals=names,
                                      ticktext=[wrap_name(n) for n in names])
    for note in layout["annotations"]:
        note["font"] = dict(size=13)
    layout.update(title=dict(text=f"Pinned configs (change vs {short_label(names[0])})", font=TITLE_FONT),
                  margin=dict(l=10, r=10, t=80, b=10), height=120 + n * (50 + 30 * len(df)), bargap=0.25)
    return plotly_dicts.figure(bars, layout)


def wrap_name(name: str, width: int = 16) -> str:
    """A pin's whole name in lines of about ``width`` characters (Plotly's <br>), broken after a space or a hyphen
    ("electra-small-<br>discriminator"): a phone keeps most of its width for the bars."""
    lines: list[str] = []
    for piece in re.findall(r"[^ -]+-?|-| ", name):
        if lines and len((lines[-1] + piece).rstrip()) <= width:
            lines[-1] += piece
        elif piece != " ":
            lines.append(piece)
    return "<br>".join(line.rstrip() for line in lines)


def against_original(name: str, params: tuple[float, float], flops: tuple[float, float],
                     memory: tuple[float, float]) -> str:
    """A pin against the config it was made from, each cost's change (pin / original - 1); ``name``: the original's,
    '' when the pin's own name says it ("deberta-v3-base · ALBERTized")."""
    parts = [f"{label} {fmt_delta(a / b - 1) if b and a != b else 'same'}"
             for label, (a, b) in (("params", params), ("FLOPs", flops), ("memory", memory))]
    return (f"vs {name}: " if name else "") + ", ".join(parts)


def spread_takeaway(df: pd.DataFrame) -> str:
    """Over all pins (issue 42: the takeaway spoke of 2 of 8), the cost that differs most between them, largest
    over smallest, with the pins at each end, and the other costs' spreads."""
    if len(df) < 3:
        return ""
    spreads = []
    for col, label, fmt in COMPARE_METRICS:
        lo, hi = int(df[col].idxmin()), int(df[col].idxmax())
        if df[col].iloc[lo] <= 0:
            continue
        spreads.append((df[col].iloc[hi] / df[col].iloc[lo], label, fmt, lo, hi, col))
    if not spreads:
        return ""
    spreads.sort(key=lambda s: -s[0])
    ratio, label, fmt, lo, hi, col = spreads[0]
    rest = "; ".join(f"{s[1].lower()} {fmt_ratio(s[0])}" for s in spreads[1:])
    return (f"Takeaway over all {len(df)} pins: {label.lower()} differ most, {fmt_ratio(ratio)} from "
            f"{df['name'].iloc[lo]} ({fmt(df[col].iloc[lo])}) to {df['name'].iloc[hi]} ({fmt(df[col].iloc[hi])})"
            + (f"; {rest}." if rest else "."))


def compare_takeaway(df: pd.DataFrame, where: Sequence[str] = ()) -> str:
    """One specific sentence about the pinned set: the smallest model against the baseline, and its compute, in
    words that follow the numbers (`albert_core.format.direction`: one "nearly equal" threshold for every page).
    ``where``: for each pin, the components whose forward FLOPs differ from the baseline's, in words
    (`albert_core.counting.flops.differences_words`; '' or missing: not named)."""
    base = df["name"].iloc[0]
    if len(df) == 1:
        return "Takeaway: pin a second config to see the deltas."
    i = int(df["params"].idxmin())
    small = df.loc[i]
    if i == 0:
        return (f"Takeaway: the baseline {base} is already the smallest; the next smallest has "
                f"{fmt_pct(df['params_delta'].iloc[1:].min())} more parameters.")
    flops = small["forward_flops_delta"]
    way = direction(small["forward_flops"], df["forward_flops"].iloc[0])
    parts = f": {where[i]}" if i < len(where) and where[i] else ""
    head = (f"Takeaway: {small['name']} has {fmt_ratio(df['params'].iloc[0] / small['params'])} fewer parameters "
            f"than {base} ({fmt_delta(small['params_delta'])})")
    if way < 0:
        return (f"{head}, and {fmt_ratio(1 / (1 + flops))} fewer forward FLOPs ({fmt_flops(small['forward_flops'])})"
                f"{parts}; none of it from sharing, which never saves compute.")
    compute = "nearly equal" if way == 0 else f"{fmt_delta(flops)}"
    return (f"{head}, but its forward FLOPs are {compute} ({fmt_flops(small['forward_flops'])}){parts}; parameter "
            "count and compute are different axes.")
