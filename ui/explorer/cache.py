"""The Explorer's cached figures.

A function decorated with `st.cache_resource` in a page script would be decorated again on every rerun (a page's
code runs top to bottom each time, and the decorator keys the function by reading its source); here it is decorated
once, at import. What it returns is shared between sessions and never mutated (the page and the builders only read).
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.counting.report import albert_counterpart
from ui.explorer import figures as figures_explorer
from ui.state import CONFIG_HASH_FUNCS, cached_result


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def explorer_figures(cfg: ModelConfig, wl: Workload) -> tuple[go.Figure, go.Figure, go.Figure | None]:
    """The page's three figures, built once per config and workload (never mutated afterwards). For a
    BERT the third compares its ALBERT counterpart with it (a BERT's own twin is itself)."""
    res = cached_result(cfg, wl)
    if res.twin_kind == "bert" and not res.is_bert:  # an ALBERT beside its BERT twin
        twin = figures_explorer.twin_bars(res)
    elif res.twin_kind != "bert":  # an encoder after BERT: its ALBERTized twin, or an ALBERTized one's original
        twin = figures_explorer.twin_bars(res, names=figures_explorer.TWIN_NAMES[res.twin_kind])
    else:
        alt = albert_counterpart(cfg)
        twin = None if alt is None else figures_explorer.twin_bars(
            cached_result(alt, wl), names=("ALBERT counterpart", "this BERT"))
    return (figures_explorer.breakdown_treemap(res.own.params),
            figures_explorer.flops_bars(res.own.flops_sequence.by_name()),
            twin)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def family_summary(cfg: ModelConfig, wl: Workload) -> str:
    """The comparison panel's bullets for an encoder after BERT (the library's comparison: counts, memory and a fit
    search per device size, step times), made once per config and workload, not on every rerun."""
    return figures_explorer.family_twin_summary(cached_result(cfg, wl))
