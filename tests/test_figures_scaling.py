"""Scaling-page figure builders: trace types, values against count_params / count_flops / closed forms,
and the highlighted current config."""

from __future__ import annotations

import pytest

from albert_core import PRESETS, ModelConfig, count_flops, count_params
from albert_core.configuration.coerce import bert_twin
from albert_core.counting.sweeps import sweep
from albert_core.format import fmt_bytes
from tests.helpers.facts import (
    MODEL_COUNTS,
    PAPER_TABLES_3_4,
    SEED_000_FACTORIZED,
    SEED_000_REDUCTION,
    SEED_000_STANDARD,
    SHARING_COUNTS,
)
from ui.scaling import figures as fs

WL = dict(batch=2, seq_len=64, dtype="fp32", optimizer="adamw")
ALBERT_BASE = MODEL_COUNTS["albert-base"]  # transformers' exact count


def trace(fig, name):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, f"{name!r} not in {[t.name for t in fig.data]}"
    return found[0]


def assert_outlined(fig, index: int, top: float) -> None:
    """The current bar is outlined by one shape (not by marker lines, which also paint the legend)."""
    (rect,) = [s for s in fig.layout.shapes if s.type == "rect"]
    assert rect.x0 < index < rect.x1 and rect.x1 - rect.x0 < 1 and rect.y1 == top
    assert all(t.marker.line.width in (None, 0) for t in fig.data if t.type == "bar")
    assert trace(fig, fs.CURRENT_NAME + " (outlined)").x == (None,)


def current(fig):
    t = trace(fig, fs.CURRENT_NAME)
    assert t.type == "scatter" and t.marker.symbol == "star"
    return t.x[0], t.y[0]


def test_params_vs_hidden_matches_count_params_per_config():
    cfg = ModelConfig(num_heads=1)
    hs = [128, 256, 768, 1024]
    df = sweep(cfg, "hidden_size", hs, **WL)
    total = count_params(cfg).total
    fig = fs.mark_params_vs_hidden(fs.params_vs_hidden_base(df), cfg, total)
    assert fig.layout.yaxis.type == "log"
    albert, bert = trace(fig, "ALBERT"), trace(fig, "BERT")
    assert list(albert.x) == hs and list(bert.x) == hs
    assert list(albert.y) == [count_params(cfg.replace(hidden_size=h)).total for h in hs]
    assert list(bert.y) == [count_params(bert_twin(cfg.replace(hidden_size=h))).total for h in hs]
    assert current(fig) == (768, ALBERT_BASE)
    # 1-2-5 ticks labelled in params (no Plotly minor labels "2, 5" between decades), spanning the data
    vals, text = list(fig.layout.yaxis.tickvals), list(fig.layout.yaxis.ticktext)
    assert text[:3] == ["2M", "5M", "10M"] and text[-1] == "200M"
    assert vals[0] <= min(albert.y) and vals[-1] >= max(bert.y)


def test_params_vs_layers_flat_for_all_shared_albert():
    cfg = ModelConfig()
    layers = [1, 2, 6, 12, 24]
    df = sweep(cfg, "num_layers", layers, **WL)
    fig = fs.mark_params_vs_layers(fs.params_vs_layers_base(df), cfg, count_params(cfg).total)
    albert, bert = trace(fig, "ALBERT"), trace(fig, "BERT")
    assert set(albert.y) == {ALBERT_BASE}  # full sharing: depth adds no parameters
    layer = 4 * 768**2 + 2 * 768 * 3072 + 9 * 768 + 3072  # closed form per layer
    assert [b - a for a, b in zip(bert.y, bert.y[1:], strict=False)] == [
        (l2 - l1) * layer for l1, l2 in zip(layers, layers[1:], strict=False)
    ]
    assert current(fig) == (12, ALBERT_BASE)


def test_embedding_vs_vocab_closed_forms():
    cfg = ModelConfig()
    vs, es = [1000, 30_000, 100_000], [64, 128]
    df = sweep(cfg, "vocab_size", vs, "embedding_size", es, **WL)
    emb = count_params(cfg).group_totals()["embeddings"]
    fig = fs.mark_embedding_vs_vocab(fs.embedding_vs_vocab_base(df), cfg, emb)
    P, T, H = 512, 2, 768
    for e in es:
        t = trace(fig, f"ALBERT E={e}")
        assert list(t.x) == vs
        assert list(t.y) == [(v + P + T) * e + 2 * e + e * H + H for v in vs]
    bert = trace(fig, "BERT (E = H = 768)")
    assert list(bert.x) == vs  # repeated BERT rows of the 2-D sweep kept once
    assert list(bert.y) == [(v + P + T) * H + 2 * H for v in vs]
    assert current(fig) == (30_000, (30_000 + P + T) * 128 + 2 * 128 + 128 * H + H)


