"""The Hardware page's cached estimates and its Table 2 section.

A function decorated with `st.cache_resource` in a page script would be decorated again on every rerun (a page's
code runs top to bottom each time, and the decorator keys the function by reading its source); here it is decorated
once, at import. What it returns is shared between sessions and never mutated (the page and the builders only read).
"""

from __future__ import annotations

import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.hardware.profiles import load_measured
from albert_core.hardware.time_model import (
    TABLE2_CHIPS,
    TABLE2_COMM_EFFICIENCY,
    TimeEstimate,
    estimate_time,
    paper_table2,
    table2_chip_checks,
)
from ui import plotly_dicts
from ui.hardware import figures as figures_hardware
from ui.state import CONFIG_HASH_FUNCS


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def hardware_estimate(cfg: ModelConfig, wl: Workload, hw: str, chips: int, overlap: bool) -> TimeEstimate:
    return estimate_time(cfg, wl, hw, chips, overlap=overlap)


@st.cache_resource(max_entries=1, show_spinner=False)
def hardware_measured_allreduce():
    return load_measured()


@st.cache_resource(max_entries=1, show_spinner=False)
def hardware_table2():
    """The Table 2 section (it does not depend on the sidebar): built once per process, not on every rerun."""
    df = paper_table2()
    return (plotly_dicts.frozen(figures_hardware.table2_bars(df)), figures_hardware.table2_frame(df),
            figures_hardware.table2_takeaway(df, TABLE2_COMM_EFFICIENCY, TABLE2_CHIPS),
            figures_hardware.table2_method(df, table2_chip_checks()))
