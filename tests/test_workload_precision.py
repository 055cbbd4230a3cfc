"""Mixed precision and gradient checkpointing in the Workload: validation, URL keys, results, sidebar."""

from __future__ import annotations

import json

import pytest

from albert_core import PRESETS, Workload
from albert_core.counting.report import analyze
from tests.helpers.app import charts
from tests.helpers.facts import MODEL_COUNTS
from ui.urls import parse_workload_query, workload_to_query


@pytest.mark.parametrize("changes, field", [
    ({"precision": "mixed"}, "precision"),  # fp32 cannot be the compute dtype of mixed precision
    ({"precision": "half"}, "precision"),
    ({"checkpointing": "yes"}, "checkpointing"),
    ({"checkpointing": True, "dtype": "int8"}, "checkpointing"),
])
def test_bad_precision_or_checkpointing_names_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        Workload(**changes)


def test_url_keys_round_trip_and_reset_what_cannot_be():
    wl = Workload(dtype="bf16", precision="mixed", checkpointing=True)
    query = workload_to_query(wl)
    assert query["prec"] == "mixed" and query["ckpt"] == "1"
    assert parse_workload_query(query) == (wl, [])
    got, problems = parse_workload_query({"prec": "mixed", "ckpt": "1"})  # dtype fp32 (default)
    assert got == Workload(checkpointing=True)
    assert len(problems) == 1 and "prec=mixed reset to pure" in problems[0] and "fp16 or bf16" in problems[0]
    got, problems = parse_workload_query({"ckpt": "maybe"})
    assert got == Workload() and "ckpt" in problems[0]


def test_results_use_the_workload_precision_and_checkpointing():
    n = MODEL_COUNTS["bert-base"]
    cfg = PRESETS["bert-base"]
    res = analyze(cfg, Workload(batch=8, seq_len=128, dtype="bf16", precision="mixed", checkpointing=True))
    mem = res.own.training_memory
    # mixed AdamW: bf16 weights and gradients, fp32 master copy + two fp32 moments = 16 bytes per parameter
    assert (mem.weights, mem.gradients, mem.optimizer, mem.master_weights) == (2 * n, 2 * n, 12 * n, 4 * n)
    assert mem.checkpointing and "fp32 master copy" in mem.part_labels()["optimizer"]
    assert "estimate" in mem.part_labels()["activations"]
    # the recomputed forward of the 12 encoder layers: 2*S*(4H^2 + 2HI) + 4*S^2*H per layer, batch 8
    S, H, I = 128, 768, 3072  # noqa: E741
    layer = 2 * S * (4 * H * H + 2 * H * I) + 4 * S * S * H
    assert res.own.flops_batch.recomputed == 8 * 12 * layer
    plain = analyze(cfg, Workload(batch=8, seq_len=128, dtype="bf16"))
    assert plain.own.training_memory.optimizer == 2 * 2 * n  # pure bf16: two bf16 moments
    assert mem.activations < plain.own.training_memory.activations
    assert res.own.inference_memory.total == plain.own.inference_memory.total  # training-only settings
    rep = json.loads(res.to_json())
    assert rep["workload"]["precision"] == "mixed" and rep["memory"]["master_weights"] == 4 * n
    assert rep["flops"]["recomputed_per_batch"] == 8 * 12 * layer


def test_sidebar_precision_needs_a_16_bit_dtype(app):
    at = app()
    assert at.selectbox(key="wl_prec").disabled and at.query_params["prec"] == "pure"
    at.selectbox(key="wl_dtype").set_value("bf16").run()
    at.selectbox(key="wl_prec").set_value("mixed").run()
    at.toggle(key="wl_ckpt").set_value(True).run()
    assert not at.exception and not at.error
    assert at.query_params["prec"] == "mixed" and at.query_params["ckpt"] == "1"
    n = MODEL_COUNTS["albert-base"]
    help_text = next(m for m in at.metric if m.label == "Training memory").help
    assert "fp32 master copy 46.7 MB" in help_text and f"{4 * n / 1e6:.1f} MB" == "46.7 MB"
    at.selectbox(key="wl_dtype").set_value("fp32").run()  # mixed needs fp16/bf16: back to pure
    assert not at.error and at.query_params["prec"] == "pure" and at.selectbox(key="wl_prec").disabled


def test_scaling_memory_chart_names_the_master_copy(app):
    at = app({"dtype": "fp16", "prec": "mixed"}, page="ui/scaling/page.py")
    assert not at.exception
    spec = next(s for t, s in charts(at).items() if t == "Training memory by part")
    names = [d.get("name", "") for d in spec["data"]]
    assert any(n.startswith("optimizer (incl. fp32 master copy") for n in names)
    assert "activations (estimate)" in names
