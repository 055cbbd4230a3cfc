"""The streaming chart's component folder: the page and the installed plotly.js, made once, replaced when the
page changes (ui/train/live_chart.py)."""

from __future__ import annotations

import hashlib
import json

import plotly.graph_objects as go
from streamlit.testing.v1 import AppTest

from ui.train import live_chart


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_folder_holds_the_page_and_the_installed_plotly_js(tmp_path):
    folder = live_chart.component_dir(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["index.html", "plotly.min.js"]
    assert (folder / "index.html").read_bytes() == live_chart.PAGE.read_bytes()
    assert _sha(folder / "plotly.min.js") == _sha(live_chart.PLOTLY_JS)
    assert b'<script src="plotly.min.js">' in (folder / "index.html").read_bytes()  # served from the same folder
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left behind


def test_the_folder_is_made_once_and_remade_when_the_page_changes(tmp_path):
    folder = live_chart.component_dir(tmp_path)
    made = (folder / "plotly.min.js").stat().st_ino
    assert live_chart.component_dir(tmp_path) == folder
    assert (folder / "plotly.min.js").stat().st_ino == made  # not copied again
    (folder / "index.html").write_text("an older page")
    assert live_chart.component_dir(tmp_path) == folder
    assert (folder / "index.html").read_bytes() == live_chart.PAGE.read_bytes()


def _app() -> None:
    import plotly.graph_objects as go

    from ui.train.live_chart import live_plotly_chart

    live_plotly_chart(go.Figure(go.Scatter(x=[0, 1, 2], y=[3.0, 2.0, 1.5], name="ALBERT · training"))
                      .update_layout(title="MLM loss", height=380), key="fig_test")


def test_the_chart_sends_the_whole_figure_under_its_key(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_EXPLORER_CACHE_DIR", str(tmp_path))
    live_chart._component.cache_clear()
    try:
        at = AppTest.from_function(_app).run()
    finally:
        live_chart._component.cache_clear()
    assert not at.exception
    (el,) = at.get("component_instance")
    sent = json.loads(el.proto.json_args)
    fig = go.Figure(json.loads(sent["figure"]))
    assert list(fig.data[0].y) == [3.0, 2.0, 1.5] and fig.data[0].name == "ALBERT · training"
    assert fig.layout.height == 380 and fig.layout.yaxis.automargin is True
    assert sent["revision"] == "fig_test"  # the same uirevision on every rerun: the legend and zoom are kept
