"""What the server process does around every run, beside the pages: stop on a bad setting before anything is
drawn, and keep the imported modules out of the garbage collector's way."""

from __future__ import annotations

import gc
import sys
import threading

import streamlit as st


def check_settings() -> None:
    """The server's settings (memory budget, compute cap, torch threads, the lab's queue, shares and
    limits), checked before anything is drawn: a bad value shows one error naming it on every page instead
    of failing later on one page."""
    from albert_core import settings

    try:
        settings.check()
    except ValueError as exc:
        st.error(f"This server is misconfigured: {exc}")
        st.stop()


_FROZEN_MODULES = [0]
_FREEZE_LOCK = threading.Lock()


def freeze_imported_modules() -> None:
    """Move everything alive into the garbage collector's permanent generation once new modules were
    imported (torch, transformers, plotly: millions of objects). Without it every full collection walks
    them all (more server CPU than a page's rerun), and one ran on nearly every rerun of the Live model
    page. Done after a collection, so no garbage is frozen; later cyclic garbage is
    still collected. Costs a collection only when the set of modules grew (a page's first run)."""
    with _FREEZE_LOCK:
        if len(sys.modules) == _FROZEN_MODULES[0]:
            return
        gc.collect()
        gc.freeze()
        _FROZEN_MODULES[0] = len(sys.modules)
