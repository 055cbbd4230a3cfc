"""Explorer page: loads for the default and every preset, numbers match the reference facts and closed forms
(tests/helpers/facts.py), the BERT twin agrees with the other pages and the CLI, exports."""

from __future__ import annotations

import json

import pytest

from albert_core import PRESETS, ModelConfig, Workload, count_flops
from albert_core.counting.report import analyze
from albert_core.format import fmt_bytes, fmt_flops, fmt_params
from tests.helpers.app import charts
from tests.helpers.facts import MODEL_COUNTS as FACTS_MODEL
from tests.helpers.facts import SHARING_COUNTS, albert_model_closed_form, forward_flops_closed_form
from ui.explorer.figures import twin_metrics
from ui.urls import config_to_query

# a 4 x 2 grid sent column by column: the first row is the top of each column
METRIC_LABELS = [
    "Total parameters", "Weights memory", "Embedding parameters", "Training memory", "Encoder parameters",
    "Saved by sharing", "Forward FLOPs / sequence", "Training FLOPs / token",
]


def metrics(at) -> dict:
    return {m.label: m for m in at.metric}


@pytest.mark.parametrize("name", list(PRESETS))
def test_each_preset_loads_with_exact_totals(app, name):
    at = app(config_to_query(PRESETS[name]))
    assert not at.exception and not at.error and not at.warning
    m = metrics(at)
    assert list(m) == METRIC_LABELS
    assert m["Total parameters"].value == fmt_params(FACTS_MODEL[name])
    assert f"{FACTS_MODEL[name]:,}" in m["Total parameters"].help
    assert m["Weights memory"].value == fmt_bytes(4 * FACTS_MODEL[name])  # fp32 default
    if name.startswith("albert"):
        assert m["Forward FLOPs / sequence"].value == fmt_flops(forward_flops_closed_form(PRESETS[name], 1, 128))
        assert m["Total parameters"].delta.startswith("-")  # smaller than its BERT twin
        assert any("run faster or use less memory" in s.value for s in at.subheader)
    else:
        assert not m["Total parameters"].delta  # a BERT is its own twin
    assert [b.label for b in at.get("download_button")] == [
        "transformers config.json", "Breakdown CSV", "JSON report", "FLOP breakdown CSV", "Memory breakdown CSV"]
    table = at.dataframe[0].value
    assert table["params"].sum() == FACTS_MODEL[name]


def test_slider_change_updates_the_numbers(app):
    at = app()
    before = metrics(at)["Total parameters"].value
    at.slider(key="cfg_H").set_value(1536).run()  # heads 12 -> head dim 128 stays valid; I follows 4H
    cfg = PRESETS["albert-base"].replace(hidden_size=1536, intermediate_size=6144)
    m = metrics(at)
    assert m["Total parameters"].value == fmt_params(albert_model_closed_form(cfg)) != before
    assert m["Forward FLOPs / sequence"].value == fmt_flops(forward_flops_closed_form(cfg, 1, 128))


def test_workload_changes_memory_not_params(app):
    at = app()
    at.selectbox(key="wl_dtype").set_value("fp16").run()
    m = metrics(at)
    assert m["Weights memory"].value == fmt_bytes(2 * FACTS_MODEL["albert-base"])
    assert m["Total parameters"].value == "11.68M"
    at.selectbox(key="wl_dtype").set_value("int8").run()
    assert metrics(at)["Training memory"].value == "n/a" and not at.exception


def test_partial_sharing_explains_missing_hf_export(app):
    at = app({"sharing": "attention"})
    assert not at.exception
    hf = at.get("download_button")[0]
    assert hf.disabled if hasattr(hf, "disabled") else hf.proto.disabled
    assert any("transformers" in c.value and "not available" in c.value for c in at.caption)
    assert metrics(at)["Total parameters"].value == fmt_params(SHARING_COUNTS["attention"])  # Table 4 mode


