"""The rules a value from a caller, a file, a URL or a form must meet, each written once, with one wording
for the error: ValueError naming the field and the rule ("batch must be a whole number between 1 and 4,096,
got 0"). Every layer of the package checks its arguments with these."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any


def short_repr(value: Any, limit: int = 40) -> str:
    """A short rendering (repr, cut to ``limit`` characters) of a user value for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_whole_number(value: Any) -> bool:
    """An int that is not a bool (True is an int to Python, never a count to a person)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_whole_number(name: str, value: Any, lo: int = 1, hi: int | None = None, why: str = "") -> int:
    """``value`` if it is a whole number in [lo, hi] (``hi`` None: no upper bound); else ValueError naming
    ``name``, the rule and ``why`` (a reason, e.g. " (room for [CLS] and [SEP])")."""
    # the common case first, in one test (ModelConfig checks ten fields this way on every construction)
    if (type(value) is int or is_whole_number(value)) and lo <= value and (hi is None or value <= hi):
        return value
    rule = f">= {lo:,}" if hi is None else f"between {lo:,} and {hi:,}"
    raise ValueError(f"{name} must be a whole number {rule}{why}, got {short_repr(value)}")


def check_number(name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False,
                 why: str = "") -> float:
    """``value`` if it is a finite real number (int or float, not a bool) in the interval from ``lo`` to
    ``hi``, open at an end when ``lo_open`` / ``hi_open``; else ValueError naming ``name`` and the interval
    written as in mathematics, e.g. "in (0, 1]"."""
    if type(value) is float and math.isfinite(value) and (value > lo if lo_open else value >= lo) \
            and (value < hi if hi_open else value <= hi):
        return value  # the common case, in one test
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        try:
            ok = math.isfinite(float(value))  # an int too large for a float is refused here too
        except OverflowError:
            ok = False
    if ok:
        ok = (value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)
    if not ok:
        interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        raise ValueError(f"{name} must be a number in {interval}{why}, got {short_repr(value)}")
    return float(value)


def check_flag(name: str, value: Any) -> bool:
    """``value`` if it is True or False (not 0, 1 or a string)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {short_repr(value)}")
    return value


def check_field_names(cls: type, data: Any, what: str) -> None:
    """``data`` is a mapping whose keys are all field names of the dataclass ``cls`` (ValueError otherwise)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} must be a mapping of field names, got {type(data).__name__}")
    unknown = sorted(set(data) - {f.name for f in fields(cls)})
    if unknown:
        raise ValueError(f"unknown field(s): {', '.join(map(str, unknown))}")
