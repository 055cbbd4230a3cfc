"""The one ModelConfig and Workload the sidebar produced for this run, shared with every page."""

from __future__ import annotations

import gc
import sys
import threading

import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.results import Result, analyze
from ui import pages_mode

CONFIG_KEY = "_albert_config"
WORKLOAD_KEY = "_albert_workload"


def set_current(cfg: ModelConfig, workload: Workload) -> None:
    st.session_state[CONFIG_KEY] = cfg
    st.session_state[WORKLOAD_KEY] = workload


def check_settings() -> None:
    """The server's settings (memory budget, compute cap, torch threads), checked before anything is
    drawn: a bad value shows one error naming it on every page instead of failing later on one page."""
    from albert_core.budget import check_settings

    try:
        check_settings()
    except ValueError as exc:
        st.error(f"This server is misconfigured: {exc}")
        st.stop()


_FROZEN_MODULES = [0]
_FREEZE_LOCK = threading.Lock()


def freeze_imported_modules() -> None:
    """Move everything alive into the garbage collector's permanent generation once new modules were
    imported (torch, transformers, plotly: millions of objects). Without it every full collection walks
    them all, about 0.14 s of server CPU on the benchmark machine, and one ran on nearly every rerun of
    the Live model page. Done after a collection, so no garbage is frozen; later cyclic garbage is
    still collected. Costs a collection only when the set of modules grew (a page's first run)."""
    with _FREEZE_LOCK:
        if len(sys.modules) == _FROZEN_MODULES[0]:
            return
        gc.collect()
        gc.freeze()
        _FROZEN_MODULES[0] = len(sys.modules)


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
