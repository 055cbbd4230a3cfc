"""The figures' common style, one place for what every page's charts share: the title size that fits a phone,
legends under the plot, round SI ticks labelled in the app's own units, the signed relative change, and the layout
of a grid of panels for figures written as dicts. Pure (no streamlit)."""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Callable
from typing import Any

from albert_core.format import fmt_pct

TITLE_FONT = dict(size=15)  # a 45-character title fits a 390 px phone
# Legends under the plot: at the top right they ran into the title on a phone.
# At the bottom of the figure (container coordinates), where Plotly makes room for it below the axis
# labels: in plot coordinates (y < 0) it ran into rotated tick labels.
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0, x=0, xanchor="left")


AXIS_LABEL_CHARS = 18  # a bar chart's category labels on a 390 px phone, with 200 px or more left for the bars


def short_label(text: str, limit: int = AXIS_LABEL_CHARS) -> str:
    """``text`` in at most ``limit`` characters: cut with an ellipsis, after a word where one ends in its second
    half ('ALBERT H=768 L=12…'). The full text belongs in the hover."""
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 0, limit)  # a word that ends at the limit is kept whole
    return (text[:space] if space >= limit // 2 else text[:limit - 1]).rstrip(" -_") + "…"


def si_ticks(vmax: float, fmt: Callable[..., str], n: int = 5) -> tuple[list[float], list[str]]:
    """About ``n`` round tick values from 0 past ``vmax`` (steps of 1, 2 or 5 x 10^k), labelled with
    ``fmt(value, digits)`` so an axis reads "5 GFLOP" or "1.5 GB" instead of Plotly's "5B" / "1.5G"."""
    if vmax <= 0:
        return [0.0], [fmt(0)]
    raw = vmax / n
    mag = 10.0 ** math.floor(math.log10(raw))  # floats: a tick past 2^63 (an exact count) is no JSON integer
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    vals = [i * step for i in range(int(vmax / step) + 2)]
    return vals, [_trim(fmt(v, 2)) for v in vals]


def _trim(text: str) -> str:
    """'1.50B' -> '1.5B', '500.00 MB' -> '500 MB' (zeros after a decimal point only)."""
    return re.sub(r"\.(?!\d)", "", re.sub(r"(\.\d*?)0+(?!\d)", r"\1", text))


def fmt_delta(x: float) -> str:
    """A relative change, signed: a second decimal under 1% (+0.1% would hide +0.06%), none from 100%."""
    return fmt_pct(x, 0 if abs(x) >= 1 else 1 if abs(x) >= 0.01 or x == 0 else 2, signed=True)


def subplot_grid(rows: int, cols: int, titles: tuple[str, ...], **spacing: float) -> dict[str, Any]:
    """The layout `plotly.subplots.make_subplots` makes for a grid (axes with their domains and anchors, the
    subplot titles as annotations), without its template, as a dict of the caller's own: a figure written as dicts
    (`ui.plotly_dicts.figure`) then puts its traces on axes "x", "x2", ... The grid is made once per shape."""
    return copy.deepcopy(_grid(rows, cols, titles, tuple(sorted(spacing.items()))))


@functools.lru_cache(maxsize=16)
def _grid(rows: int, cols: int, titles: tuple[str, ...], spacing: tuple[tuple[str, float], ...]) -> dict[str, Any]:
    from plotly.subplots import make_subplots

    layout = make_subplots(rows=rows, cols=cols, subplot_titles=titles, **dict(spacing)).layout.to_plotly_json()
    layout.pop("template", None)
    return layout


@functools.cache
def colorscale(name: str) -> list[list]:
    """A named Plotly colour scale ("Blues") as Plotly's validation writes it into a figure: its list of stops."""
    import plotly.graph_objects as go

    return [list(stop) for stop in go.Heatmap(colorscale=name).colorscale]
