"""The Scaling page's data and takeaway numbers (ui/scaling/figures frames, ui/scaling/takeaways), against
exact counts of configs built here, the vectorized sweep, closed forms and hand-computed ratios; and the
cheap current-config marks (`with_marks`) against Plotly's own validated way of adding them."""

from __future__ import annotations

import copy

import pandas as pd
import plotly.graph_objects as go
import pytest

from albert_core import PRESETS, ModelConfig, count_flops, count_params
from albert_core.configuration.coerce import bert_twin
from albert_core.counting.sweeps import sweep
from tests.helpers.facts import MODEL_COUNTS
from ui.scaling import figures as fs
from ui.scaling import takeaways as tk

ALBERT_BASE = MODEL_COUNTS["albert-base"]  # transformers' AlbertModel(albert-base-v2 config), exact
BERT_LARGE, ALBERT_XXLARGE = MODEL_COUNTS["bert-large"], MODEL_COUNTS["albert-xxlarge"]


def test_hidden_frame_counts_the_config_and_its_twin_with_i_following_h():
    cfg = ModelConfig()  # ALBERT-base: I = 4H
    df, note = fs.hidden_frame(cfg, (768, 1024))
    assert note == "I = 4H"
    got = {(m, h): p for m, h, p in df.itertuples(index=False)}
    assert got[("ALBERT", 768)] == ALBERT_BASE
    wide = ModelConfig(hidden_size=1024, num_heads=16, intermediate_size=4096)
    assert got[("ALBERT", 1024)] == count_params(wide).total
    assert got[("BERT", 1024)] == count_params(ModelConfig(family="bert", sharing="none", hidden_size=1024, num_heads=16,
                                                           intermediate_size=4096)).total


def test_hidden_frame_keeps_a_fixed_i_and_a_bert_has_no_albert_rows():
    cfg = ModelConfig(family="bert", sharing="none", intermediate_size=2000)
    df, note = fs.hidden_frame(cfg, (256, 768))
    assert note == "I = 2,000" and set(df["model"]) == {"BERT"}
    assert list(df["params"]) == [count_params(ModelConfig(family="bert", sharing="none", hidden_size=h, num_heads=4,
                                                           intermediate_size=2000)).total for h in (256, 768)]


def test_heatmap_frame_equals_the_vectorized_sweep():
    cfg = ModelConfig(sharing="attention", num_layers=6)
    es, hs = (64, 128, 512), (256, 768)
    df = fs.heatmap_frame(cfg, es, hs)
    for e in es:  # the sweep is another code path (numpy columns) over the same formulas
        ref = sweep(cfg.replace(num_heads=1, embedding_size=e), "hidden_size", list(hs), "intermediate_size",
                    [4 * h for h in hs], include_bert=False)
        ref = ref[ref["intermediate_size"] == 4 * ref["hidden_size"]]
        assert list(df[df["embedding_size"] == e]["params"]) == list(ref["params"])
    assert df.set_index(["embedding_size", "hidden_size"]).loc[(128, 768), "params"] == count_params(cfg).total


# Configs that differ from ALBERT-base in one field the grids do not set themselves (V, L, sharing, G, the head,
# tying, I off 4H, the family): the remembered cells of one must never answer for another.
NEIGHBOURS = [ModelConfig(), ModelConfig(vocab_size=50_000), ModelConfig(num_layers=24), ModelConfig(sharing="ffn"),
              ModelConfig(sharing="attention", num_layers=12, num_hidden_groups=2), ModelConfig(head="pretraining"),
              ModelConfig(tie_word_embeddings=False), ModelConfig(intermediate_size=2000),
              ModelConfig(embedding_size=256), ModelConfig(family="bert", sharing="none")]


def test_the_grids_remembered_cells_answer_only_for_the_same_config():
    hs, es = (256, 768, 832), (64, 128)
    for _ in range(2):  # the second round answers from the remembered cells
        for cfg in NEIGHBOURS:
            i_follows = cfg.intermediate_size == 4 * cfg.hidden_size
            df, _ = fs.hidden_frame(cfg, hs)
            at = [cfg.replace(num_heads=1, hidden_size=h, **({"intermediate_size": 4 * h} if i_follows else {}))
                  for h in hs]
            ours = [count_params(c).total for c in at]
            assert list(df[df["model"] == ("ALBERT" if cfg.family == "albert" else "BERT")]["params"]) == ours, cfg
            if cfg.family == "albert":
                heat = fs.heatmap_frame(cfg, es, hs)
                want = [count_params(cfg.replace(embedding_size=e, num_heads=1, hidden_size=h,
                                                 **({"intermediate_size": 4 * h} if i_follows else {}))).total
                        for e in es for h in hs]
                assert list(heat["params"]) == want, cfg


def test_any_depth_leaves_a_layer_sweep_and_the_embedding_counts_unchanged():
    cfg = ModelConfig(num_layers=24, num_hidden_groups=2, sharing="ffn")
    base = fs.any_depth(cfg)
    assert base.num_layers == 2 and base.replace(num_layers=24) == cfg
    a = sweep(cfg, "num_layers", [2, 4, 12])
    b = sweep(base, "num_layers", [2, 4, 12])
    pd.testing.assert_frame_equal(a, b)
    emb = sweep(base, "vocab_size", [1000, 30_000])["embedding_params"].tolist()
    assert emb == sweep(cfg, "vocab_size", [1000, 30_000])["embedding_params"].tolist()


