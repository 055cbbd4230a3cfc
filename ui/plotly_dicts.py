"""Plotly figures written as plain dicts and wrapped without validation.

Plotly validates every property of a figure built from its graph objects (`go.Bar(...)`, `go.Figure(data=...)`):
1-12 ms a figure on a 2-vCPU host, most of a page's rerun when a slider move rebuilds its charts. A builder that
writes its figure as the dict Plotly's validation produces (nested dicts, a "type" on every trace) can skip
that: `figure` wraps the dict as it is, Plotly's own path for dicts it already trusts (its templates). What
validation would have caught is caught by the tests instead: tests/test_plotly_dicts.py validates every such
builder's output on many configs and requires the same JSON as the validated figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import plotly.graph_objects as go


def figure(data: Iterable[Mapping[str, Any]], layout: Mapping[str, Any]) -> go.Figure:
    """A figure of ``data`` (trace dicts, each with its "type") and ``layout`` (a dict), not validated."""
    return go.Figure({"data": [dict(t) for t in data], "layout": dict(layout)}, _validate=False)
