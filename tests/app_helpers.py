"""Helpers shared by the AppTest page tests."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest


def charts(at: AppTest) -> dict[str, dict]:
    """Plotly specs of the page, by chart title."""
    out = {}
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        out[spec["layout"]["title"]["text"]] = spec
    return out
