"""Numbers for people: the unit is the largest one not above the value, never a rounded-up one
below 1, and a value that would print as 1000 of a unit moves to the next unit."""

import pytest

from albert_core.format import (
    fmt_bytes,
    fmt_count,
    fmt_flops,
    fmt_nat_gap,
    fmt_params,
    fmt_pct,
    fmt_ratio,
    fmt_share,
    sentence_case,
)


@pytest.mark.parametrize(
    ("n", "digits", "text"),
    [
        (11_683_584, 2, "11.68M"),
        (108_891_648, 2, "108.89M"),
        (512, 2, "512"),
        (512, 0, "512"),  # not '1k'
        (999, 0, "999"),
        (999_999, 2, "1.00M"),  # not '1000.00k'
        (1_500, 1, "1.5k"),
        (2_300_000_000, 2, "2.30B"),
        (-4_005_120, 2, "-4.01M"),
        (0, 2, "0"),
    ],
)
def test_fmt_params(n: int, digits: int, text: str) -> None:
    assert fmt_params(n, digits) == text


def test_fmt_flops_and_bytes() -> None:
    assert fmt_flops(21.8e9) == "21.8 GFLOP"
    assert fmt_flops(950) == "950 FLOP"
    assert fmt_bytes(44.6e6) == "44.6 MB"
    assert fmt_bytes(999.96e6) == "1.0 GB"
    assert fmt_bytes(512) == "512 B"
    assert fmt_bytes(3 * 2**30) == "3.2 GB"  # one unit: decimal, also for binary-sized budgets
    with pytest.raises(TypeError):
        fmt_bytes(1023, binary=True)  # no second unit to pick


def test_share_beyond_the_whole_is_a_multiple() -> None:
    assert fmt_share(0.829) == "82.9%" and fmt_share(1.0) == "100.0%"
    assert fmt_share(216.345) == "216x" and fmt_share(1.34) == "1.3x"


def test_counts_ratios_percentages() -> None:
    assert fmt_count(11_683_584) == "11,683,584"
    assert fmt_ratio(0.1067) == "0.11x"
    assert fmt_ratio(9.37) == "9.37x"
    assert fmt_ratio(12.34) == "12.3x"
    assert fmt_pct(0.8291) == "82.9%"
    assert fmt_pct(-0.025, signed=True) == "-2.5%"


def test_sentence_case_keeps_the_rest_as_written():
    # the Train page's verdicts: str.capitalize turned "E=64" into "e=64"
    assert sentence_case("separated here (E=64 all-shared better)") == "Separated here (E=64 all-shared better)"
    assert sentence_case("") == "" and sentence_case("BERT twin") == "BERT twin"


def test_one_duration_format_for_figures_and_rough_times():
    from albert_core.format import fmt_duration

    assert fmt_duration(0.9996) == "1 s"  # rounds into the next unit, never '1e+03 ms'
    assert fmt_duration(0.99949) == "999 ms"
    assert fmt_duration(119.96) == "2 min"
    assert fmt_duration(0) == "0 s"
    # rough times ("about ..."): two significant digits
    assert [fmt_duration(x, 2) for x in (0.356, 1.54, 22.4, 150, 3e6)] == ["360 ms", "1.5 s", "22 s", "2.5 min",
                                                                        "35 days"]


@pytest.mark.parametrize(("values", "kind", "single"), [
    ([11_683_584, 109_482_240], "params", "11.68M"),
    ([22.4e9, 1.33e12], "flops", "22.4 GFLOP"),
    ([1.3e9, 2.6e9], "bytes", "1.3 GB"),
    ([2.3e9], "params", "2.30B"),
    ([999_999], "params", "1.00M"),  # rounds into the next prefix, as fmt_params does
    ([512, 3_000], "params", "512"),
    ([640, 2e6], "bytes", "640 B"),
])
def test_a_column_takes_the_unit_its_smallest_value_is_printed_in(values, kind, single):
    """A table column of numbers in one unit: the smallest value printed with the column's format reads as the
    app's formatter prints it on its own (fmt_params / fmt_flops / fmt_bytes)."""
    from albert_core.format import column_unit

    scale, fmt = column_unit(values, kind)
    smallest = min(values)
    assert fmt % (smallest / scale) == single
    assert single == {"params": fmt_params, "flops": fmt_flops, "bytes": fmt_bytes}[kind](smallest)


def test_a_gap_to_a_baseline_says_below_or_above_from_its_sign_never_minus_below():
    assert fmt_nat_gap([0.184], "the frequency-only model") == "0.18 nat below the frequency-only model"
    assert fmt_nat_gap([-0.18]) == "0.18 nat above"
    assert fmt_nat_gap([0.002]) == "level with" and fmt_nat_gap([-0.004], "it") == "level with it"
    assert fmt_nat_gap([0.45, 0.02]) == "0.02-0.45 nat below"
    assert fmt_nat_gap([-0.03, -0.18]) == "0.03-0.18 nat above"
    assert fmt_nat_gap([-0.18, 0.9], "x") == "from 0.18 nat above to 0.90 nat below x"
