"""Small rendering helpers shared by the pages (streamlit calls, no numbers of their own)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

# The app's own CSS (ui/layout.css: phone layout of charts, tables and formulas), read once per process.
_LAYOUT_STYLE = f"<style>{Path(__file__).with_name('layout.css').read_text(encoding='utf-8')}</style>"
LAYOUT_STYLE_KEY = "app_layout_style"  # its container, hidden by the CSS itself


def layout_style() -> None:
    """Send the app's CSS with this run. As an element of the page: a style-only `st.html` goes to Streamlit's
    event container, which a browser lost now and then when the first run of a session changed the page."""
    with st.container(key=LAYOUT_STYLE_KEY):
        st.markdown(_LAYOUT_STYLE, unsafe_allow_html=True)


def takeaway(text: str) -> None:
    """The one-sentence conclusion under a chart or table, in the same style on every page."""
    st.caption(f"**Takeaway:** {text}")
