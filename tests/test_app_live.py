"""AppTest of the Live model page: real builds of small configs (every mark "match", including partial
sharing), the over-budget path with its meta-device proof for the presets, the text / selector
widgets, and checkpoint folders confined to the allowed roots."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from albert_core import PRESETS, ModelConfig, Workload, count_params, estimate_memory, settings
from albert_core.configuration.config import HEAD_LABELS
from albert_core.configuration.presets import ALL_PRESETS
from albert_core.format import fmt_bytes
from albert_core.live.count_proof import MATCH
from albert_core.settings import MEMORY_BUDGET
from tests.helpers.app import charts
from ui.live import gate as live_gate
from ui.live import models as live_models
from ui.state import CONFIG_KEY, WORKLOAD_KEY
from ui.urls import config_to_query

PAGE = str(Path(__file__).resolve().parents[1] / "ui" / "live" / "page.py")
TINY = ModelConfig(vocab_size=300, embedding_size=16, hidden_size=32, num_heads=4, intermediate_size=64,
                   num_layers=4, max_position_embeddings=64)


@pytest.fixture(autouse=True)
def _no_switches(monkeypatch):
    monkeypatch.delenv(settings.CHECKPOINT_ROOTS, raising=False)
    monkeypatch.delenv(settings.ALLOW_HUB, raising=False)
    monkeypatch.delenv(MEMORY_BUDGET, raising=False)


def run_page(cfg: ModelConfig, at: AppTest | None = None, wl: Workload | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=90) if at is None else at  # an AppTest not yet run is falsy
    at.session_state[CONFIG_KEY] = cfg
    at.session_state[WORKLOAD_KEY] = wl or Workload(seq_len=64)
    return at.run()


def match_table(at: AppTest):
    df = at.dataframe[0].value
    assert list(df.columns) == ["component", "label", "analytic", "live", "match"]
    return df


def test_page_reads_the_sidebar_config_from_the_url(app):
    cfg = ModelConfig(vocab_size=300, embedding_size=16, hidden_size=64, num_heads=4, intermediate_size=128,
                      num_layers=2, max_position_embeddings=64, sharing="attention", num_hidden_groups=2)
    at = app(query={**config_to_query(cfg), "seq": "64"}, page="ui/live/page.py")
    assert not at.exception
    assert [t.value for t in at.title] == ["Live model"]
    df = match_table(at)
    assert (df["match"] == MATCH).all()
    assert df.iloc[-1]["live"] == count_params(cfg).total


@pytest.mark.parametrize("cfg", [
    TINY,
    TINY.replace(sharing="attention", num_hidden_groups=2, inner_group_num=2, head="masked-lm"),
    TINY.replace(sharing="ffn", head="pretraining", tie_word_embeddings=False),
    TINY.replace(family="bert", sharing="none", head="pretraining"),
], ids=["albert-all", "attention-G2-K2-mlm", "ffn-untied-pretraining", "bert-pretraining"])
def test_small_configs_build_run_and_match(cfg):
    at = run_page(cfg)
    assert not at.exception, at.exception
    df = match_table(at)
    assert (df["match"] == MATCH).all()
    assert df.iloc[-1]["analytic"] == df.iloc[-1]["live"] == count_params(cfg).total
    assert at.success and "Every component matches" in at.success[0].value
    metrics = {m.label: m.value for m in at.metric}
    assert re.fullmatch(r"[0-9.]+ (µs|ms|s)", metrics["Median latency"])  # a tiny model can run in under 1 ms
    assert metrics["Share of matmul limit"].endswith("%")
    specs = charts(at)
    layers = specs["Input vs output of every layer (paper Fig. 1)"]["data"][0]["x"]
    assert layers == list(range(1, cfg.executed_layers + 1))
    assert "Attention weights, executed layer 1, head 1" in specs
    # saved activations: measured > 0, estimate = estimate_memory for this many tokens
    (bar,) = specs["Activations saved for backward, one sequence"]["data"]
    T = len(at.dataframe[1].value)
    est = estimate_memory(cfg, 1, T, "fp32", "none", training=True, dropout=0.0, device="cpu").activations
    assert bar["y"][1] == est and bar["y"][0] > 0


def test_config_change_updates_the_numbers():
    at = run_page(TINY)
    before = match_table(at).iloc[-1]["live"]
    cfg = TINY.replace(vocab_size=500, sharing="none")
    run_page(cfg, at=at)
    after = match_table(at)
    assert before == count_params(TINY).total
    assert after.iloc[-1]["live"] == count_params(cfg).total != before
    assert (after["match"] == MATCH).all()


def test_text_and_selectors_update_tokens_and_heatmap():
    at = run_page(TINY)
    at.text_area(key="live_text").input("hello world\nsecond part").run()
    tokens = at.dataframe[1].value  # one row per token: read down, no sideways scroll
    assert list(tokens.columns) == ["token", "id", "segment"]
    row = list(tokens["token"])
    assert row[0] == "[CLS]" and row[-1] == "[SEP]" and row.count("[SEP]") == 2
    sep = row.index("[SEP]")
    assert "".join(t.removeprefix("##") for t in row[1:sep]) == "helloworld"  # WordPiece pieces of segment A
    # segment B (id 1) runs from after the first [SEP] to the end
    assert list(tokens["segment"]).count("B") == len(row) - row.index("[SEP]") - 1
    at.number_input(key="live_layer").set_value(3).run()
    at.number_input(key="live_head").set_value(2).run()
    assert not at.exception
    heat = charts(at)["Attention weights, executed layer 3, head 2"]["data"][0]
    assert len(heat["z"]) == len(row)
    assert all(sum(r) == pytest.approx(1.0, abs=1e-4) for r in heat["z"])  # softmax rows
    # a shallower config: the layer is out of range, shown as the last one with a message; head 2 kept
    run_page(TINY.replace(num_layers=2, num_heads=2), at=at)
    assert not at.exception
    assert "Attention weights, executed layer 2, head 2" in charts(at)
    assert any("L×K = 2 layers" in w.value.replace("\\", "") for w in at.warning)


def test_an_attention_layer_out_of_range_says_why():
    at = run_page(TINY)  # 4 executed layers
    at.number_input(key="live_layer").set_value(99).run()
    assert not at.exception
    assert "Executed layer 99 does not exist: this model executes L×K = 4 layers; showing executed layer 4." in \
        [w.value.replace("\\", "") for w in at.warning]
    assert "Attention weights, executed layer 4, head 1" in charts(at)


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_over_budget_show_message_and_meta_proof(monkeypatch, name):
    monkeypatch.setenv(MEMORY_BUDGET, "16MiB")  # every preset is above this: no real allocation in tests
    at = run_page(PRESETS[name], wl=Workload())
    assert not at.exception
    assert any("memory budget of" in e.value.replace("\\", "") for e in at.error)
    assert any("meta device" in i.value for i in at.info)
    shown = " ".join(e.value for e in [*at.error, *at.info, *at.warning, *at.caption, *at.markdown])
    assert "ALBERT_EXPLORER" not in shown  # visitors are told in their words, not the operator's setting names
    df = match_table(at)
    assert (df["match"] == MATCH).all()
    assert df.iloc[-1]["live"] == count_params(PRESETS[name]).total
    assert not at.text_area  # nothing is run without a real model


def test_checkpoint_folder_off_by_default():
    at = run_page(TINY)
    assert list(at.radio(key="live_source").options) == ["The sidebar config", "A transformers checkpoint folder",
                                                         "A run from the lab", "A trained BERT (MiniLM, installed)"]
    at.radio(key="live_source").set_value("folder").run()
    assert not at.exception
    assert any("switched off" in i.value for i in at.info)
    assert not any(settings.CHECKPOINT_ROOTS in i.value for i in at.info)  # an operator's setting name, not a visitor's word
    assert not at.text_input


@pytest.fixture
def albert_folder(tmp_path):
    import torch
    from transformers import AlbertConfig, AlbertModel

    torch.manual_seed(0)
    hf = AlbertModel(AlbertConfig(vocab_size=120, embedding_size=8, hidden_size=16, num_hidden_layers=3,
                                  num_attention_heads=2, intermediate_size=32, max_position_embeddings=40))
    folder = tmp_path / "roots" / "tiny-albert"
    hf.save_pretrained(folder)
    return folder, sum(p.numel() for p in hf.parameters())


def test_checkpoint_folder_inside_roots_loads(monkeypatch, albert_folder):
    folder, n_params = albert_folder
    monkeypatch.setenv(settings.CHECKPOINT_ROOTS, str(folder.parent))
    at = run_page(TINY)
    at.radio(key="live_source").set_value("folder").run()
    at.text_input(key="live_folder").input(str(folder)).run()
    assert not at.exception, at.exception
    df = match_table(at)
    assert (df["match"] == MATCH).all()
    assert df.iloc[-1]["live"] == n_params  # transformers' own count of the saved model
    assert "H=16 L=3 E=8" in at.subheader[0].value.replace("\\", "")  # markdown-escaped
    assert at.dataframe[1].value["token"].iloc[0] == "[CLS]"


def test_checkpoint_folder_outside_roots_is_refused(monkeypatch, albert_folder, tmp_path):
    folder, _ = albert_folder
    allowed = tmp_path / "elsewhere"
    allowed.mkdir()
    monkeypatch.setenv(settings.CHECKPOINT_ROOTS, str(allowed))
    at = run_page(TINY)
    at.radio(key="live_source").set_value("folder").run()
    at.text_input(key="live_folder").input(str(folder / ".." / folder.name)).run()
    assert not at.exception
    assert any("outside the allowed folders" in e.value for e in at.error)
    assert not at.dataframe


def test_checkpoint_folder_with_an_empty_weights_file_is_a_message(monkeypatch, albert_folder):
    from safetensors.torch import save_file

    folder, _ = albert_folder
    save_file({}, folder / "model.safetensors")
    monkeypatch.setenv(settings.CHECKPOINT_ROOTS, str(folder.parent))
    at = run_page(TINY)
    at.radio(key="live_source").set_value("folder").run()
    at.text_input(key="live_folder").input(str(folder)).run()
    assert not at.exception, at.exception
    assert any("model.safetensors holds no tensors" in e.value.replace("\\", "") for e in at.error)
    assert not at.dataframe


def test_too_many_blocks_is_refused_before_any_build():
    # L*K = 1,000 unshared layers: 2,000 blocks, tiny weights (under budget) but too many modules
    cfg = TINY.replace(num_layers=500, inner_group_num=2, sharing="none")
    assert cfg.attention_copies + cfg.ffn_copies > live_models.MAX_META_BLOCKS
    at = run_page(cfg)
    assert not at.exception
    assert any("meta device" in w.value for w in at.warning)
    assert not at.dataframe


def test_heading_units_and_marks_read_for_people():
    at = run_page(TINY.replace(head="pretraining"))
    assert not at.exception
    assert HEAD_LABELS["pretraining"] in at.subheader[0].value.replace("\\", "")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Estimated memory"].endswith((" MB", " kB")) and metrics["Memory budget"].endswith(" GB")
    assert set(match_table(at)["match"]) == {"match"}  # plain text: no emoji font needed
    assert not any(ch in at.success[0].value for ch in "✅❌")
    (bar,) = charts(at)["Activations saved for backward, one sequence"]["data"]
    assert bar["text"] == [fmt_bytes(v) for v in bar["y"]]
    layout = charts(at)["Activations saved for backward, one sequence"]["layout"]
    assert all(t.endswith(("MB", "kB", "B")) for t in layout["yaxis"]["ticktext"])


def test_slow_model_waits_for_a_click_before_timing(monkeypatch):
    monkeypatch.setattr(live_gate, "AUTO_WORK_FLOPS", 0)  # nothing runs without a click
    at = run_page(TINY)
    assert not at.exception
    assert (match_table(at)["match"] == MATCH).all()  # the proof and one run come at once
    assert "Median latency" not in [m.label for m in at.metric]
    assert "Activations saved for backward, one sequence" not in charts(at)
    assert "Input vs output of every layer (paper Fig. 1)" in charts(at)  # from the one run
    at.button(key="live_time_button").click().run()
    assert not at.exception
    assert "Median latency" in [m.label for m in at.metric]
    at.button(key="live_saved_button").click().run()
    assert "Activations saved for backward, one sequence" in charts(at)
    assert "Median latency" in [m.label for m in at.metric]  # remembered: no second click needed


def test_a_text_edit_after_timing_does_not_re_time_silently(monkeypatch):
    monkeypatch.setattr(live_gate, "AUTO_WORK_FLOPS", 0)  # nothing runs without a click
    at = run_page(TINY)
    at.button(key="live_time_button").click().run()
    assert "Median latency" in [m.label for m in at.metric]
    at.text_area(key="live_text").input("a different text\nand its second segment").run()
    assert not at.exception
    assert "Median latency" not in [m.label for m in at.metric]  # new text: offered again, not re-timed
    assert at.button(key="live_time_button")
    at.button(key="live_time_button").click().run()
    assert "Median latency" in [m.label for m in at.metric]


def test_live_work_over_the_flop_cap_is_not_started(monkeypatch):
    from albert_core import count_flops
    from albert_core.settings import MAX_GFLOP

    seq_cap = min(live_models.MAX_TOKENS, TINY.max_position_embeddings)
    forward = count_flops(TINY, 1, seq_cap).forward
    monkeypatch.setenv(MAX_GFLOP, str(forward / 2e9))  # half of one forward pass
    at = run_page(TINY)
    assert not at.exception
    assert any("Too costly to run here" in e.value and "cap of" in e.value for e in at.error)
    assert not any(MAX_GFLOP in e.value.replace("\\", "") for e in at.error)  # the visitor's words, not a setting
    assert (match_table(at)["match"] == MATCH).all()  # the proof still holds, on the meta device
    assert not at.text_area
    monkeypatch.setenv(MAX_GFLOP, str(1.5 * forward / 1e9))  # one pass fits, a warm-up plus a timed one not
    at = run_page(TINY)
    assert not at.exception and at.text_area
    assert any("Timing needs at least two forward passes" in i.value for i in at.info)
    assert "Median latency" not in [m.label for m in at.metric]
    assert any(f"at most {1.5 * forward / 1e9:,g} GFLOP" in c.value for c in at.caption)


def test_a_full_server_says_busy_instead_of_over_allocating(monkeypatch):
    from albert_core.live import budget

    monkeypatch.setattr(live_models, "WAIT_S", 0.0)
    live_models._MODELS.clear()
    need = budget.check_budget(TINY, 1, 64).estimate
    free = budget.PROCESS_BUDGET.total - budget.PROCESS_BUDGET.used
    with budget.reserve(free - need // 4, "other visitors' models"):
        at = run_page(TINY.replace(vocab_size=301))  # a config nobody has built yet
        assert not at.exception
        assert any("the server is busy: 1 visitor ahead" in w.value.replace("\\", "") for w in at.warning)
        assert (match_table(at)["match"] == MATCH).all()  # the proof on the meta device instead
        assert not at.text_area
    at = run_page(TINY.replace(vocab_size=301), at=at)  # the memory is free again
    assert not at.warning and at.text_area


def test_a_refusal_offers_what_fits_in_the_sidebar(monkeypatch):
    """bert-large in fp32 is over the default 1 GiB budget; the page offers bf16/fp16 and fewer layers
    (each checked against the same budget here), never a server setting, and names the fields it uses."""
    from albert_core.live.budget import check_budget

    cfg = PRESETS["bert-large"]
    at = run_page(cfg, wl=Workload())
    assert any("over the memory budget of 1.1 GB" in e.value.replace("\\", "") for e in at.error)
    offer = next(i.value for i in at.info if "What fits" in i.value).replace("\\", "")
    assert "bf16 or fp16" in offer and MEMORY_BUDGET not in offer and "GiB" not in offer
    layers = int(offer.split("L = ")[1].split(" ")[0])
    assert check_budget(cfg.replace(num_layers=layers), 1, 128, "fp32").ok
    assert not check_budget(cfg.replace(num_layers=layers + 1), 1, 128, "fp32").ok
    assert check_budget(cfg, 1, 128, "bf16").ok
    assert any("batch, sequence length and optimizer do not apply" in c.value for c in at.caption)


def test_share_of_the_budget_above_100_percent_is_a_multiple(monkeypatch):
    monkeypatch.setenv(MEMORY_BUDGET, "16MiB")
    at = run_page(PRESETS["albert-xxlarge"], wl=Workload())
    share = next(m for m in at.metric if m.label == "Share of the budget").value
    assert share.endswith("x") and "%" not in share


def test_the_typed_text_travels_in_the_share_link():
    at = run_page(TINY)
    assert "text" not in at.query_params  # the default text keeps the link short
    at.text_area(key="live_text").input("hello world\nsecond part").run()
    assert at.query_params["text"] in ("hello world\nsecond part", ["hello world\nsecond part"])
    again = AppTest.from_file(PAGE, default_timeout=90)
    again.query_params["text"] = "from a link\nreopened"
    run_page(TINY, at=again)
    assert not again.exception and again.text_area(key="live_text").value == "from a link\nreopened"
    tokens = again.dataframe[1].value
    assert "link" in "".join(tokens["token"]).replace("##", "")


def test_a_linked_text_longer_than_the_box_allows_opens_the_default():
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.query_params["text"] = "x" * 2001  # the text box holds 2,000 characters
    run_page(TINY, at=at)
    assert not at.exception
    assert at.text_area(key="live_text").value == run_page(TINY).text_area(key="live_text").value  # the default


def _small(preset: str, max_positions: int) -> ModelConfig:
    """A family after BERT with a position offset (RoBERTa, XLM-R: 2), at a size the page builds at once."""
    return ALL_PRESETS[preset].replace(vocab_size=300, embedding_size=64, hidden_size=64, num_layers=2, num_heads=2,
                                       intermediate_size=128, max_position_embeddings=max_positions)


@pytest.mark.parametrize(("preset", "max_positions"), [("roberta-base", 129), ("xlm-roberta-base", 64)])
def test_the_token_cap_leaves_out_the_position_offset(app, preset, max_positions):
    """Issue 39, item 3: RoBERTa's table holds P rows of which the first 2 are no position (padding_idx + 1), so
    the longest input is P - 2; below P = 130 the page capped the tokens at min(128, P) and failed its own budget
    check (ui/live/page.py:34)."""
    from albert_core.live.budget import check_budget

    cfg = _small(preset, max_positions)
    cap = min(live_models.MAX_TOKENS, max_positions - 2)
    assert cfg.position_offset == 2 and cfg.max_seq_len == max_positions - 2
    at = app({**config_to_query(cfg), "seq": "32"}, page=PAGE)
    assert not at.exception, at.exception
    assert not at.warning  # the link was taken as it is
    assert any(f"runs one sequence of up to {cap} tokens" in c.value for c in at.caption)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Estimated memory"] == fmt_bytes(check_budget(cfg, 1, cap).estimate)
    df = match_table(at)
    assert (df["match"] == MATCH).all() and df.iloc[-1]["live"] == count_params(cfg).total


def test_a_long_text_is_cut_to_the_positions_after_the_offset(app):
    cfg = _small("roberta-base", 129)
    at = app({**config_to_query(cfg), "seq": "32"}, page=PAGE)
    at.text_area(key="live_text").input("word " * 400).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(at.dataframe[1].value) == 127  # [CLS] ... [SEP] at every position the table has


def test_a_busy_server_after_the_first_pass_is_a_message_in_every_section(monkeypatch):
    """Issue 39, item 3, under three concurrent visitors: a visitor's cached forward pass expires (or is reclaimed)
    while others hold the live-work gate; the attention map and the saved-activation pass each fetch the run again
    and met BusyError uncaught (ui/live/text.py:64, :176). Each now says the server is busy."""
    from albert_core.live import budget
    from ui.live import runs as live_runs
    from ui.live import text as live_text

    monkeypatch.setattr(live_models, "WAIT_S", 0.0)
    held = []
    show_smoothness = live_text._show_smoothness

    def others_arrive(*args, **kwargs):
        show_smoothness(*args, **kwargs)
        live_runs._RUNS.expire(time.monotonic() + live_models.MODEL_TTL_S + 1)  # this visitor's run is gone
        gate = budget.LIVE_WORK.enter("another visitor's forward pass")
        gate.__enter__()  # and another visitor's work holds the gate
        held.append(gate)

    monkeypatch.setattr(live_text, "_show_smoothness", others_arrive)
    cfg = TINY.replace(vocab_size=302)  # a config no other test has run
    try:
        at = run_page(cfg)
    finally:
        for gate in held:
            gate.__exit__(None, None, None)
    assert held and budget.LIVE_WORK.waiting == 0
    assert not at.exception, at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]
    for what in ("draw the attention map", "measure saved activations here"):
        assert any(w.startswith(f"Cannot {what} right now: the server is busy: 1 visitor ahead") for w in warnings)
    assert "Attention weights, executed layer 1, head 1" not in charts(at)
    assert "Activations saved for backward, one sequence" not in charts(at)
    assert (match_table(at)["match"] == MATCH).all()  # what came before the busy sections is shown
    monkeypatch.setattr(live_text, "_show_smoothness", show_smoothness)  # the others have gone
    again = run_page(cfg, at=at)  # the next run draws everything
    assert not again.warning and "Attention weights, executed layer 1, head 1" in charts(again)


def _captions(at) -> str:
    return " ".join(c.value.replace("\\", "") for c in at.caption)


def test_the_speed_sentence_speaks_of_sharing_only_for_a_model_that_shares():
    """Issue 42: "sharing saves parameters, not time" was said for models that share nothing."""
    shared = _captions(run_page(TINY))
    assert "sharing saves parameters, not time" in shared and "runs all 4 layers" in shared
    unshared = _captions(run_page(TINY.replace(family="bert", sharing="none")))
    assert "sharing saves" not in unshared
    assert "shares no layer" in unshared and "runs its 4 layers" in unshared


@pytest.mark.parametrize(("factor", "words"), [(0.5, "so it saves less"), (1.1, "it saved more"),
                                               (1.0, "nearly what the estimate says")])
def test_the_saved_activation_sentence_follows_the_measurement(monkeypatch, factor, words):
    """Issue 42: "so it saves less" where the model saved 1.10x more than the estimate."""
    from ui.live import text as live_text

    T = {}

    def measured(ref, first, pair):
        est = estimate_memory(ref.cfg, 1, T["n"], "fp32", "none", training=True, dropout=0.0,
                              device="cpu").activations
        return int(est * factor)

    real_saved_section = live_text._show_saved_activations

    def section(ref, first, pair, n, flops):
        T["n"] = n
        real_saved_section(ref, first, pair, n, flops)

    monkeypatch.setattr(live_text, "saved_bytes", measured)
    monkeypatch.setattr(live_text, "_show_saved_activations", section)
    text = _captions(run_page(TINY))
    assert words in text
    for other in {"so it saves less", "it saved more", "nearly what the estimate says"} - {words}:
        assert other not in text


def test_a_model_without_a_pooler_is_not_called_encoder_plus_pooler():
    """Issue 42: a ModernBERT (no pooler) was headed "encoder + pooler (XModel)"."""
    cfg = _small("modernbert-base", 64).replace(head="model")
    assert not cfg.pooler
    at = run_page(cfg)
    assert not at.exception, at.exception
    heading = at.subheader[0].value.replace("\\", "")
    assert "pooler" in heading and "encoder + pooler" not in heading and cfg.head_label in heading


def test_token_ids_are_drawn_as_whole_numbers():
    """Issue 42: a token id was drawn as "000000000002" (a float grid cell): the id column is formatted as an
    integer (printf %d)."""
    import json

    at = run_page(TINY)
    columns = json.loads(at.dataframe[1].proto.columns)
    assert columns["id"]["type_config"]["format"] == "%d"
    assert at.dataframe[1].value["id"].dtype.kind == "i"
