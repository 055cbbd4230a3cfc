"""Streamlit-side helpers of the explorer app: sidebar, shared state, page helpers and Plotly figure builders.

`albert_core` imports no streamlit; here the pure modules import none either (tests call them without a
server): the figure and table builders (`ui.figures_*`, config or DataFrame in, plotly Figure out),
`ui.exports`, `ui.scaling_takeaways`, `ui.train_runs`, `ui.colors` and `ui.plotly_dicts`. The sidebar and
shared state (`ui.sidebar`, `ui.state`), `ui.render`, `ui.review`, the Live model page's
helpers (`ui.live_*`) and the Train page's (`ui.train_view`, `ui.train_experiments`) import streamlit, as do
app.py and the page scripts (`ui/<page>/page.py`, run by `st.navigation`; nothing imports them).
"""
