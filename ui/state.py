"""The one ModelConfig and Workload the sidebar produced for this run, shared with every page."""

from __future__ import annotations

import streamlit as st

from albert_core import ModelConfig, Workload

CONFIG_KEY = "_albert_config"
WORKLOAD_KEY = "_albert_workload"


def set_current(cfg: ModelConfig, workload: Workload) -> None:
    st.session_state[CONFIG_KEY] = cfg
    st.session_state[WORKLOAD_KEY] = workload


def current() -> tuple[ModelConfig, Workload]:
    """The config and workload of this run (defaults if the sidebar has not run yet)."""
    return (
        st.session_state.get(CONFIG_KEY, ModelConfig()),
        st.session_state.get(WORKLOAD_KEY, Workload()),
    )
