"""Train-page figure builders on synthetic histories (the lab's history schema) and on a real tiny run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from albert_core.lab.baselines import Baselines
from ui.train import figures as ft

COLUMNS = ["step", "tokens", "elapsed_s", "lr", "train_mlm_loss", "train_order_loss", "val_mlm_loss",
           "val_mlm_acc", "val_order_acc", "tokens_per_s", "train_mlm_acc"]


def history(level: float, seed: int, steps: int = 20, eval_every: int = 5, task: str = "sop") -> pd.DataFrame:
    """A loss that decays from ln(300) towards ``level``, with seed noise; evaluated every few steps."""
    rng = np.random.default_rng(seed)
    step = np.arange(1, steps + 1)
    loss = level + (math.log(300) - level) * np.exp(-step / 6) + rng.normal(0, 0.02, steps)
    evaluated = step % eval_every == 0
    val = np.where(evaluated, loss + 0.1, np.nan)
    return pd.DataFrame({
        "step": step, "tokens": step * 256, "elapsed_s": step * 0.01, "lr": 1e-3,
        "train_mlm_loss": loss, "train_order_loss": 0.69, "val_mlm_loss": val,
        "val_mlm_acc": np.where(evaluated, 0.1 + step / 100, np.nan),
        "val_order_acc": np.where(evaluated, 0.5, np.nan) if task != "none" else np.nan,
        "tokens_per_s": 25_600.0, "train_mlm_acc": 0.05 + step / 100,
    })[COLUMNS]


def traces_named(fig, prefix: str):
    return [t for t in fig.data if (t.name or "").startswith(prefix)]


def test_seed_band_is_median_min_max_over_the_seeds_that_logged_a_step():
    a, b, c = (history(3.0, s) for s in (1, 2, 3))
    band = ft.seed_band([a, b, c], "val_mlm_loss")
    assert band["step"].tolist() == [5, 10, 15, 20]  # NaN rows (no evaluation) left out
    at10 = [h.loc[h.step == 10, "val_mlm_loss"].item() for h in (a, b, c)]
    row = band[band.step == 10].iloc[0]
    assert row["median"] == pytest.approx(sorted(at10)[1])
    assert row["lo"] == min(at10) and row["hi"] == max(at10) and row["n"] == 3
    # a seed still running (shorter history) counts only where it logged
    band = ft.seed_band([a, b.iloc[:12]], "val_mlm_loss")
    assert band.set_index("step")["n"].to_dict() == {5: 2, 10: 2, 15: 1, 20: 1}


def test_curves_one_seed_per_run_draw_lines_without_bands():
    groups = {"BERT": [history(3.0, 0)], "ALBERT": [history(3.5, 0)]}
    fig = ft.curves_figure(groups, "mlm_loss")
    names = [t.name for t in fig.data]
    assert names == ["BERT · validation", "BERT · training", "ALBERT · validation", "ALBERT · training"]
    assert not any(t.fill == "toself" for t in fig.data)
    val = fig.data[0]
    assert list(val.x) == [5, 10, 15, 20]
    assert list(val.y) == groups["BERT"][0]["val_mlm_loss"].dropna().tolist()
    train = fig.data[1]
    assert train.line.dash == "dot" and len(train.x) == 20
    assert fig.data[0].line.color == fig.data[1].line.color != fig.data[2].line.color  # one colour per run
    assert fig.layout.title.text == "MLM loss"
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0  # legend below the plot


def test_curves_several_seeds_draw_a_min_max_band_around_the_median():
    seeds = [history(3.0, s) for s in (0, 1, 2)]
    fig = ft.curves_figure({"ALBERT": seeds}, "mlm_loss")
    (band,) = [t for t in fig.data if t.fill == "toself"]
    expected = ft.seed_band(seeds, "val_mlm_loss")
    # the polygon goes along the maxima and back along the minima
    assert list(band.y) == [*expected["hi"], *expected["lo"][::-1]]
    assert list(band.x) == [*expected["step"], *expected["step"][::-1]]
    (median,) = traces_named(fig, "ALBERT · validation")
    values = np.array([s["val_mlm_loss"].dropna().to_numpy() for s in seeds])
    assert list(median.y) == pytest.approx(np.median(values, axis=0).tolist())


def test_accuracy_curves_plot_validation_solid_and_training_dotted():
    h = history(3.0, 0)
    fig = ft.curves_figure({"run": [h]}, "val_mlm_acc")
    val, train = fig.data
    assert val.name == "run · validation" and list(val.y) == h["val_mlm_acc"].dropna().tolist()
    assert train.name == "run · training" and list(train.y) == h["train_mlm_acc"].tolist()
    assert train.line.dash == "dot"
    # a history without the training column (older runs) still draws its validation curve
    assert [t.name for t in ft.curves_figure({"run": [h.drop(columns="train_mlm_acc")]}, "val_mlm_acc").data] == [
        "run · validation"]
    (order,) = ft.curves_figure({"run": [h]}, "val_order_acc").data
    assert order.name == "run" and list(order.y) == h["val_order_acc"].dropna().tolist()


def test_many_runs_can_leave_the_training_curves_out():
    groups = {f"run {i}": [history(3.0 + i / 10, 0)] for i in range(6)}
    fig = ft.curves_figure(groups, "mlm_loss", training=False)
    assert [t.name for t in fig.data] == list(groups)
    assert all(t.line.dash == "solid" for t in fig.data)
    assert fig.layout.title.text == "Validation MLM loss"


def test_mlm_only_run_has_no_sentence_task_curve():
    fig = ft.curves_figure({"mlm only": [history(3.0, 0, task="none")]}, "val_order_acc")
    assert not fig.data


def test_separation_marker_and_honest_not_separated_annotation():
    groups = {"A": [history(3.0, 0)], "B": [history(3.5, 0)]}
    fig = ft.curves_figure(groups, "mlm_loss", ft.Separation("A", "B", 10))
    assert [s.x0 for s in fig.layout.shapes if s.type == "line"] == [10]
    (mark,) = [a for a in fig.layout.annotations if "apart from step 10" in a.text]
    # written from the plot's left edge, not from the line: at the line it ran off a phone's plot
    assert (mark.xref, mark.x, mark.xanchor) == ("paper", 0, "left") and "A vs B<br>" in mark.text
    fig = ft.curves_figure(groups, "mlm_loss", ft.Separation("A", "B", None, "seed ranges overlap"))
    assert not fig.layout.shapes
    (note,) = fig.layout.annotations
    assert note.text == "A vs B: not separated yet (seed ranges overlap)"


BASE = Baselines(frequency_loss=6.02, frequency_acc=0.056, neighbour_loss=5.25, neighbour_acc=0.13, masked=3981,
                 order_majority=0.5, pairs=451)


@pytest.mark.parametrize(("metric", "levels"), [
    ("mlm_loss", [("frequency-only", 6.02), ("neighbour (bigram)", 5.25)]),
    ("val_mlm_acc", [("always the most frequent", 0.056), ("neighbour (bigram)", 0.13)]),
    ("val_order_acc", [("majority class", 0.5)]),
])
def test_every_chart_draws_the_baselines_it_must_beat(metric, levels):
    fig = ft.curves_figure({"A": [history(3.0, 0)]}, metric, baselines=BASE)
    assert [s.y0 for s in fig.layout.shapes] == [v for _, v in levels]
    texts = [a.text for a in fig.layout.annotations]
    assert texts == [f"{label} {value:.3g}" for label, value in levels]
    assert not any("ln V" in t or "uniform" in t for t in texts)  # a uniform guess is not a baseline


def test_bad_metric():
    with pytest.raises(ValueError, match="metric must be one of"):
        ft.curves_figure({}, "loss")


def test_cross_accuracy_heatmap_shows_the_matrix_as_percentages():
    m = pd.DataFrame([[0.9, 0.52], [0.79, 0.865]], index=["nsp", "sop"], columns=["nsp", "sop"])
    fig = ft.cross_accuracy_heatmap(m, "measured here")
    heat = fig.data[0]
    assert heat.type == "heatmap"
    assert list(heat.y) == ["trained NSP", "trained SOP"] and list(heat.x) == ["eval NSP", "eval SOP"]
    assert heat.z[0][1] == 0.52 and heat.text[1][1] == "86.5%"
    assert fig.layout.title.text == "measured here"
    m.iloc[0, 0] = np.nan
    assert ft.cross_accuracy_heatmap(m, "x").data[0].text[0][0] == "n/a"


def test_smoothness_runs_overlay_models_on_the_live_page_panels():
    a = pd.DataFrame({"layer": [1, 2, 3], "l2_distance": [5.0, 4.0, 3.0],
                      "cosine_similarity": [0.9, 0.95, 0.97], "angle_degrees": [25.0, 18.0, 14.0]})
    b = a.assign(l2_distance=[9.0, 1.0, 7.0], angle_degrees=[40.0, 5.0, 33.0])
    fig = ft.smoothness_runs({"BERT": a, "ALBERT": b})
    assert [t.name for t in fig.data] == ["BERT", "BERT", "ALBERT", "ALBERT"]
    assert [t.xaxis for t in fig.data] == ["x", "x2", "x", "x2"]  # L2 panel, angle panel
    assert list(fig.data[2].y) == [9.0, 1.0, 7.0] and list(fig.data[3].y) == [40.0, 5.0, 33.0]
    assert [t.showlegend for t in fig.data] == [True, False, True, False]
    assert fig.data[0].line.color != fig.data[2].line.color
    with pytest.raises(ValueError, match="at least one"):
        ft.smoothness_runs({})


def test_depth_dial_highlights_the_trained_depth():
    df = pd.DataFrame({"depth": [2, 4, 8], "val_mlm_loss": [4.1, 3.2, 3.9]})
    fig = ft.depth_dial_bars(df, trained_depth=4, baselines=BASE)
    bar = fig.data[0]
    assert list(bar.x) == ["L=2", "L=4 (trained)", "L=8"]
    assert list(bar.y) == [4.1, 3.2, 3.9]
    assert bar.marker.color[1] != bar.marker.color[0] == bar.marker.color[2]
    assert [s.y0 for s in fig.layout.shapes] == [6.02, 5.25]  # frequency-only and neighbour, not ln V


# ----------------------------------------------------------------------------- real tiny runs
@pytest.fixture(scope="module")
def real_runs():
    """Two seeds of a learning run (lr 1e-2) and two of a frozen one (lr 1e-9), 30 steps at H 32, L 2 (both start
    at the frequency-only model: the learning runs leave it within the first evaluations)."""
    import torch

    from albert_core.lab.spec import RunSpec
    from albert_core.lab.trainer import train

    torch.set_num_threads(1)
    from tests.helpers.lab import TINY as cfg
    runs = {}
    for label, lr in (("learning", 1e-2), ("frozen", 1e-9)):
        runs[label] = [train(RunSpec(cfg, task="sop", steps=30, batch_size=8, seq_len=32, seed=s, lr=lr, warmup=0,
                                     eval_every=6, tokenizer="unigram", max_ngram=3), threads=1).history
                       for s in (0, 1)]
    return runs


def test_real_histories_draw_validation_points_at_the_evaluation_steps(real_runs):
    fig = ft.curves_figure(real_runs, "mlm_loss")
    (val,) = traces_named(fig, "learning · validation")
    assert list(val.x) == [0, 6, 12, 18, 24, 30]  # evaluated at step 0, every 6 steps and at the end
    (train,) = traces_named(fig, "learning · training")
    assert list(train.x) == list(range(1, 31))  # step 0 has no training loss
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(bands) == 2  # two seeds each: one band per run


def test_real_runs_separate_and_identical_runs_do_not(real_runs):
    from ui.train import runs as tr

    sep = tr.separation(real_runs["learning"], real_runs["frozen"], "val_mlm_loss", "learning", "frozen")
    assert sep.step is not None
    # independent check: from that step on, the learning runs' worst loss is below the frozen runs' best
    for step in (6, 12, 18, 24, 30):
        if step < sep.step:
            continue
        worst = max(h.loc[h.step == step, "val_mlm_loss"].item() for h in real_runs["learning"])
        best = min(h.loc[h.step == step, "val_mlm_loss"].item() for h in real_runs["frozen"])
        assert worst < best
    fig = ft.curves_figure(real_runs, "mlm_loss", sep)
    assert [s.x0 for s in fig.layout.shapes if s.type == "line"] == [sep.step]

    same = tr.separation(real_runs["learning"], real_runs["learning"], "val_mlm_loss", "A", "B")
    assert same.step is None and same.note == "the seed ranges overlap"
    one = tr.separation(real_runs["learning"][:1], real_runs["frozen"][:1], "val_mlm_loss", "A", "B")
    assert one.step is None and "needs 2 seeds or more a side" in one.note
    fig = ft.curves_figure(real_runs, "mlm_loss", same)
    assert "not separated yet" in fig.layout.annotations[0].text


def test_smoothing_is_tensorboards_debiased_ema_with_the_raw_curve_kept_faint():
    assert ft.ema([1.0, 3.0], 0.5) == pytest.approx([1.0, (0.25 + 1.5) / 0.75])  # by hand
    assert ft.ema([2.0, 5.0, 1.0], 0.0) == [2.0, 5.0, 1.0]
    with pytest.raises(ValueError, match="smoothing must be between 0 and 0.99"):
        ft.ema([1.0], 1.0)
    h = history(3.0, 0)
    fig = ft.curves_figure({"ALBERT": [h]}, "mlm_loss", smoothing=0.9)
    raw = [t for t in fig.data if t.name == "ALBERT · training · raw"]
    smooth = [t for t in fig.data if t.name == "ALBERT · training"]
    assert len(raw) == len(smooth) == 1 and raw[0].opacity == 0.3 and raw[0].showlegend is False
    assert list(raw[0].y) == h["train_mlm_loss"].tolist()
    assert list(smooth[0].y) == pytest.approx(ft.ema(h["train_mlm_loss"].tolist(), 0.9))
    assert [c[1] for c in smooth[0].customdata] == pytest.approx(h["train_mlm_loss"].tolist())  # hover: raw value
    val = next(t for t in fig.data if t.name == "ALBERT · validation")  # read beside the baselines: as measured
    assert list(val.y) == h["val_mlm_loss"].dropna().tolist() and not [t for t in fig.data if t.name == "ALBERT · validation · raw"]


def test_x_by_tokens_or_wall_time_and_log_axes():
    a, b = history(3.0, 0), history(3.0, 1)
    b["elapsed_s"] = a["elapsed_s"] * 3
    fig = ft.curves_figure({"ALBERT": [a, b]}, "mlm_loss", x="tokens", log_y=True, log_x=True)
    val = next(t for t in fig.data if t.name == "ALBERT · validation")
    steps = a.dropna(subset=["val_mlm_loss"])["step"].tolist()
    assert list(val.x) == [float(a.loc[a.step == s, "tokens"].item()) for s in steps]
    assert fig.layout.xaxis.title.text == "token positions seen"
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.type == "log"
    fig = ft.curves_figure({"ALBERT": [a, b]}, "mlm_loss", x="elapsed_s")
    val = next(t for t in fig.data if t.name == "ALBERT · validation")
    at = a.set_index("step")["elapsed_s"]
    assert list(val.x) == pytest.approx([2 * at[s] for s in steps])  # the median of 1x and 3x
    with pytest.raises(ValueError, match="x must be one of"):
        ft.curves_figure({"ALBERT": [a]}, "mlm_loss", x="epoch")


def test_table3_variants_get_a_colour_per_family_and_size_and_a_dash_per_sharing():
    from albert_core.lab.experiments import EXPERIMENTS

    specs = EXPERIMENTS["table3"].specs(seeds=(0,))
    styles = ft.variant_styles({s.label: s.config for s in specs})
    assert len(set(styles.values())) == len(specs)  # every variant tells apart
    for s in specs:
        color, dash = styles[s.label]
        assert dash == ("solid" if s.config.sharing == "none" else "dash")
        assert (color == ft.BERT_LINE) == (s.config.family == "bert")
    same_e = {}
    for s in specs:
        same_e.setdefault((s.config.family, s.config.embedding_size), set()).add(styles[s.label][0])
    assert all(len(colors) == 1 for colors in same_e.values())
    fig = ft.curves_figure({s.label: [history(3.0, 0)] for s in specs}, "mlm_loss", styles=styles)
    val = next(t for t in fig.data if t.name == f"{specs[0].label} · validation")
    assert (val.line.color, val.line.dash) == styles[specs[0].label]
