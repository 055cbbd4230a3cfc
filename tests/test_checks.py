"""The one wording of the value rules (albert_core/checks.py): the field, the rule, the value given."""

from __future__ import annotations

import math

import pytest

from albert_core.checks import check_flag, check_number, check_whole_number, is_whole_number


@pytest.mark.parametrize(("value", "lo", "hi", "message"), [
    (0, 1, None, "batch must be a whole number >= 1, got 0"),
    (True, 1, None, "batch must be a whole number >= 1, got True"),
    (2.0, 1, None, "batch must be a whole number >= 1, got 2.0"),
    (5000, 1, 4096, "batch must be a whole number between 1 and 4,096, got 5000"),
])
def test_whole_numbers(value, lo, hi, message):
    with pytest.raises(ValueError) as err:
        check_whole_number("batch", value, lo, hi)
    assert str(err.value) == message
    assert check_whole_number("batch", 7, 1, 8) == 7 and is_whole_number(7) and not is_whole_number(False)


@pytest.mark.parametrize("value", [0, 1.5, math.nan, math.inf, 10**400, "0.5", True])
def test_numbers_in_an_interval(value):
    with pytest.raises(ValueError, match=r"^rate must be a number in \(0, 1\], got "):
        check_number("rate", value, 0, 1, lo_open=True)


def test_interval_ends_and_flags():
    assert check_number("rate", 1, 0, 1, lo_open=True) == 1.0 and isinstance(check_number("x", 1, 0, 2), float)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\)"):
        check_number("dropout", 1.0, 0, 1, hi_open=True)
    assert check_flag("overlap", False) is False
    with pytest.raises(ValueError, match="overlap must be True or False, got 1"):
        check_flag("overlap", 1)
