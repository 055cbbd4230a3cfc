"""The one JSON form of a DataFrame, and of the nested values around it, in the lab: a run's history and
`run.json` in its folder, the histories and evaluations in the shipped reference files, `train --json`. pandas'
"split" layout, ``{"columns": [...], "data": [[...]]}`` plus ``"index"`` and ``"index_name"`` when the index
carries information; NaN, NA and infinities are null. Floats keep every digit unless ``digits`` asks for that
many significant ones (the shipped files stay small)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

FRAME_TAG = "__frame__"  # marks a frame inside a nested value (`to_plain` / `from_plain`)


def _scalar(value: Any, digits: int | None) -> Any:
    if value is pd.NA or value is None:
        return None
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return value if digits is None else float(f"{value:.{digits}g}")
    return value


def frame_to_data(frame: pd.DataFrame, digits: int | None = None, index: bool = True) -> dict[str, Any]:
    """``frame`` as plain JSON data (``index`` False: the row labels are left out)."""
    data = frame.to_dict(orient="split")
    out: dict[str, Any] = {"columns": [str(c) for c in data["columns"]]}
    if index:
        out["index"] = [i if isinstance(i, str) else _scalar(i, digits) for i in data["index"]]
        out["index_name"] = frame.index.name
    out["data"] = [[to_plain(v, digits) for v in row] for row in data["data"]]
    return out


def frame_from_data(data: dict[str, Any]) -> pd.DataFrame:
    """The frame `frame_to_data` (or pandas' ``to_json(orient="split")``) wrote; null cells are NaN."""
    frame = pd.DataFrame(data["data"], columns=data["columns"], index=data.get("index"))
    frame.index.name = data.get("index_name")
    if list(frame.index) == list(range(len(frame))):
        frame = frame.reset_index(drop=True)
    return frame.fillna(value=math.nan) if not frame.empty else frame


def to_plain(value: Any, digits: int | None = None) -> Any:
    """A nested value (dicts, lists, frames, numpy scalars) as JSON data; frames tagged with `FRAME_TAG`."""
    if isinstance(value, pd.DataFrame):
        return {FRAME_TAG: frame_to_data(value, digits)}
    if isinstance(value, dict):
        return {str(k): to_plain(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, digits) for v in value]
    return _scalar(value, digits)


def from_plain(value: Any) -> Any:
    """The value `to_plain` wrote, with its frames back."""
    if isinstance(value, dict) and FRAME_TAG in value:
        return frame_from_data(value[FRAME_TAG])
    if isinstance(value, dict):
        return {k: from_plain(v) for k, v in value.items()}
    return value