def test_current_point_is_the_exact_count_and_the_closed_form_forward():
    cfg = PRESETS["bert-base"].replace(head="model")
    point = fs.current_point(cfg, 128)
    S, H, FF = 128, 768, 3072  # L*(8SH^2 + 4S^2H + 4SHI) + 2H^2 (pooler), matmul FLOPs
    assert point == {"label": cfg.label, "params": MODEL_COUNTS["bert-base"],
                     "forward_flops": 12 * (8 * S * H * H + 4 * S * S * H + 4 * S * H * FF) + 2 * H * H}


def test_memory_frame_has_one_row_per_estimate():
    from albert_core import estimate_memory

    a, b = estimate_memory(ModelConfig(), 2, 64), estimate_memory(bert_twin(ModelConfig()), 2, 64)
    df = fs.memory_frame({"mine": a, "twin": b})
    assert list(df["label"]) == ["mine", "twin"]
    assert df.iloc[1]["total"] == b.total and df.iloc[0]["activations"] == a.activations


def test_albert_share_is_the_ratio_at_that_size_or_none():
    df = pd.DataFrame({"model": ["ALBERT", "BERT", "ALBERT", "BERT"], "hidden_size": [768, 768, 1024, 1024],
                       "params": [12, 108, 18, 36]})
    assert tk.albert_share(df, 768) == pytest.approx(1 / 9)
    assert tk.albert_share(df, 1024) == 0.5
    assert tk.albert_share(df[df["model"] == "BERT"], 768) is None
    assert tk.albert_share(df, 512) is None


def test_preset_ratios_from_the_exact_counts():
    params, flops = tk.preset_ratios(fs.presets_frame(PRESETS, 128))
    assert params == pytest.approx(ALBERT_XXLARGE / BERT_LARGE)
    forward = {n: count_flops(PRESETS[n].replace(head="model"), 1, 128).forward for n in ("albert-xxlarge",
                                                                                       "bert-large")}
    assert flops == pytest.approx(forward["albert-xxlarge"] / forward["bert-large"])


def test_grid_span_reads_the_ends_along_the_cells_row_and_column():
    rows = [(e, h, 1000 * e + h) for e in (32, 128, 512) for h in (256, 768, 4096)]
    df = pd.DataFrame(rows, columns=["embedding_size", "hidden_size", "params"])
    g = tk.grid_span(df, 128, 768)
    assert (g.e_lo, g.e_hi, g.h_lo, g.h_hi) == (32, 512, 256, 4096)
    assert (g.at_h_e_lo, g.at_h_e_hi) == (32_768, 512_768)
    assert (g.at_e_h_lo, g.at_e_h_hi) == (128_256, 132_096)


def test_sharing_savings_are_eleven_blocks_of_albert_base():
    attention, ffn = tk.sharing_savings(fs.table4_frame(), 128)
    H, I = 768, 3072  # noqa: E741
    # 12 layers share one block: 11 copies fewer. Attention: Q, K, V, output (4H^2 + 4H), LayerNorm (2H);
    # feed-forward: two linears (2HI + I + H), LayerNorm (2H).
    assert attention == 11 * (4 * H * H + 4 * H + 2 * H) == 26_002_944
    assert ffn == 11 * (2 * H * I + I + H + 2 * H) == 51_963_648


def test_seq_span_and_per_sequence_from_the_first_and_last_rows():
    by_seq = pd.DataFrame({"seq_len": [64, 128, 512], "attention_share": [0.1, 0.2, 0.4],
                           "activations": [100, 200, 900]})
    s = tk.seq_span(by_seq)
    assert (s.seq_lo, s.seq_hi, s.attention_share_lo, s.attention_share_hi) == (64, 512, 0.1, 0.4)
    assert (s.activations_lo, s.activations_hi) == (100, 900)
    by_batch = pd.DataFrame({"batch": [4, 8], "activations": [400, 800], "total": [1400, 1800],
                             "training_flops": [40, 80]})
    one = tk.per_sequence(by_batch)
    assert (one.activations, one.fixed, one.training_flops) == (100, 1000, 10)


def test_with_marks_equals_adding_them_the_validated_way_and_leaves_the_base_alone():
    df = sweep(ModelConfig(), "num_layers", [1, 2, 12])
    base = fs.params_vs_layers_base(df)
    before = copy.deepcopy(base.to_dict())
    star = go.Scatter(x=[12], y=[ALBERT_BASE], mode="markers", name="current config")
    shape = dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=5, y1=5, line=dict(dash="dot"))
    axes = {"yaxis": dict(tickvals=[0, 1e7], ticktext=["0", "10M"], range=[0, 2e7])}
    fast = fs.with_marks(base, [star], [shape], axes)

    slow = go.Figure(base)  # Plotly's validated path: a copy, then one addition at a time
    slow.add_trace(star)
    slow.add_shape(**shape)
    slow.update_yaxes(**axes["yaxis"])
    assert fast.to_dict() == slow.to_dict()
    assert fast.layout.yaxis.title.text == "parameters"  # the base's other axis settings are kept
    assert base.to_dict() == before


def test_mark_params_heatmap_outlines_only_a_cell_in_the_grid():
    cfg = ModelConfig(num_heads=1)
    base = fs.params_heatmap_base(fs.heatmap_frame(cfg, (64, 128), (256, 768)))
    marked = fs.mark_params_heatmap(base, cfg)
    (cell,) = [t for t in marked.data if t.name == fs.CURRENT_NAME]
    assert (cell.x, cell.y) == (("128",), ("768",)) and "11.68M" in cell.hovertemplate
    assert fs.mark_params_heatmap(base, cfg.replace(embedding_size=256)) is base