def test_seed_embedding_table_reproduces_the_seed_document():
    sizes = {n: p for n, p in PRESETS.items() if p.family == "albert"}
    df = fs.seed_embedding_table(sizes).set_index("label")
    # The seed's printed figures (shared/seeds/000_*): V = 30,522, E = 128.
    assert df.loc["albert-base", "standard"] == SEED_000_STANDARD
    assert list(df["factorized"]) == list(SEED_000_FACTORIZED.values())
    reductions = [float(pct.rstrip("%")) for pct in SEED_000_REDUCTION.values()]  # 82.9, 87.1, 93.3, 96.5
    assert [round(r * 100, 1) for r in df["reduction"]] == reductions


def test_embedding_reduction_bars_outline_current():
    df = fs.seed_embedding_table({"a": ModelConfig(), "current": ModelConfig(hidden_size=1024, num_heads=16)})
    fig = fs.embedding_reduction(df, "current")
    std, fac = trace(fig, "standard V×H"), trace(fig, "factorized V×E + E×H")
    assert std.type == fac.type == "bar" and fig.layout.barmode == "group"
    assert list(std.y) == [30_522 * 768, 30_522 * 1024]
    assert list(fac.y) == [30_522 * 128 + 128 * 768, 30_522 * 128 + 128 * 1024]
    assert_outlined(fig, 1, 30_522 * 1024)


def test_flops_vs_params_presets_and_current():
    df = fs.presets_frame(PRESETS, 128)
    cfg = ModelConfig(num_layers=6)
    me = {"label": cfg.label, "params": count_params(cfg).total, "forward_flops": count_flops(cfg, 1, 128).forward}
    fig = fs.mark_flops_vs_params(fs.flops_vs_params_base(df), me)
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    bert = trace(fig, "BERT")
    assert list(bert.text) == ["bert-base", "bert-large"]
    assert list(bert.x) == [MODEL_COUNTS["bert-base"], MODEL_COUNTS["bert-large"]]
    # BERT-base forward, the published closed form: L*(8SH^2 + 4S^2H + 4SHI) + 2H^2 (pooler), S = 128
    S, H, FF = 128, 768, 3072
    assert bert.y[0] == 12 * (8 * S * H * H + 4 * S * S * H + 4 * S * H * FF) + 2 * H * H
    albert = trace(fig, "ALBERT")
    albert_presets = ("albert-base", "albert-large", "albert-xlarge", "albert-xxlarge")
    assert list(albert.x) == [MODEL_COUNTS[n] for n in albert_presets]
    # FLOPs in FLOP units (Plotly alone wrote "100B"); under two decades of params: 1-2-5 steps
    ys = dict(zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext, strict=True))
    assert ys[1e11] == "100 GFLOP" and all(t.endswith("FLOP") for t in ys.values())
    assert list(fig.layout.xaxis.ticktext) == ["10M", "20M", "50M", "100M", "200M", "500M"]
    assert current(fig) == (me["params"], me["forward_flops"])


def test_params_heatmap_values_and_current_cell():
    cfg = ModelConfig(num_heads=1)  # every H valid
    es, hs = [64, 128, 256], [256, 768]
    df = sweep(cfg, "embedding_size", es, "hidden_size", hs, include_bert=False, **WL)
    fig = fs.mark_params_heatmap(fs.params_heatmap_base(df), cfg)
    heat = fig.data[0]
    assert heat.type == "heatmap"
    assert list(heat.x) == ["64", "128", "256"] and list(heat.y) == ["256", "768"]
    for i, h in enumerate(hs):
        for j, e in enumerate(es):
            assert heat.z[i][j] == count_params(cfg.replace(embedding_size=e, hidden_size=h)).total
    cell = trace(fig, fs.CURRENT_NAME)  # outlined, so the cell's number stays readable
    assert (cell.x[0], cell.y[0]) == ("128", "768") and cell.marker.symbol == "square-open"
    assert heat.text[1][1] == "11.7M" and heat.textfont.size >= 11  # 3 digits, readable in a cell