def test_bert_twin_panel_numbers(app):
    at = app({"batch": "1"})
    text = " ".join(md.value for md in at.markdown)
    assert "Parameters: down 9.34x" in text  # 11.68M vs BERT-base at V = 30,000 (109.08M)
    assert "Forward FLOPs: nearly equal, 1.00x" in text
    assert "num_hidden_groups" in text and "MACs" in text


def test_bert_panel_compares_with_its_albert_counterpart(app):
    at = app(config_to_query(PRESETS["bert-base"]))
    assert not at.exception
    text = " ".join(md.value for md in at.markdown)
    assert "ALBERT counterpart" in text
    # BertModel 109,482,240 (transformers' exact count) vs albert-base at V = 30,522: 11,683,584 + 522 * 128.
    assert f"Parameters: down {FACTS_MODEL['bert-base'] / (FACTS_MODEL['albert-base'] + 522 * 128):.2f}x" in text
    assert len(at.get("plotly_chart")) == 4  # architecture, treemap, FLOPs, counterpart


def test_deltas_and_takeaways_follow_the_config(app):
    at = app({"K": "2"})  # inner repeats: fewer parameters than BERT, but twice the compute
    m = metrics(at)
    assert m["Total parameters"].delta.startswith("-") and m["Forward FLOPs / sequence"].delta.startswith("+")
    assert m["Training FLOPs / token"].delta.startswith("+")
    captions = " ".join(c.value for c in at.caption)
    assert "Without sharing the model would have" in captions and "feed-forward block is" in captions
    assert "*slower*" in " ".join(md.value for md in at.markdown)



def test_the_bert_twin_is_the_same_bert_on_every_page_and_in_the_cli(app, capsys):
    """ALBERT-base's twin is bert-base at ALBERT's V = 30,000: GELU, dropout 0.1. The twin every page
    shows (Explorer, Scaling: the cached Result), that BERT pinned on Compare and the CLI agree."""
    from albert_core.cli.main import main
    from albert_core.counting.report import analyze

    bert = PRESETS["bert-base"].replace(vocab_size=30_000)
    twin = analyze(PRESETS["albert-base"], Workload(batch=8, seq_len=128)).twin
    assert twin.config == bert
    pin = "~".join(f"{k}.{v}" for k, v in config_to_query(bert).items())
    compare = app({"seq": "128", "batch": "8", "pin": pin}, page="ui/compare/page.py")
    # Compare shows bytes in GB (one unit a column): exact to the byte once scaled back
    assert json.loads(compare.dataframe[0].proto.columns)["training_memory"]["type_config"]["format"] == "%.1f GB"
    assert round(compare.dataframe[0].value["training_memory"].iloc[0] * 1e9) == twin.training_memory.total
    main(["memory", "--preset", "bert-base", "--vocab-size", "30000", "--batch", "8", "--seq-len", "128", "--json"])
    assert json.loads(capsys.readouterr().out)["total"] == twin.training_memory.total
    at = app({"seq": "128", "batch": "8"}, page="ui/explorer/page.py")
    assert "BERT H=768 L=12 V=30000" in at.caption[0].value and "GELU" in at.caption[0].proto.help


def test_recurring_confusions_per_layer_macs_and_the_6n_rule(app):
    at = app({**config_to_query(PRESETS["bert-base"]), "seq": "128"}, page="ui/explorer/page.py")
    text = " ".join(" ".join(m.value for m in at.markdown).split())  # markdown wraps lines
    # one layer's scores: 4·S²·H = 4 · 128² · 768 = 50,331,648; twelve layers 603,979,776
    assert "50.3 MFLOP per layer here, 604.0 MFLOP over all L×K = 12 layers" in text
    S, H, I = 128, 768, 3072  # noqa: E741
    forward = 12 * (8 * S * H * H + 4 * S * S * H + 4 * S * H * I) + 2 * H * H  # BERT: no E -> H projection
    assert f"= {forward / 2 / 1e9:.1f} GMAC)" in text and "GFLOP MACs" not in text
    help_text = next(m.help for m in at.metric if m.label == "Training FLOPs / token")
    n = 12 * (4 * 768**2 + 2 * 768 * 3072 + 9 * 768 + 3072)  # bert-base's encoder layers
    assert f"N = {n:,}" in help_text and "non-embedding" in help_text


