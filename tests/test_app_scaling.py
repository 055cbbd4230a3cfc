"""AppTest of the Scaling page: loads for every preset, the current config is starred at its exact
count, and a config or workload change updates the numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from albert_core import PRESETS, ModelConfig, Workload, count_flops, count_params, estimate_memory
from albert_core.format import fmt_params
from tests.helpers.app import charts
from tests.helpers.facts import MODEL_COUNTS
from ui.state import CONFIG_KEY, WORKLOAD_KEY
from ui.urls import config_to_query

PAGE = str(Path(__file__).resolve().parents[1] / "ui" / "scaling" / "page.py")
N_CHARTS = 12  # 8 over the architecture, 4 over sequence length and batch (and the LoRA chart where one fits)


def n_charts(cfg: ModelConfig) -> int:
    """The charts the page draws for a config of BERT or ALBERT: the LoRA chart too when it can carry a LoRA."""
    return N_CHARTS + (cfg.family == "albert")


def run_page(cfg: ModelConfig, wl: Workload | None = None, at: AppTest | None = None) -> AppTest:
    at = at or AppTest.from_file(PAGE, default_timeout=60)
    at.session_state[CONFIG_KEY] = cfg
    at.session_state[WORKLOAD_KEY] = wl or Workload()
    return at.run()


def star(spec: dict) -> tuple:
    (t,) = [t for t in spec["data"] if t.get("name") == "current config"]
    return t["x"][0], t["y"][0]


def trace_y(spec: dict, name: str) -> list:
    (t,) = [t for t in spec["data"] if t.get("name") == name]
    return t["y"]


def test_page_reads_the_sidebar_config_from_the_url(app):
    cfg = PRESETS["albert-large"]
    at = app(query=config_to_query(cfg), page="ui/scaling/page.py")
    assert not at.exception
    assert [t.value for t in at.title] == ["Scaling"]
    specs = charts(at)
    assert len(specs) == n_charts(cfg)
    assert star(specs["Parameters vs hidden size H"]) == (1024, MODEL_COUNTS["albert-large"])


@pytest.mark.parametrize("name", ["default", *PRESETS])
def test_each_preset_loads_with_its_exact_count_starred(name):
    cfg = ModelConfig() if name == "default" else PRESETS[name]
    at = run_page(cfg)
    assert not at.exception
    specs = charts(at)
    assert len(specs) == n_charts(cfg)
    total = count_params(cfg).total
    assert star(specs["Parameters vs hidden size H"]) == (cfg.hidden_size, total)
    assert star(specs["Parameters vs number of layers L"]) == (cfg.num_layers, total)
    assert fmt_params(total) in at.caption[0].value
    assert sum("Takeaway" in c.value for c in at.caption) == n_charts(cfg)


def test_config_change_updates_the_numbers():
    at = run_page(ModelConfig())
    before = charts(at)
    cfg = ModelConfig(hidden_size=1024, num_heads=16, intermediate_size=4096, sharing="ffn", num_layers=6)
    run_page(cfg, at=at)
    after = charts(at)
    total = count_params(cfg).total
    assert star(after["Parameters vs hidden size H"]) == (1024, total)
    assert star(before["Parameters vs hidden size H"]) == (768, MODEL_COUNTS["albert-base"])
    # shared-FFN: the attention block is held once per layer, so params grow with L
    albert_l = trace_y(after["Parameters vs number of layers L"], "ALBERT")
    assert albert_l == sorted(albert_l) and albert_l[0] < albert_l[-1]
    assert fmt_params(total) in at.caption[0].value


def test_workload_changes_memory_bars_not_params():
    cfg = ModelConfig()
    at = run_page(cfg, Workload(batch=8, seq_len=128))
    title = "Training memory by part"
    small = charts(at)[title]
    run_page(cfg, Workload(batch=32, seq_len=128), at=at)
    big = charts(at)[title]
    assert trace_y(small, "weights") == trace_y(big, "weights")
    m = estimate_memory(cfg, 32, 128, "fp32", "adamw", dropout=0.0)
    assert trace_y(big, "activations (estimate)")[0] == m.activations
    assert trace_y(big, "activations (estimate)")[0] > trace_y(small, "activations (estimate)")[0]
    assert star(charts(at)["Parameters vs hidden size H"])[1] == MODEL_COUNTS["albert-base"]


def test_int8_workload_shows_inference_memory():
    at = run_page(ModelConfig(), Workload(dtype="int8", optimizer="none"))
    assert not at.exception
    spec = charts(at)["Inference memory by part"]  # titled for what it shows
    assert spec["layout"]["yaxis"]["title"]["text"] == "inference memory"
    assert trace_y(spec, "gradients") == [0, 0]
    assert trace_y(spec, "weights")[0] == MODEL_COUNTS["albert-base"]  # one byte per weight
    assert any("inference-only" in c.value for c in at.caption)


def test_bert_config_shows_factorized_form_in_heatmap():
    at = run_page(PRESETS["bert-base"])
    specs = charts(at)
    heat = specs["Total parameters over E and H"]
    assert "current config" not in [t.get("name") for t in heat["data"]]
    assert any("factorized form" in c.value for c in at.caption)
    assert star(specs["Embedding parameters vs vocabulary size V"]) == (
        30_522, count_params(PRESETS["bert-base"]).group_totals()["embeddings"]
    )


def test_heatmap_takeaway_quotes_the_grid_numbers():
    cfg = PRESETS["albert-base"]
    at = run_page(cfg)
    (text,) = [c.value for c in at.caption if "E from" in c.value]
    lo, hi = (count_params(cfg.replace(embedding_size=e)).total for e in (32, 1024))
    top = count_params(cfg.replace(hidden_size=4096, num_heads=16, intermediate_size=4 * 4096)).total
    assert f"takes the total from {fmt_params(lo)} to {fmt_params(hi)}" in text
    assert f"to {fmt_params(top)}:" in text  # H = 4,096 at E = 128, I = 4H


def test_the_largest_sizes_draw_every_chart_with_counts_past_2_to_the_63(app):
    """Issue 39, item 3: training FLOPs and memory past 2^63 at the largest sizes; Plotly's JSON writer holds no
    integer that large, so the charts get them as floats (every chart drawn, no exception)."""
    from tests.test_app_explorer import LARGEST, LARGEST_QUERY

    at = app(LARGEST_QUERY, page=PAGE)
    assert not at.exception, at.exception
    specs = charts(at)
    assert len(specs) == N_CHARTS + 1
    by_batch = specs["Training FLOPs per step vs batch"]
    bars = by_batch["data"][0]  # then the outline's legend key
    top = float(count_flops(LARGEST, 4096, 65_536).training)
    assert top > 2**63 and bars["x"][-1] == "4096" and bars["y"][-1] == top


SCHEME = ModelConfig(num_hidden_groups=2, block_order="cycle", unique_ends=True, repeat=2, lora_rank=8)


def test_a_sharing_scheme_opens_from_its_link_with_every_chart(app):
    """Issue 44, item 1: cycle, unique ends, each layer twice and a rank-8 LoRA on ALBERT-base. Every chart drawn
    (the depths swept start at G + 2, the least the unique ends allow), the LoRA chart's star at rank 8 on the
    exact count; the L chart's takeaway says the LoRA grows with depth."""
    at = app(query=config_to_query(SCHEME), page=PAGE)
    assert not at.exception and not at.error
    specs = charts(at)
    assert len(specs) == N_CHARTS + 1
    total = count_params(SCHEME).total
    # 4 copies of the block (2 groups, the first and the last layer's) and 20 LoRA positions (10 middle layers x 2)
    assert total == count_params(SCHEME.replace(lora_rank=0)).total + 20 * 8 * (4 * 1536 + 2 * 3840)
    assert star(specs["Parameters against LoRA rank"]) == (8, total)
    assert star(specs["Parameters vs number of layers L"]) == (12, total)
    assert min(trace_y(specs["Parameters vs number of layers L"], "ALBERT")) > 0
    (layers,) = [t for t in specs["Parameters vs number of layers L"]["data"] if t["name"] == "ALBERT"]
    assert layers["x"][0] == 4  # G + 2
    assert any("rank-8 LoRA adds weights at every executed position" in c.value for c in at.caption)


def test_the_lora_chart_is_replaced_by_why_where_no_lora_fits(app):
    at = app(query=config_to_query(PRESETS["bert-base"]), page=PAGE)
    assert "Parameters against LoRA rank" not in charts(at)
    assert any("shares no weights between layers" in i.value for i in at.info)
    at = app(query=config_to_query(ModelConfig(sharing="none")), page=PAGE)
    assert "Parameters against LoRA rank" not in charts(at)
    assert any("Nothing is shared here and every layer runs once" in i.value for i in at.info)


def test_a_lora_rank_larger_than_the_smallest_hidden_sizes_drops_them_from_the_grids(app):
    cfg = ModelConfig(lora_rank=300)  # valid at H = 768; not at H = 128 or 256 (rank past H)
    at = app(query=config_to_query(cfg), page=PAGE)
    assert not at.exception and not at.error
    specs = charts(at)
    assert min(trace_y(specs["Parameters vs hidden size H"], "ALBERT")) > 0
    (albert,) = [t for t in specs["Parameters vs hidden size H"]["data"] if t["name"] == "ALBERT"]
    assert albert["x"][0] == 384
    assert star(specs["Parameters against LoRA rank"]) == (300, count_params(cfg).total)
