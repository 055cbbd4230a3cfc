"""ALBERT architecture explorer: the shared config sidebar, then the page chosen in the navigation.

Run with `streamlit run app.py`. Every page reads the config and workload through `ui.state.current()`.
"""

from pathlib import Path

import streamlit as st

import ui.pages_mode
import ui.sidebar
import ui.state

ui.pages_mode.leave()  # before any widget: the one workaround for the pages/ folder, see ui/pages_mode.py
st.set_page_config(page_title="ALBERT explorer", layout="wide")
ui.state.check_settings()  # a bad server setting stops every page with one clear message

ROOT = Path(__file__).parent
PAGES_KEY = "_app_pages"  # this session's st.Page objects
# (file, title, icon, url path). A page is registered only if its file exists, so the app always runs.
PAGES = (
    ("pages/explorer.py", "Explorer", ":material/calculate:", "explorer"),
    ("pages/scaling.py", "Scaling", ":material/trending_up:", "scaling"),
    ("pages/live_model.py", "Live model", ":material/memory:", "live_model"),
    ("pages/train.py", "Train", ":material/model_training:", "train"),
    ("pages/compare.py", "Compare", ":material/compare_arrows:", "compare"),
    ("pages/hardware.py", "Hardware", ":material/speed:", "hardware"),
    ("pages/paper.py", "Paper & formulas", ":material/menu_book:", "paper"),
)

cfg, workload = ui.sidebar.render()
ui.state.set_current(cfg, workload)
# Every page has its own URL, the first one too: Streamlit serves the default page at "/" only (its
# url_path becomes ""), so /explorer would say "Page not found". The first page is therefore also
# registered, hidden from the menu, at its own path; the default entry's internal path is "home" so
# that the two do not clash (Streamlit identifies a page by its url_path).
# Made once per session and kept in its state: st.Page resolves its file's real path (a stat per folder; ~0.9 ms
# of a 10 ms rerun for the eight). Not shared between sessions: st.navigation marks the page it returns runnable.
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
    ui.state.freeze_imported_modules()
