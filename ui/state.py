"""The one ModelConfig and Workload the sidebar produced for this run, shared with every page."""

from __future__ import annotations

import gc
import sys
import threading

import streamlit as st

from albert_core import ModelConfig, Workload

CONFIG_KEY = "_albert_config"
WORKLOAD_KEY = "_albert_workload"


def set_current(cfg: ModelConfig, workload: Workload) -> None:
    st.session_state[CONFIG_KEY] = cfg
    st.session_state[WORKLOAD_KEY] = workload


def leave_pages_directory_mode() -> None:
    """Streamlit runs an app that has a `pages/` folder as a legacy (v1) multipage app until
    `st.navigation` is first called, so the first run after a server starts is a v1 run: app.py (or,
    for a deep link such as /compare, the page file alone) runs as a v1 page, and its widgets get ids
    that the next (v2) run does not recognise, which resets every sidebar widget to its minimum on the
    first interaction. Called before anything is drawn (top of app.py, and `current()` for the deep
    link), it switches to `st.navigation` mode and reruns (page url paths equal the file names, so the
    same page is resolved)."""
    from streamlit.runtime.pages_manager import PagesManager

    # The flag is global but the run mode is per run: when two sessions start together, the second
    # one's v1 run finds the flag already cleared by the first. So also look at this run's own call
    # stack for Streamlit's legacy wrapper (`_mpa_v1`, streamlit/runtime/scriptrunner/script_runner.py).
    if PagesManager.uses_pages_directory or _in_legacy_run():
        PagesManager.uses_pages_directory = False
        st.rerun()


def _in_legacy_run() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_mpa_v1":
            return True
        frame = frame.f_back
    return False


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
    leave_pages_directory_mode()
    return (
        st.session_state.get(CONFIG_KEY, ModelConfig()),
        st.session_state.get(WORKLOAD_KEY, Workload()),
    )


@st.cache_data(max_entries=256, show_spinner=False)
def cached_report(cfg: ModelConfig, workload: Workload) -> dict:
    """`ui.exports.report`, cached per (frozen) config and workload: every number a page shows."""
    from ui.exports import report

    return report(cfg, workload)
