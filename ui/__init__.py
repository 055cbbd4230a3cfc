"""Streamlit-side helpers of the explorer app: sidebar, shared state and Plotly figure builders.

Figure builders are pure functions (config or DataFrame in, plotly Figure out). Only `ui.sidebar`,
`ui.state`, `ui.live` and the pages import streamlit.
"""
