"""`python -m albert_core quality`: the record with every field, a preset's figures with its exact cost, and the
one-line errors."""

from __future__ import annotations

from albert_core.quality import FIGURES
from tests.helpers.cli import fails, run, run_json
from tests.helpers.facts import MODEL_COUNTS

FIELDS = {"model", "preset", "metric", "value", "split", "aggregation", "fine_tuned_by", "training", "source",
          "protocol", "computed", "note"}


def test_quality_json_lists_every_figure_with_every_field(capsys):
    data = run_json(capsys, "quality")
    figs = data["figures"]
    assert len(figs) == len(FIGURES)
    assert len({f["preset"] for f in figs if f["preset"]}) >= 25
    for f in figs:
        assert set(f) == FIELDS
        assert all(f[k] not in (None, "") for k in FIELDS - {"preset", "note"}), f
    assert {"albert-t2", "modernbert"} <= set(data["protocols"]) and "glue" in data["metrics"]
    modernbert = next(c for c in data["training_compute"] if c["model"] == "ModernBERT-base")
    assert round(modernbert["device_hours"]) == 1965 and modernbert["device"] == "H100"
    assert "cost" not in data


def test_quality_of_a_preset_with_its_cost(capsys):
    data = run_json(capsys, "quality", "--preset", "albert-xxlarge", "--metric", "albert-avg")
    assert data["cost"]["params"] == MODEL_COUNTS["albert-xxlarge"]
    assert data["cost"]["forward_flops_per_token"] > 4.9e9 and data["cost"]["seq_len"] == 512
    values = {(f["model"], f["protocol"]): f["value"] for f in data["figures"]}
    assert values == {("ALBERT-xxlarge", "albert-t2"): 88.7, ("ALBERT-xxlarge (125k steps)", "albert-t6"): 88.7,
                      ("ALBERT-xxlarge v2", "albert-readme"): 90.9,
                      ("ALBERT-xxlarge v1 (1.5M steps)", "albert-readme"): 91.0}
    text = run(capsys, "quality", "--preset", "ettin-encoder-150m", "--protocol", "mmbert")
    assert "149.01M parameters" in text and "ModernBERT-base" in text and "87.4" in text  # one architecture
    text = run(capsys, "quality", "--preset", "eurobert-2.1b")
    assert "No published figure" in text and "none is estimated" in text


def test_quality_bad_options(capsys):
    assert "preset must be one of" in fails(capsys, "quality", "--preset", "nope")
    assert "metric must be one of" in fails(capsys, "quality", "--metric", "accuracy")
    assert "protocol must be one of" in fails(capsys, "quality", "--protocol", "mine")
