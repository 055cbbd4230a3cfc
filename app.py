"""ALBERT architecture explorer: the shared config sidebar, then the page chosen in the navigation.

Run with `streamlit run app.py`. Every page reads the config and workload through `ui.state.current()`.
"""

from pathlib import Path

import streamlit as st

import ui.render
import ui.server
import ui.sidebar
import ui.state

st.set_page_config(page_title="ALBERT explorer", layout="wide")
ui.server.check_settings()  # a bad server setting stops every page with one clear message
ui.render.layout_style()

ROOT = Path(__file__).parent
PAGES_KEY = "_app_pages"  # this session's st.Page objects
# (file, title, icon, url path). A page is registered only if its file exists, so the app always runs.
# The page scripts live beside what only they use (ui/<page>/), never in a folder named `pages/` next to app.py:
# Streamlit would take that folder for its legacy multipage mode and run the first session's first run outside
# st.navigation, resetting the sidebar's widgets on the first interaction.
PAGES = (
    ("ui/explorer/page.py", "Explorer", ":material/calculate:", "explorer"),
    ("ui/scaling/page.py", "Scaling", ":material/trending_up:", "scaling"),
    ("ui/live/page.py", "Live model", ":material/memory:", "live_model"),
    ("ui/train/page.py", "Train", ":material/model_training:", "train"),
    ("ui/compare/page.py", "Compare", ":material/compare_arrows:", "compare"),
    ("ui/quality/page.py", "Quality vs cost", ":material/insights:", "quality"),
    ("ui/hardware/page.py", "Hardware", ":material/speed:", "hardware"),
    ("ui/paper/page.py", "Paper & formulas", ":material/menu_book:", "paper"),
)

cfg, workload = ui.sidebar.render()
ui.state.set_current(cfg, workload)
# Every page has its own URL, the first one too: Streamlit serves the default page at "/" only (its
# url_path becomes ""), so /explorer would say "Page not found". The first page is therefore also
# registered, hidden from the menu, at its own path; the default entry's internal path is "home" so
# that the two do not clash (Streamlit identifies a page by its url_path).
# Made once per session and kept in its state: st.Page resolves its file's real path (a stat per folder, for each of
# the eight: a visible share of a rerun). Not shared between sessions: st.navigation marks the page it returns runnable.
pages = st.session_state.get(PAGES_KEY)
if pages is None:
    available = [p for p in PAGES if (ROOT / p[0]).is_file()]
    pages = [
        st.Page(path, title=title, icon=icon, url_path="home" if i == 0 else url, default=i == 0)
        for i, (path, title, icon, url) in enumerate(available)
    ]
    if available:
        path, title, icon, url = available[0]
        pages.append(st.Page(path, title=title, icon=icon, url_path=url, visibility="hidden"))
    st.session_state[PAGES_KEY] = pages
try:
    st.navigation(pages).run()
finally:  # also after st.stop(): the link holds what the page put in the URL; its imports are loaded
    ui.sidebar.share_link()
    ui.render.finish_run()
    ui.server.freeze_imported_modules()
