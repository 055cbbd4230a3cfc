"""Small rendering helpers shared by the pages (streamlit calls, no numbers of their own)."""

from __future__ import annotations

import streamlit as st


def takeaway(text: str) -> None:
    """The one-sentence conclusion under a chart or table, in the same style on every page."""
    st.caption(f"**Takeaway:** {text}")
