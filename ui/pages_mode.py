"""The one workaround for Streamlit's legacy `pages/` folder mode (Streamlit 1.67).

The project keeps its pages in `pages/` and routes them with `st.navigation` (app.py). Streamlit
decides at the first session of a server process that an app with a `pages/` folder is a legacy (v1)
multipage app (`PagesManager.uses_pages_directory`, from the folder's existence) and clears that flag
only when `st.navigation` first runs. So the first run is a v1 run: app.py (or, for a deep link such as
/compare, the page file alone) runs inside Streamlit's legacy wrapper, and its widgets get ids that the
next (v2) run does not recognise, which resets every sidebar widget on the first interaction.

Streamlit has no supported switch for this: `client.showSidebarNavigation` only hides the menu, and
there is no config option for the folder detection. So `leave()` runs first thing in app.py and in
`ui.state.current()` (the deep link): if the run is a v1 run it clears the flag and reruns, and since
the pages' url paths equal their file names the same page is resolved in navigation mode.
"""

from __future__ import annotations

import sys

import streamlit as st


def leave() -> None:
    """Rerun in `st.navigation` mode if this run is a legacy pages-folder run (before anything is drawn)."""
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
