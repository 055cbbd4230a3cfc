"""Figure builders of the Explorer and Compare pages: trace types and values equal to their inputs."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest

from albert_core import PRESETS, Workload, count_params
from albert_core.counting.report import analyze
from albert_core.format import fmt_bytes, fmt_flops
from tests.helpers.facts import MODEL_COUNTS
from ui import colors, figure_style
from ui.compare import figures as compare_figures
from ui.explorer import figures as figures_explorer


@pytest.mark.parametrize("name", ["albert-base", "bert-base"])
def test_treemap_values_are_the_breakdown(name):
    bd = count_params(PRESETS[name].replace(head="pretraining"))
    fig = figures_explorer.breakdown_treemap(bd)
    (tm,) = fig.data
    assert isinstance(tm, go.Treemap) and tm.branchvalues == "total"
    values = dict(zip(tm.ids, tm.values, strict=True))
    parents = dict(zip(tm.ids, tm.parents, strict=True))
    assert values["model"] == bd.total
    for c in bd.components:
        assert values[c.name] == c.params and parents[c.name] == c.group
    for group in ("embeddings", "encoder", "heads"):  # "total" branch values: children sum to the parent
        assert values[group] == sum(c.params for c in bd.components if c.group == group)
        assert parents[group] == "model"


def test_flops_bars_sorted_and_equal_to_components():
    comps = {"encoder.attention.qkv": 30, "encoder.attention.scores": 50, "pooler": 0, "encoder.ffn.ffn": 10}
    fig = figures_explorer.flops_bars(comps)
    bar, *key = fig.data
    assert isinstance(bar, go.Bar) and bar.orientation == "h"
    assert [k.name for k in key] == ["encoder"] and fig.layout.legend.yref == "container" and fig.layout.legend.y == 0  # the colour key, under the plot
    assert list(bar.x) == [10, 30, 50]  # zero dropped, largest at the top
    assert [t.name for t in fig.data if t.showlegend is not False] == ["encoder"]  # no stray "trace 0" in the legend
    # the long name in two lines, so the plot keeps its width on a phone
    assert list(bar.y) == ["FFN up H→I", "Attention Q/K/V", "Attention scores QKᵀ<br>and weighted values"]


def test_wrap_label_breaks_long_labels_at_the_middle_space():
    assert figures_explorer.wrap_label("Pooler") == "Pooler"
    assert figures_explorer.wrap_label("Embedding projection E→H") == "Embedding projection E→H"  # 24 characters
    assert figures_explorer.wrap_label("Attention scores QKᵀ and weighted values") == (
        "Attention scores QKᵀ<br>and weighted values")


def test_twin_bars_relative_to_bert_twin():
    rep = analyze(PRESETS["albert-base"], Workload())
    fig = figures_explorer.twin_bars(rep)
    cfg_trace, twin_trace = fig.data
    assert fig.layout.barmode == "group" and list(twin_trace.x) == [1.0] * 4
    assert cfg_trace.orientation == "h" and fig.layout.legend.yref == "container" and fig.layout.legend.y == 0  # readable on a phone
    bert_at_albert_vocabulary = MODEL_COUNTS["bert-base"] - 522 * 768
    assert cfg_trace.x[0] == pytest.approx(MODEL_COUNTS["albert-base"] / bert_at_albert_vocabulary)
    assert cfg_trace.x[1] == pytest.approx(1.0, abs=0.01)  # sharing saves no compute
    assert list(cfg_trace.customdata) == [r[1] for r in figures_explorer.twin_metrics(rep)]


def test_twin_metrics_int8_uses_inference_memory():
    rep = analyze(PRESETS["albert-base"], Workload(dtype="int8"))
    rows = figures_explorer.twin_metrics(rep)
    assert rows[3][1] == MODEL_COUNTS["albert-base"]  # int8 weights: one byte each


def test_compare_frame_and_bars():
    rows = [
        {"name": "a", "family": "ALBERT", "params": 100, "forward_flops": 10, "training_memory": 1000},
        {"name": "b", "family": "BERT", "params": 50, "forward_flops": 20, "training_memory": 1000},
        {"name": "c", "family": "ALBERT", "params": 50, "forward_flops": 20, "training_memory": 1000},
    ]
    df = compare_figures.compare_frame(rows)
    assert list(df["params_delta"]) == [0.0, -0.5, -0.5] and list(df["forward_flops_delta"]) == [0.0, 1.0, 1.0]
    fig = compare_figures.compare_bars(df)
    # One horizontal-bar panel per metric, in its own unit; one bar per pinned config, the first on top.
    assert [t.name for t in fig.data] == ["Parameters", "Forward FLOPs / sequence", "Training memory"]
    for trace, col in zip(fig.data, ["params", "forward_flops", "training_memory"], strict=True):
        assert trace.orientation == "h" and list(trace.y) == ["a", "b", "c"] and list(trace.x) == list(df[col])
    assert fig.data[0].text[:2] == ("100", "50 (-50.0%)") and fig.data[1].text[1] == "20 FLOP (+100%)"
    # the app's family colours: ALBERT orange, BERT blue, a second ALBERT another shade of orange
    from ui import colors

    a, b, c = fig.data[0].marker.color
    assert (a, b) == (colors.ALBERT, colors.BERT) and c != a and c in colors.SHADES["ALBERT"]
    assert fig.layout.yaxis.autorange == "reversed"


def _pins(*rows):
    return compare_figures.compare_frame(
        [{"name": n, "params": p, "forward_flops": f, "training_memory": 1} for n, p, f in rows])


def test_compare_takeaway_follows_the_numbers():
    same = compare_figures.compare_takeaway(_pins(("bert", 100, 50), ("albert", 10, 50)))
    assert "albert has 10.0x fewer parameters than bert (-90.0%)" in same and "FLOPs are nearly equal" in same
    fewer = compare_figures.compare_takeaway(_pins(("big", 100, 60), ("small", 20, 20)))
    assert "3.00x fewer forward FLOPs" in fewer and "none of it from sharing" in fewer
    more = compare_figures.compare_takeaway(_pins(("a", 100, 10), ("k2", 50, 16)))
    assert "but its forward FLOPs are +60.0%" in more
    base = compare_figures.compare_takeaway(_pins(("tiny", 10, 1), ("x", 30, 1), ("y", 15, 1)))
    assert "baseline tiny is already the smallest" in base and "50.0% more" in base


def test_the_compare_table_formats_for_people_and_colours_deltas():
    df = compare_figures.compare_frame([
        {"name": "bert-base", "params": 109_482_240, "forward_flops": 22_300_000_000,
         "training_memory": 2_600_000_000, "sharing": "none"},
        {"name": "albert-base", "params": 11_683_584, "forward_flops": 22_400_000_000,
         "training_memory": 1_300_000_000, "sharing": "all"},
        {"name": "same", "params": 109_482_240, "forward_flops": 22_300_000_000,
         "training_memory": 2_600_000_000, "sharing": "none"},
    ])
    table, formats, badges = compare_figures.compare_cost_table(df)
    assert formats == {"params": "%.2fM", "forward_flops": "%.1f GFLOP", "training_memory": "%.1f GB"}
    # the numbers stay numbers (sorting works), in the column's unit: "%.2fM" % 11.683584 is 11.68M
    assert [formats["params"] % v for v in table["params"]] == ["109.48M", "11.68M", "109.48M"]
    assert [formats["forward_flops"] % v for v in table["forward_flops"]] == ["22.3 GFLOP", "22.4 GFLOP", "22.3 GFLOP"]
    assert list(table["params_delta"]) == [["baseline"], ["-89.3%"], ["no change"]]
    assert list(table["forward_flops_delta"]) == [["baseline"], ["+0.45%"], ["no change"]]
    assert list(table["training_memory_delta"]) == [["baseline"], ["-50.0%"], ["no change"]]
    assert badges == {"baseline": "gray", "-89.3%": colors.GOOD, "no change": "gray",
                      "+0.45%": colors.BAD, "-50.0%": colors.GOOD}  # smaller green, larger red
    assert list(table.columns) == ["name", "params", "params_delta", "forward_flops", "forward_flops_delta",
                                   "training_memory", "training_memory_delta"]


@pytest.mark.parametrize("vmax", [7.2e9, 1.5e9, 11_683_584, 9.6e9, 999, 3])
def test_si_ticks_are_round_and_cover_the_range(vmax):
    vals, text = figures_explorer.si_ticks(vmax, fmt_flops)
    step = vals[1] - vals[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 9) in (1, 2, 5) and vals[0] == 0 and vals[-1] >= vmax
    assert 3 <= len(vals) <= 8 and all(b - a == pytest.approx(step) for a, b in zip(vals, vals[1:], strict=False))
    assert len(set(text)) == len(text) and all(t.endswith("FLOP") for t in text)
    assert figures_explorer.si_ticks(2e9, fmt_flops)[1][1:3] == ["500 MFLOP", "1 GFLOP"]


def test_fmt_delta_keeps_small_changes_visible():
    assert figure_style.fmt_delta(0.0006) == "+0.06%" and figure_style.fmt_delta(-0.893) == "-89.3%"
    assert figure_style.fmt_delta(0) == "+0.0%"
    assert figure_style.fmt_delta(12.985) == "+1298%"  # no false precision on huge changes


def test_flops_bars_hover_shares_and_axis_units():
    comps = {"encoder.ffn.ffn": 6e9, "encoder.attention.scores": 2e9}
    fig = figures_explorer.flops_bars(comps)
    assert list(fig.data[0].customdata) == [0.25, 0.75]
    assert "GFLOP" in fig.layout.xaxis.ticktext[1]


def test_twin_summary_says_what_the_numbers_say():
    text = figures_explorer.twin_summary(analyze(PRESETS["albert-base"], Workload()))
    assert "**Parameters: down 9.34x**" in text and "**Forward FLOPs: nearly equal, 1.00x**" in text
    assert "runs L×K = 12 times" in text
    # the SDPA figures too (transformers' default attention): per executed layer SDPA keeps one fp32 number per
    # attention row instead of the probabilities, and BERT's (dropout 0.1) also drops their mask and dropped copy
    B, S, X, heads = 8, 128, 12, 12
    albert_sdpa = analyze(PRESETS["albert-base"], Workload()).own.memory.activations - X * B * heads * S * (S * 4 - 4)
    bert_sdpa = analyze(PRESETS["albert-base"], Workload()).twin.memory.activations - X * B * heads * S * (S * 9 - 4)
    assert f"default SDPA attention, whose fused kernels keep no attention probabilities, {fmt_bytes(albert_sdpa)} " \
           f"vs {fmt_bytes(bert_sdpa)}" in text
    k2 = PRESETS["albert-base"].replace(inner_group_num=2)
    text = figures_explorer.twin_summary(analyze(k2, Workload()))
    # Twice the encoder work; the embeddings are 0.1% of the FLOPs, so 2.00x to three digits.
    assert "K = 2 inner repeats" in text and "Forward FLOPs: up 2.00x" in text and "*slower*" in text


def test_breakdown_takeaway_mentions_the_unshared_size():
    text = figures_explorer.breakdown_takeaway(count_params(PRESETS["albert-base"]))
    assert "Word embeddings (3.84M)" in text  # V*E = 30,000 * 128
    assert "89.65M" in text  # transformers' exact count, Table 4: E = 128 not-shared, 89,650,176
    assert "Without sharing" not in figures_explorer.breakdown_takeaway(count_params(PRESETS["bert-base"]))


def test_twin_summary_says_what_table_2_measures():
    text = figures_explorer.twin_summary(analyze(PRESETS["albert-base"], Workload()))
    assert "different H" not in text
    assert "ALBERT-large and BERT-large both have H = 1024 and L = 24" in text
    assert "1.7x faster" in text and "less communication" in text


@pytest.mark.parametrize("names", [*figures_explorer.TWIN_NAMES.values(), ("ALBERT counterpart", "this BERT")])
def test_the_twin_chart_title_fits_a_phone(names):
    """Issue 42: the Explorer's twin chart title was cut at 390 px ("This encoder vs ALBERTized twin (ALBERTized
    twin = 100%)", 56 characters; a 45-character title fits at TITLE_FONT)."""
    title = figures_explorer.twin_title(names)
    assert len(title) <= 45 and title.endswith("= 100%)") and names[1] in title
