"""Plotly figures written as plain dicts and sent without validation or copies.

Plotly validates every property of a figure built from its graph objects (`go.Bar(...)`, `go.Figure(data=...)`):
most of a page's rerun when a slider move rebuilds its charts. Even unvalidated, `go.Figure(spec)` deep-copies
the spec and the template into graph objects, and `st.plotly_chart` deep-copies them back out with `to_dict`
(on every rerun, also for a cached figure; docs/benchmarks.md has the measurements). A builder that writes its
figure as the dict Plotly's validation produces (nested dicts, a "type" on every trace) can skip all of that:
`figure` returns a `TrustedFigure`, whose `to_dict` is that dict with the default template, as it is. What
validation would have caught is caught by the tests instead: tests/test_plotly_dicts.py validates every such
builder's output on many configs and requires the same JSON as the validated figure, and every chart a page sends
is compared with its validated self.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

# Names a TrustedFigure answers without building its graph objects.
_OWN = frozenset({"_spec", "to_dict", "to_plotly_json", "__dict__", "__class__"})
_TEMPLATES: dict[str, dict] = {}


def _default_template() -> dict | None:
    """The default template as the dict `go.Figure` would put in the layout (Streamlit's, once Streamlit is
    imported), made once per template name and shared read-only."""
    name = pio.templates.default
    if not name:
        return None
    if name not in _TEMPLATES:
        _TEMPLATES[name] = pio.templates[name].to_plotly_json()
    return _TEMPLATES[name]


class TrustedFigure(go.Figure):
    """A `go.Figure` held as its dict: `to_dict` returns the dict itself (shared, never to be mutated), which is
    all `st.plotly_chart` asks of a figure. Anything else (``fig.data``, ``fig.layout``, ``update_layout``, ...)
    first builds the figure's graph objects from the dict, once; from then on it is an ordinary `go.Figure`.

    It relies on two internals, neither a public API (tests/test_plotly_dicts.py fails when an upgrade changes
    either; Streamlit 1.67, Plotly 6):

    - Streamlit's `st.plotly_chart` turns a figure into its dict with `plotly.tools.return_figure_from_figure_or_data`,
      which takes a `BaseFigure`'s `to_dict()` as already valid (no second validation, no copy), and then writes it
      with `plotly.io.to_json(..., validate=False)`: a subclass of `go.Figure` whose `to_dict` is the dict is sent
      as it is, without graph objects ever being built;
    - Plotly's private keyword `_validate=False` of `BaseFigure.__init__` builds the graph objects without
      validating them (the dict already is Plotly's valid form) when something reads them.
    """

    def __init__(self, spec: dict[str, Any]):  # noqa: D107 - no graph objects until they are asked for
        object.__setattr__(self, "_spec", spec)

    def __getattribute__(self, name: str) -> Any:
        if name not in _OWN:
            state = object.__getattribute__(self, "__dict__")
            spec = state.get("_spec")
            if spec is not None:
                state["_spec"] = None
                go.Figure.__init__(self, spec, _validate=False)  # copies: later changes go to the graph objects
        return object.__getattribute__(self, name)

    def to_dict(self) -> dict[str, Any]:
        spec = object.__getattribute__(self, "__dict__").get("_spec")
        return spec if spec is not None else go.Figure.to_dict(self)

    to_plotly_json = to_dict


def figure(data: Iterable[Mapping[str, Any]], layout: Mapping[str, Any]) -> TrustedFigure:
    """A figure of ``data`` (trace dicts, each with its "type") and ``layout`` (a dict), not validated, not copied
    beyond the top level: the caller hands its dicts over."""
    layout = dict(layout)
    if "template" not in layout and (template := _default_template()) is not None:
        layout["template"] = template
    return TrustedFigure({"data": [dict(t) for t in data], "layout": layout})


def frozen(fig: Any) -> Any:
    """A `go.Figure` as a `TrustedFigure` of its current dict (made once here), anything else as it is: for a
    figure that is cached and sent on many reruns, so that each send does not copy it again. ``fig`` must not
    change afterwards."""
    if isinstance(fig, go.Figure) and not isinstance(fig, TrustedFigure):
        return TrustedFigure(fig.to_dict())
    return fig
