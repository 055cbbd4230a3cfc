"""The lab's one JSON form of a DataFrame (albert_core/lab/frames.py): what it writes reads back, pandas' own
"split" JSON (the layout of run folders written before it) reads the same, and rounding is by significant digits."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd

from albert_core.lab.frames import frame_from_data, frame_to_data, from_plain, to_plain


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"step": [0, 50, 100], "loss": [5.123456789, math.nan, 4.0], "acc": [0.1, 0.2, np.inf]})


def test_round_trip_through_json_keeps_values_and_turns_non_finite_into_nan():
    text = json.dumps(frame_to_data(_frame(), index=False))
    assert "NaN" not in text and "Infinity" not in text  # strict JSON
    back = frame_from_data(json.loads(text))
    assert list(back.columns) == ["step", "loss", "acc"] and list(back["step"]) == [0, 50, 100]
    assert back["loss"][0] == 5.123456789 and math.isnan(back["loss"][1]) and math.isnan(back["acc"][2])


def test_pandas_split_json_reads_the_same():
    frame = _frame().replace(np.inf, math.nan)
    ours = frame_from_data(json.loads(frame.to_json(orient="split", index=False, double_precision=10)))
    pandas = pd.read_json(io.StringIO(frame.to_json(orient="split", index=False)), orient="split")
    pd.testing.assert_frame_equal(ours, pandas, check_dtype=False)


def test_digits_are_significant_and_nested_frames_are_tagged():
    value = {"table": pd.DataFrame({"x": [123456.789, 0.000123456]}, index=["a", "b"]).rename_axis("k"), "n": [1.23456]}
    plain = to_plain(value, digits=3)
    assert plain["n"] == [1.23]
    back = from_plain(json.loads(json.dumps(plain)))
    assert list(back["table"]["x"]) == [123000.0, 0.000123] and list(back["table"].index) == ["a", "b"]
    assert back["table"].index.name == "k"
