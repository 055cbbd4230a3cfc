"""The one ModelConfig and Workload the sidebar produced for this run, shared with every page."""

from __future__ import annotations

import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.results import Result, analyze
from ui import pages_mode

CONFIG_KEY = "_albert_config"
WORKLOAD_KEY = "_albert_workload"


def set_current(cfg: ModelConfig, workload: Workload) -> None:
    st.session_state[CONFIG_KEY] = cfg
    st.session_state[WORKLOAD_KEY] = workload


def current() -> tuple[ModelConfig, Workload]:
    """The config and workload of this run (defaults if the sidebar has not run yet)."""
    pages_mode.leave()  # a deep link's first run is the page file alone
    return (
        st.session_state.get(CONFIG_KEY, ModelConfig()),
        st.session_state.get(WORKLOAD_KEY, Workload()),
    )


@st.cache_resource(max_entries=256, show_spinner=False)
def cached_result(cfg: ModelConfig, workload: Workload) -> Result:
    """`albert_core.results.analyze`, cached per (frozen) config and workload: every number a page shows.
    Shared, not copied: a Result is frozen and never mutated."""
    return analyze(cfg, workload)