def test_downloads_are_named_after_the_config(app, monkeypatch):
    import streamlit

    names: list[str] = []
    original = streamlit.download_button

    def recording(*args, **kwargs):
        names.append(kwargs["file_name"])
        return original(*args, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", recording)
    app(config_to_query(PRESETS["bert-base"]), page="ui/explorer/page.py")
    assert {"config.json", "bert-base_params.csv", "bert-base_report.json"} <= set(names)
    names.clear()
    app({"V": "50000"}, page="ui/explorer/page.py")
    assert "albert-h768-l12-e128-all-shared-v50000_report.json" in names
    assert not any(n.startswith("albert_") for n in names)


def test_the_page_opens_with_one_short_line_and_the_twin_defined_in_its_tooltip(app):
    at = app({"preset": "albert-base"})
    assert not at.exception
    top = at.caption[0]
    assert "BERT twin" in top.value and len(top.value) < 200, top.value  # one line, not a grey paragraph
    assert "E = H, no sharing" in top.proto.help  # the definition is one hover away


def test_an_uploaded_albert_base_v2_gets_sentences_that_follow_its_metrics(app):
    """albert-base-v2's config.json (AlbertForMaskedLM) as the sidebar imports it: its E-wide MLM decoder (E x V
    instead of H x V) is a real saving, 2·S·V·(H - E) FLOPs per sequence, and every sentence says so."""
    from albert_core.configuration.hf_config import config_from_json_bytes
    from tests.helpers.facts import official

    cfg = config_from_json_bytes(json.dumps(official("v2", "base")).encode())
    at = app(config_to_query(cfg))
    assert not at.exception
    delta = metrics(at)["Forward FLOPs / sequence"].delta
    assert delta.startswith("-17.")  # 23.4 GFLOP against BERT's 28.4 GFLOP
    text = " ".join(md.value for md in at.markdown)
    S, V, H, E = 128, 30_000, 768, 128
    assert "**Forward FLOPs: down" in text and f"MLM decoder {2 * S * V * (E - H) / 1e9:.1f} GFLOP" in text
    assert "nearly equal (this page" not in text and "not a *faster* one" not in text
    assert "gelu_new" in text and "gelu" in text  # the activations differ, and the sentence says which


def test_the_headline_names_the_precision_and_checkpointing_the_memory_depends_on(app):
    at = app({"dtype": "bf16", "prec": "mixed", "ckpt": "1"})
    assert not at.exception
    caption = at.caption[0].value
    assert "bf16 mixed precision" in caption and "gradient checkpointing" in caption
    plain = app({"dtype": "fp32"}).caption[0].value
    assert "mixed precision" not in plain and "checkpointing" not in plain
    assert "checkpointing" in metrics(at)["Training FLOPs / token"].help


@pytest.mark.parametrize("page", [None, "ui/live/page.py", "ui/train/page.py", "ui/hardware/page.py"])
def test_no_download_is_sent_with_the_page(app, page):
    """A download whose file goes with the page (a media URL) is fetched by the browser on every rerun: the server
    served Explorer's config.json once per slider move (issue 34's browser measurement). Each file is made on the
    click instead (a deferred download)."""
    at = app(page=page)
    for button in at.get("download_button"):
        assert not button.proto.url and button.proto.deferred_file_id, button.proto.label


def test_a_browsers_first_run_sends_the_numbers_before_the_charts(app, monkeypatch):
    """A fresh browser draws a page's numbers only after Plotly's bundle and the charts (issue 34): the first run of a
    browser's session sends placeholders and a fragment that asks for the charts; every later run draws them."""
    import ui.render

    monkeypatch.setattr(ui.render, "_from_a_browser", lambda: True, raising=False)
    at = app()
    assert not at.exception and len(at.get("plotly_chart")) == 0
    assert metrics(at)["Total parameters"].value == fmt_params(FACTS_MODEL["albert-base"])
    assert _keyed_blocks(at.main, "_pending") == {"architecture_diagram_pending", "breakdown_treemap_pending",
                                                   "flops_bars_pending", "twin_bars_pending"}  # a box per chart
    at.run()  # the run the fragment's timer asks for (or any move of a slider)
    assert len(at.get("plotly_chart")) == 4 and not at.exception
    assert not _keyed_blocks(at.main, "_pending")


def _keyed_blocks(node, suffix: str) -> set[str]:
    """The keys of the blocks under ``node`` that end with ``suffix``."""
    found = set()
    children = getattr(node, "children", None)
    for child in children.values() if isinstance(children, dict) else ():
        key = getattr(child, "key", None)
        if isinstance(key, str) and key.endswith(suffix):
            found.add(key)
        found |= _keyed_blocks(child, suffix)
    return found


def test_a_client_that_is_not_a_browser_gets_the_charts_in_the_first_run(app):
    at = app()
    assert len(at.get("plotly_chart")) == 4


@pytest.mark.parametrize("page", ["ui/scaling/page.py", "ui/compare/page.py"])
def test_the_workload_line_of_scaling_and_compare_names_precision_and_checkpointing(app, page):
    """Their memory figures depend on both, as the Explorer's do (one wording: `Workload.summary`)."""
    at = app({"dtype": "bf16", "prec": "mixed", "ckpt": "1"}, page=page)
    assert not at.exception
    assert any("bf16 mixed precision" in c.value and "gradient checkpointing" in c.value for c in at.main.caption)


# The largest sizes the sidebar takes from a link (H and L at their sliders' ends, every other field at its limit),
# all-shared with K = 64: L x K = 8,192 executed layers over 65,536 tokens.
LARGEST_QUERY = {"family": "albert", "V": "1000000", "E": "65536", "H": "8192", "L": "128", "heads": "64",
                 "I": "262144", "P": "65536", "sharing": "all", "K": "64", "batch": "4096", "seq": "65536"}
LARGEST = ModelConfig(vocab_size=1_000_000, embedding_size=65_536, hidden_size=8192, num_layers=128, num_heads=64,
                      intermediate_size=262_144, max_position_embeddings=65_536, inner_group_num=64)


def test_the_largest_sizes_draw_every_chart_with_counts_past_2_to_the_63(app):
    """Issue 39, item 3: Plotly's JSON writer cannot hold an integer past 2^63, and the twin chart sent the exact
    FLOP count as one (an uncaught TypeError). Figures get such counts as floats."""
    at = app(LARGEST_QUERY)
    assert not at.exception, at.exception
    assert not at.warning  # the link was taken as it is
    result = analyze(LARGEST, Workload(batch=4096, seq_len=65_536))
    assert result.own.memory.activations > 2**63  # the edge this test is about: 4.9e19 bytes
    twin = next(spec for title, spec in charts(at).items() if title.endswith("= 100%)"))
    assert [r[0] for r in twin_metrics(result)] == ["Parameters", "Forward FLOPs", "Activations", "Weights memory"]
    assert twin["data"][0]["customdata"] == [float(r[1]) for r in twin_metrics(result)]
    assert twin["data"][0]["customdata"][1] == float(count_flops(LARGEST, 1, 65_536).forward)
    flops = charts(at)["Forward FLOPs per sequence by component"]
    assert max(flops["data"][0]["x"]) > 2**53 and all(isinstance(v, float) for v in flops["data"][0]["x"])


# ----------------------------------------------------------------------------- issue 42: the ALBERTize panel
def _albertize_in_sidebar(at, embedding_size: int = 128):
    at.selectbox(key="cfg_sharing").set_value("all").run()
    at.number_input(key="cfg_E").set_value(embedding_size).run()
    assert not at.exception
    return at


def test_an_albertized_preset_compares_with_that_preset_from_either_side(app):
    """Issue 42: an ALBERTized ELECTRA's "original" kept ELECTRA's native E = 128, so the pair read one change from
    the original's page and another from the twin's; the twin made from a preset compares with that preset."""
    from albert_core import count_params
    from albert_core.configuration.coerce import albertize
    from albert_core.configuration.presets import ALL_PRESETS
    from ui.figure_style import fmt_delta

    preset = ALL_PRESETS["electra-base-discriminator"]
    twin = albertize(preset)
    saving = fmt_delta(count_params(twin).total / count_params(preset).total - 1)
    at = app(config_to_query(preset))
    assert metrics(at)["Total parameters"].delta == f"{saving} ALBERTized"  # the original's page: a saving
    _albertize_in_sidebar(at)
    assert metrics(at)["Total parameters"].value == fmt_params(count_params(twin).total)
    assert metrics(at)["Total parameters"].delta == f"{saving} vs original"  # the same change from the twin's side
    assert "**electra-base-discriminator**" in at.caption[0].value


def test_a_twin_made_from_a_custom_config_compares_with_that_config(app):
    """The session's last config without ALBERT's ideas (an upload, an edited preset) is what its twin compares
    with, not a family-native E."""
    from albert_core import count_params
    from albert_core.configuration.coerce import albertize
    from albert_core.configuration.presets import ALL_PRESETS

    custom = ALL_PRESETS["deberta-v3-base"].replace(vocab_size=50_000)
    at = app(config_to_query(custom))
    _albertize_in_sidebar(at)
    twin = albertize(custom)
    want = count_params(twin).total / count_params(custom).total - 1
    from ui.figure_style import fmt_delta

    assert metrics(at)["Total parameters"].delta == f"{fmt_delta(want)} vs original"


def test_what_albertizing_saves_is_one_table_with_each_idea_apart(app):
    """Issue 42: the panel gave parameters and FLOPs only; the table has training memory, the largest batch and the
    step time too, for E = 128 alone, the sharing alone and both, each from the library's counts."""
    from albert_core import count_params
    from albert_core.configuration.coerce import albertize
    from albert_core.configuration.presets import ALL_PRESETS
    from albert_core.hardware.albertized import compare_albertized

    preset = ALL_PRESETS["modernbert-base"]
    at = app(config_to_query(preset))
    (df,) = [d.value for d in at.dataframe if "cost" in d.value.columns]
    assert list(df.columns) == ["cost", "original", "E = 128 alone", "sharing alone", "both (ALBERTized)"]
    assert list(df["cost"]) == ["Parameters", "Forward FLOPs per sequence", "Training FLOPs per step",
                                "Training memory (estimate)", "Largest batch on 16 GB (estimate)",
                                "Largest batch on 80 GB (estimate)", "Training step on NVIDIA H100 SXM 80GB (estimate)"]
    variants = {"E = 128 alone": albertize(preset, sharing=None), "sharing alone": albertize(preset, embedding_size=None),
                "both (ALBERTized)": albertize(preset)}
    for column, cfg in variants.items():
        assert df[column][0].startswith(fmt_params(count_params(cfg).total) + " (-")
        pair = compare_albertized(preset, cfg, Workload())
        assert df[column][4].split(" ")[0] == f"{int(pair.row('largest batch on 16 GB').twin):,}"
    assert df["original"][0] == fmt_params(count_params(preset).total)


def test_an_originals_twin_chart_shows_the_albertized_twin_against_it(app):
    """Issue 42: on an original's page the chart drew the original at 766 % of its twin; it draws the ALBERTized twin
    against the original (= 100 %): what ALBERTizing saves."""
    from albert_core import count_params
    from albert_core.configuration.coerce import albertize
    from albert_core.configuration.presets import ALL_PRESETS

    preset = ALL_PRESETS["deberta-v3-base"]
    at = app(config_to_query(preset))
    (spec,) = [s for title, s in charts(at).items() if title.endswith("= 100%)") and "vs" in title]
    assert spec["layout"]["title"]["text"].startswith("ALBERTized twin vs original")
    first = spec["data"][0]
    assert first["x"][0] == pytest.approx(count_params(albertize(preset)).total / count_params(preset).total)
    assert max(first["x"]) <= 1.01


# ----------------------------------------------------------------------------- issue 44: the sharing schemes since ALBERT
def test_a_lora_rank_set_in_the_sidebar_shows_what_it_adds(app):
    """The visitor sets a LoRA rank of 8 (all six matrices) on ALBERT-base: the Explorer says what it adds, counted
    here by hand: 12 shared positions x rank 8 x (d_in + d_out) of q, k, v, o (768 + 768 each) and the FFN's up and
    down projections (768 + 3072 each), and 2 FLOPs per parameter per token of the 128-token sequence."""
    at = app()
    at.number_input(key="cfg_lora").set_value(8).run()
    assert not at.exception and not at.error
    added = 12 * 8 * (4 * 1536 + 2 * 3840)
    assert added == 1_327_104
    total = FACTS_MODEL["albert-base"] + added
    flops = 2 * 128 * added
    forward = forward_flops_closed_form(PRESETS["albert-base"], 1, 128) + flops
    text = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert (f"The per-position LoRA adds {added:,} parameters ({fmt_params(added)}, {added / total:.1%} of the "
            f"{fmt_params(total)}) and {fmt_flops(flops)} per forward pass of one 128-token sequence, "
            f"{flops / forward:.1%} of its {fmt_flops(forward)} ({fmt_flops(8 * flops)} for the batch of 8)") in text
    assert "cannot be merged" in text and "costs compute" in text
    m = metrics(at)
    assert m["Total parameters"].value == fmt_params(total) and f"Exactly {total:,} " in m["Total parameters"].help
    assert m["Forward FLOPs / sequence"].value == fmt_flops(forward)
    captions = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "A LoRA of rank 8 per position sits on q, k, v, o at 12 executed attention blocks" in captions
    at.number_input(key="cfg_lora").set_value(0).run()  # no LoRA: no sentence
    assert not any("per-position LoRA" in m.value for m in at.markdown)


def test_the_schedule_of_a_scheme_from_a_link(app):
    at = app({"L": "8", "G": "2", "order": "cycle", "ends": "1", "rep": "2"})
    assert not at.exception and not at.warning
    captions = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "The copy each layer runs: 0 | 1 2 1 2 1 2 | 3" in captions
    assert "every layer runs 2 times in a row with the same weights, L×K×r = 8×1×2 = 16 executed layers" in captions
    diagram = charts(at)["L×K×r = 8×1×2 = 16 executed layers"]
    assert sum(1 for s in diagram["layout"]["shapes"] if s.get("name", "").startswith("attention copy")) == 16
    help_text = next(m.help for m in at.metric if m.label == "Saved by sharing")
    assert "(L×K×r = 16)" in help_text


def test_an_albertized_encoder_with_a_lora_compares_with_its_original(app):
    """RoBERTa-base ALBERTized in the sidebar, then a LoRA: the page compared it with its original by swapping E and
    the sharing back but keeping the LoRA, a config that cannot exist (the error box). Its original is roberta-base."""
    at = app({"family": "roberta"})
    at.selectbox(key="cfg_preset").set_value("roberta-base").run()
    at.selectbox(key="cfg_sharing").set_value("all").run()
    at.number_input(key="cfg_E").set_value(128).run()
    at.number_input(key="cfg_lora").set_value(8).run()
    assert not at.exception and not at.error
    assert "its original, **roberta-base**" in at.caption[0].value
    assert any("The per-position LoRA adds" in m.value.replace("\\", "") for m in at.markdown)
