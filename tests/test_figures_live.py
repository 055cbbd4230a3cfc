"""Live-page figure builders and the analytic-vs-live count table."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from albert_core import ModelConfig, count_params, settings
from albert_core.live.analysis import layer_smoothness
from albert_core.live.count_proof import MATCH, MISMATCH, live_counts, match_table
from albert_core.live.model import build_model
from ui.live import figures as fl
from ui.live import models as live_models
from ui.live import runs as live_runs
from ui.live import text as live_text

TINY = dict(vocab_size=97, embedding_size=16, hidden_size=32, num_heads=4, intermediate_size=64,
            max_position_embeddings=64)


@pytest.mark.parametrize("layers, dtick", [(3, 1), (6, 1), (12, 2), (24, 4), (25, 5)])
def test_smoothness_figure_keeps_at_most_six_layer_ticks_a_panel(layers, dtick):
    # two panels side by side on a 390 px phone had 13 tick labels each, run together
    h = [torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(i)) for i in range(layers + 1)]
    fig = fl.smoothness_figure(layer_smoothness(h))
    assert fig.layout.xaxis.dtick == fig.layout.xaxis2.dtick == dtick
    assert layers / dtick <= 6


def test_smoothness_figure_plots_l2_and_angle_per_layer():
    h = [torch.randn(1, 5, 8, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    df = layer_smoothness(h)
    fig = fl.smoothness_figure(df)
    l2, angle = fig.data
    assert l2.type == angle.type == "scatter"
    assert list(l2.x) == [1, 2, 3]
    # independent oracle: layer 1's mean per-token L2 distance and angle between its input and output
    x, y = h[0][0].double(), h[1][0].double()
    assert l2.y[0] == pytest.approx((y - x).norm(dim=-1).mean().item())
    cos = torch.nn.functional.cosine_similarity(x, y, dim=-1)
    assert angle.y[0] == pytest.approx(torch.rad2deg(torch.arccos(cos)).mean().item())
    assert list(angle.customdata) == pytest.approx(list(df["cosine_similarity"]))
    assert l2.xaxis == "x" and angle.xaxis == "x2"  # two panels, as the paper's Figure 2


def test_attention_heatmap_shows_the_given_weights():
    w = np.array([[0.5, 0.5, 0.0], [0.1, 0.8, 0.1], [0.0, 0.0, 1.0]])
    labels = ["0 [CLS]", "1 hi", "2 [SEP]"]
    fig = fl.attention_heatmap(w, labels, layer=2, head=0)
    heat = fig.data[0]
    assert heat.type == "heatmap"
    assert np.array(heat.z).tolist() == w.tolist()
    assert list(heat.x) == labels and list(heat.y) == labels
    assert fig.layout.yaxis.autorange == "reversed"  # first query token on top
    assert "layer 3, head 1" in fig.layout.title.text


def test_activation_bars():
    fig = fl.activation_bars(1_000, 3_000)
    bar = fig.data[0]
    assert bar.type == "bar" and list(bar.y) == [1_000, 3_000]
    assert list(bar.text) == ["1.0 kB", "3.0 kB"]
    # the axis speaks bytes like the labels ("50 MB"), not Plotly's "50M" under a "bytes" title
    big = fl.activation_bars(25_600_000, 45_600_000).layout.yaxis
    assert "50 MB" in big.ticktext and big.tickvals[big.ticktext.index("50 MB")] == 50_000_000


def test_tokens_frame_one_row_per_token():
    from albert_core.text.encoding import encode

    cfg = ModelConfig(**TINY)
    enc = encode("hello world", cfg, 32, "again")
    df = live_text.tokens_frame(enc)
    assert list(df.columns) == ["token", "id", "segment"] and len(df) == len(enc)
    assert df["token"].tolist() == list(enc.tokens) and df["id"].tolist() == [int(i) for i in enc.ids]
    sep = df["token"].tolist().index("[SEP]")
    assert set(df["segment"][: sep + 1]) == {"A"} and set(df["segment"][sep + 1:]) == {"B"}


def test_set_torch_threads_applies_the_per_process_setting(monkeypatch):
    from albert_core.settings import DEFAULT_TORCH_THREADS, TORCH_THREADS

    before = torch.get_num_threads()
    try:
        monkeypatch.delenv(TORCH_THREADS, raising=False)
        torch.set_num_threads(2)
        # change detector on DEFAULT_TORCH_THREADS: the 1 docs/deploy.md states (a second thread mostly waits)
        assert live_runs.set_torch_threads() == DEFAULT_TORCH_THREADS == torch.get_num_threads() == 1
        monkeypatch.setenv(TORCH_THREADS, "2")
        assert live_runs.set_torch_threads() == 2 == torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("changes", [
    dict(sharing="all"),
    dict(sharing="none", head="pretraining"),
    dict(sharing="attention", num_layers=4, num_hidden_groups=2, inner_group_num=2, head="masked-lm"),
    dict(sharing="ffn", num_layers=3, inner_group_num=2, head="pretraining", tie_word_embeddings=False),
    dict(family="bert", sharing="none", head="pretraining"),
])
def test_match_table_all_marks_on_meta_models(changes):
    cfg = ModelConfig(**TINY).replace(**changes)
    model = build_model(cfg, "meta")
    table = match_table(count_params(cfg), live_counts(model))
    assert (table["match"] == MATCH).all()
    total = table.iloc[-1]
    assert total["component"] == "total"
    assert total["live"] == sum(p.numel() for p in model.parameters())  # independent of the grouping


def test_match_table_marks_a_mismatch():
    cfg = ModelConfig(**TINY)
    counts = live_counts(build_model(cfg, "meta"))
    counts["pooler"] += 1
    counts["extra.module"] = 5
    table = match_table(count_params(cfg), counts).set_index("component")
    assert table.loc["pooler", "match"] == MISMATCH
    assert table.loc["extra.module", "match"] == MISMATCH
    assert pd.isna(table.loc["extra.module", "analytic"])
    assert table.loc["total", "match"] == MISMATCH
    assert MATCH != MISMATCH and (MATCH + MISMATCH).isascii()  # the reason, not the strings: no emoji font needed
    assert table.loc["embeddings.word_embeddings", "match"] == MATCH


def test_environment_switches(monkeypatch, tmp_path):
    monkeypatch.delenv(settings.CHECKPOINT_ROOTS, raising=False)
    monkeypatch.delenv(settings.ALLOW_HUB, raising=False)
    assert settings.checkpoint_roots() == [] and not settings.hub_allowed()
    monkeypatch.setenv(settings.CHECKPOINT_ROOTS, f"{tmp_path}{os.pathsep}{os.pathsep}/srv/models")
    assert settings.checkpoint_roots() == [tmp_path, Path("/srv/models")]
    monkeypatch.setenv(settings.ALLOW_HUB, "1")
    assert settings.hub_allowed()


@pytest.mark.parametrize("bad", ["", "../etc", "a/b/c", "x" * 200, "owner/na me", "/abs/path", "a/..", "-x/y"])
def test_check_hub_id_rejects(bad):
    with pytest.raises(ValueError, match="hub id"):
        live_models.check_hub_id(bad)


def test_check_hub_id_accepts():
    assert live_models.check_hub_id(" albert/albert-base-v2 ") == "albert/albert-base-v2"


def test_attention_takeaway_prints_peak_and_uniform_alike():
    T = 43
    weights = np.full((T, T), 1 / T)
    weights[5] = (1 - 0.0241) / (T - 1)
    weights[5, 0] = 0.0241  # the sharpest weight, just above uniform 1/43 = 0.02326
    text = fl.attention_takeaway(weights, [f"t{i}" for i in range(T)])
    assert "t5 attends most sharply (0.024 on one key)" in text and "1/43 = 0.023." in text
    assert fl.same_decimals(0.02331, 0.02326) == ["0.02331", "0.02326"]  # more decimals to tell them apart