def test_params_heatmap_without_current_cell_has_no_star():
    cfg = ModelConfig()
    df = sweep(cfg, "embedding_size", [64], "hidden_size", [256], include_bert=False, **WL)
    assert fs.CURRENT_NAME not in [t.name for t in fs.mark_params_heatmap(fs.params_heatmap_base(df), cfg).data]
    df = sweep(cfg, "embedding_size", [128], "hidden_size", [768], include_bert=False, **WL)
    assert fs.CURRENT_NAME not in [t.name for t in fs.params_heatmap_base(df).data]


def test_table4_exact_and_paper_values():
    df = fs.table4_frame().set_index(["embedding_size", "sharing"])
    # transformers' exact count: ALBERT-base E=128 with pooler
    assert df.loc[(128, "all"), "exact"] == SHARING_COUNTS["all"]
    assert df.loc[(128, "attention"), "exact"] == SHARING_COUNTS["attention"]
    assert df.loc[(128, "ffn"), "exact"] == SHARING_COUNTS["ffn"]
    assert df.loc[(768, "none"), "paper"] == PAPER_TABLES_3_4["none", 768] * 1e6  # 108M
    assert df.loc[(128, "ffn"), "paper"] == PAPER_TABLES_3_4["ffn", 128] * 1e6  # 38M
    # the printed figures are rounded versions of the exact ones (within 4%)
    assert ((df["exact"] - df["paper"]).abs() / df["paper"] < 0.04).all()


def test_sharing_modes_figure():
    df = fs.table4_frame()
    fig = fs.mark_sharing_modes(fs.sharing_modes_base(df), ALBERT_BASE)
    bars = [t for t in fig.data if t.type == "bar"]
    marks = [t for t in fig.data if t.type == "scatter" and t.mode == "markers"]
    assert len(bars) == 2 and len(marks) == 2
    e128 = trace(fig, "exact, E=128")
    assert list(e128.x) == ["all-shared", "shared-attention", "shared-FFN", "not shared"]
    assert list(e128.y) == [SHARING_COUNTS["all"], SHARING_COUNTS["attention"], SHARING_COUNTS["ffn"],
                            count_params(ModelConfig(sharing="none")).total]
    paper_e768 = [PAPER_TABLES_3_4[s, 768] * 1e6 for s in ("all", "attention", "ffn", "none")]  # 31 ... 108M
    assert list(trace(fig, "paper, E=768").y) == paper_e768
    line = fig.layout.shapes[0]
    assert line.y0 == line.y1 == ALBERT_BASE
    assert not fig.layout.annotations  # named in the legend, not over the bar labels
    assert trace(fig, "current config: 11.68M").mode == "lines"


def test_memory_bars_stack_the_four_parts():
    import pandas as pd

    from albert_core import estimate_memory

    cfg = ModelConfig()
    rows = []
    for c in (cfg, bert_twin(cfg)):
        m = estimate_memory(c, 8, 128, "fp32", "adamw")
        rows.append({"label": c.label, "weights": m.weights, "gradients": m.gradients,
                     "optimizer": m.optimizer, "activations": m.activations})
    fig = fs.memory_bars(pd.DataFrame(rows), cfg.label)
    assert fig.layout.barmode == "stack"
    w = trace(fig, "weights")
    V, P, T, H, L, FF = 30_000, 512, 2, 768, 12, 3072
    bert = (V + P + T) * H + 2 * H + L * (4 * H * H + 2 * H * FF + 9 * H + FF) + H * H + H  # BertModel closed form
    assert list(w.y) == [ALBERT_BASE * 4, bert * 4]
    assert list(trace(fig, "optimizer").y) == [ALBERT_BASE * 8, bert * 8]  # AdamW: two states
    assert_outlined(fig, 0, sum(rows[0][k] for k in fs.MEMORY_PARTS))
    assert fig.layout.yaxis.ticktext[1].endswith(" GB")  # bytes in people's units, not Plotly's "1B"
    # no label on a segment too thin to hold one (ALBERT's weights): hover still has it
    assert w.text[0] == "" and w.customdata[0] == fmt_bytes(ALBERT_BASE * 4)
    assert trace(fig, "activations (estimate)").text[0] == fmt_bytes(rows[0]["activations"])
    total = trace(fig, "total")
    assert total.y[0] == sum(rows[0][k] for k in fs.MEMORY_PARTS)


@pytest.mark.parametrize("name", ["bert-base", "albert-xxlarge"])
def test_family_label(name):
    assert fs.family_label(PRESETS[name]) == name.split("-")[0].upper()


