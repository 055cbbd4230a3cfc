"""Helpers shared by the AppTest page tests."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def charts(at: AppTest) -> dict[str, dict]:
    """Plotly specs of the page, by chart title: `st.plotly_chart`'s and the streaming charts'
    (ui/train/live_chart.py, a component that is sent the figure)."""
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    specs += [json.loads(json.loads(el.proto.json_args)["figure"]) for el in at.get("component_instance")
              if el.proto.component_name.endswith("live_plotly")]
    return {spec["layout"]["title"]["text"]: spec for spec in specs}
