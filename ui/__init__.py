"""Streamlit-side helpers of the explorer app: sidebar, shared state and Plotly figure builders.

Figure builders are pure functions (config or DataFrame in, plotly Figure out); the pages, the sidebar, the
shared state and the page helpers (`ui.live_*`, `ui.train_*`, ...) import streamlit.
"""