@pytest.mark.parametrize("lo, hi, vals", [
    (5e6, 1e10, [1e6, 1e7, 1e8, 1e9, 1e10]),
    (2.1e10, 8e11, [2e10, 5e10, 1e11, 2e11, 5e11, 1e12]),
])
def test_log_ticks_decades_or_125(lo, hi, vals):
    from albert_core.format import fmt_flops

    ticks = fs.log_ticks(lo, hi, fmt_flops)
    assert ticks["type"] == "log" and ticks["tickvals"] == vals
    assert ticks["ticktext"] == [fmt_flops(v, 0) for v in vals]


def test_short_params_three_digits():
    assert [fs.short_params(v) for v in (235_012_345, 24_612_000, 4_410_000, 512)] == ["235M", "24.6M", "4.41M", "512"]


def test_workload_frames_and_charts_against_closed_forms():
    from albert_core import PRESETS, Workload
    from ui.scaling.figures import (
        flops_vs_batch,
        flops_vs_seq,
        memory_vs_workload,
        workload_frame,
        workload_values,
    )

    cfg, n = PRESETS["bert-base"], MODEL_COUNTS["bert-base"]
    H, I, L = 768, 3072, 12  # noqa: E741
    assert workload_values(384, 64, 512) == (64, 128, 256, 384, 512)
    assert workload_values(8, 1, 64) == (1, 2, 4, 8, 16, 32, 64)
    df = workload_frame(cfg, Workload(batch=2), "seq_len", (128, 512))
    for S, row in zip((128, 512), df.itertuples(), strict=True):
        scores = 2 * L * 4 * S * S * H
        other = 2 * (L * 2 * S * (4 * H * H + 2 * H * I) + 2 * H * H)  # layers + the pooler (first token)
        assert (row.attention_scores_flops, row.other_flops) == (scores, other)
        assert row.attention_share == scores / (scores + other)
        assert (row.weights, row.gradients, row.optimizer) == (4 * n, 4 * n, 8 * n)  # fp32 AdamW, exact
    assert df["activations"].iloc[1] > 4 * df["activations"].iloc[0]  # the S² attention maps
    fig = flops_vs_seq(df, 512)
    assert [t.name for t in fig.data[:2]] == ["weight matmuls (∝ S)", "attention scores (∝ S²)"]
    assert list(fig.data[1].y) == df["attention_scores_flops"].tolist()
    assert fig.data[2].text[1] == f"{100 * df['attention_share'].iloc[1]:.0f}%"
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.yref == "container" and fig.layout.legend.y == 0  # below the plot

    mixed = Workload(dtype="bf16", precision="mixed", checkpointing=True)
    by_b = workload_frame(cfg, mixed, "batch", (1, 4, 16))
    assert (by_b["optimizer"] == 12 * n).all() and by_b["activations"].is_monotonic_increasing
    mem = memory_vs_workload(by_b, "batch", 4)
    names = [t.name for t in mem.data if t.type == "bar"]
    assert names[0] == "weights" and names[2].startswith("optimizer (incl. fp32 master copy")
    assert names[3] == "activations (estimate, checkpointed)"
    assert mem.layout.title.text == "Training memory vs batch" and len(mem.layout.shapes) == 1  # B=4 outlined
    fb = flops_vs_batch(by_b, 4)
    per_seq = by_b["training_flops"][0]
    assert list(fb.data[0].y) == [per_seq, 4 * per_seq, 16 * per_seq]
    inference = workload_frame(cfg, Workload(dtype="int8"), "seq_len", (128,))
    assert memory_vs_workload(inference, "seq_len", 128).layout.title.text == "Inference memory vs sequence length"


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn", "none"])
def test_parameters_are_linear_in_depth_so_the_star_lies_on_the_swept_line(sharing):
    """The Scaling page sweeps fixed depths and adds the current L only outside them: that is exact only because
    the count is linear in L (constant when all-shared). Checked against count_params at every depth."""
    base = ModelConfig(sharing=sharing, num_hidden_groups=2 if sharing != "none" else 1, num_layers=4)
    counts = {L: count_params(base.replace(num_layers=L)).total for L in range(2, 65, 2)}
    slope = (counts[64] - counts[2]) / 62
    assert all(counts[L] == counts[2] + slope * (L - 2) for L in counts)
    assert (slope == 0) == (sharing == "all")
    assert count_params(fs.params_depth_key(base)).total == count_params(base).total
