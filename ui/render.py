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


# ----------------------------------------------------------------------------- the first paint
# A fresh browser shows a page's numbers only once it has also loaded Plotly's 4.7 MB bundle and drawn the charts:
# it evaluates the bundle and draws them on the thread that would draw the numbers (docs/benchmarks-changes.md,
# issue 34). So the first run of a browser's session sends the numbers with a placeholder where each chart goes,
# and a fragment whose timer the browser fires once, a moment later, starts the run that draws the charts. Every
# later run draws them at once (a slider moved before the timer fired too). Clients that run no timers (AppTest, the
# load test's websocket client) are not browsers here and get every chart in the first run.
FIRST_RUN_DONE_KEY = "_first_run_done"
FIRST_PAINT_DELAY_S = 0.8  # measured: at 0.4 s the charts sometimes still arrived before the numbers were drawn
_PENDING_KEY = "_charts_pending"  # a chart of this run waits for the follow-up run


def _from_a_browser() -> bool:
    return st.context.headers.get("User-Agent", "").startswith("Mozilla/")


def first_paint() -> bool:
    """Whether this is the first run of a browser's session: its charts wait for the follow-up run."""
    return not st.session_state.get(FIRST_RUN_DONE_KEY) and _from_a_browser()


def chart(fig, *, key: str, **kwargs) -> None:
    """`st.plotly_chart`, or in the first paint an empty box of the chart's height (the page does not jump)."""
    if first_paint():
        height = fig.to_dict().get("layout", {}).get("height") or 450  # a TrustedFigure's dict, no graph objects
        st.container(height=int(height) + 28, border=False, key=f"{key}_pending")  # + the chart's toolbar strip
        st.session_state[_PENDING_KEY] = True
        return
    st.plotly_chart(fig, key=key, **kwargs)


def finish_run() -> None:
    """At the end of every run: the first run is over; if it left charts out, the fragment that asks for them."""
    first = not st.session_state.get(FIRST_RUN_DONE_KEY)
    st.session_state[FIRST_RUN_DONE_KEY] = True
    if first and st.session_state.pop(_PENDING_KEY, False):
        _then_the_charts()


@st.fragment(run_every=FIRST_PAINT_DELAY_S)
def _then_the_charts() -> None:
    """Drawn only by the first run (nothing on screen); when its timer fires, a full run draws the charts, and the
    fragment, not drawn by that run, stops."""
    if st.session_state.get(_PENDING_KEY + "_armed"):
        st.rerun(scope="app")
    st.session_state[_PENDING_KEY + "_armed"] = True
