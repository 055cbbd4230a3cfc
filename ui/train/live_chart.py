"""A Plotly chart that stays on the page while the fragment that draws it reruns (the Train page's streaming
curves).

`st.plotly_chart` derives its element's identity from the figure, so every poll that adds a point gives the
browser a new element: it mounts a new, empty chart beside the old one and removes the old one, and the curve
blinks (on a loaded host it is empty for a moment) and a run the visitor hid in the legend comes back within a
second. This chart is a Streamlit component with a fixed key: the browser keeps it, and each rerun hands it
the new figure, which Plotly.react draws in place; `uirevision` keeps the visitor's legend, zoom and pan.

The component's folder holds `assets/live_plotly.html` and the plotly.js of the installed plotly package
(the same file `fig.write_html` embeds), copied once into the cache folder: Streamlit serves a component's
files only from inside its folder. Nothing is downloaded from outside the server; the browser fetches that
plotly.js (4.8 MB, 1.5 MB gzipped: about 0.2 CPU-seconds of the server's compression) once per page load that
shows a live chart, so the Train page uses it only while runs train.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from pathlib import Path

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit.components.v1 as components

from albert_core.settings import cache_dir

PAGE = Path(__file__).parent / "assets" / "live_plotly.html"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def component_dir(root: Path | None = None) -> Path:
    """The component's folder (index.html and plotly.min.js), made once per plotly version and page."""
    root = cache_dir() if root is None else root
    page = PAGE.read_bytes()
    folder = root / f"live-plotly-{plotly.__version__}"
    index = folder / "index.html"
    if index.is_file() and index.read_bytes() == page and (folder / "plotly.min.js").is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".live-plotly-", dir=root))  # two processes may start at once
    try:
        try:
            os.link(PLOTLY_JS, staging / "plotly.min.js")
        except OSError:  # another file system
            shutil.copyfile(PLOTLY_JS, staging / "plotly.min.js")
        (staging / "index.html").write_bytes(page)
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # another process's folder is in place: the same files
            staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


@functools.cache
def _component():
    return components.declare_component("live_plotly", path=str(component_dir()))


FONT_FAMILY = '"Source Sans Pro", "Source Sans", sans-serif'


@functools.cache
def _template() -> dict:
    """Streamlit's Plotly template as a dict, made once (resolving it by name per figure cost more than the rest
    of a poll)."""
    return pio.templates["streamlit"].to_plotly_json()


def live_plotly_chart(fig: go.Figure, key: str) -> None:
    """Draw ``fig`` in a chart element that keeps its place, its legend and its zoom across reruns with the same
    ``key``. Styled as `st.plotly_chart` styles a figure: Streamlit's Plotly template, its font (where the
    visitor has it), a bold title and axes that make room for their labels. Written on the figure's dict:
    the panel sends it once a second to every visitor watching a run."""
    spec = fig.to_plotly_json()
    layout = {**spec["layout"], "template": _template()}  # new dicts only: a figure's dict may be shared
    spec = {**spec, "layout": layout}
    layout["font"] = {**layout.get("font", {}), "family": FONT_FAMILY}
    title = layout.get("title", {})
    layout["title"] = {**title, "font": {**title.get("font", {}), "weight": 600}}
    for name in {"xaxis", "yaxis", *(k for k in layout if k.startswith(("xaxis", "yaxis")))}:
        layout[name] = {**layout.get(name, {}), "automargin": True}
    _component()(figure=pio.to_json(spec, validate=False), revision=key, key=key, default=None)
