"""The explorer app's Streamlit side, by page over a small common core.

Each page is a package, `ui/<page>/` (explorer, scaling, live, train, hardware, compare, paper), holding its script
`page.py` (run by `st.navigation` in app.py; nothing imports it) and what only that page uses: its figure builders
(`figures.py`), its cached units (`cache.py`, Scaling's `charts.py`, Compare's `view.py`) and its helpers.

The common core: `ui.sidebar` (the shared, URL-bound sidebar), `ui.state` (this run's config and workload, the
cached `Result`), `ui.urls` (every URL codec), `ui.url_state` (widgets whose values travel in the URL),
`ui.server` (settings check, frozen imports), `ui.tables`, `ui.colors`, `ui.figure_style` (title size, legends,
ticks), `ui.plotly_dicts` (figures written as dicts), `ui.render`.

`albert_core` imports no streamlit; neither do the pure modules here (tests call them without a server): the
figure builders, `ui.urls`, `ui.colors`, `ui.figure_style`, `ui.plotly_dicts`, `ui.explorer.exports`,
`ui.scaling.takeaways`, `ui.hardware.questions`, `ui.train.runs`.
"""
