"""Compare page: the pinned set round-trips through the URL, bad pins warn, numbers and deltas are right."""

from __future__ import annotations

import json

import pytest

from albert_core import count_flops
from albert_core.configuration.presets import ALL_PRESETS
from tests.helpers.app import charts
from tests.helpers.facts import MODEL_COUNTS as FACTS_MODEL
from ui import colors, sidebar

PAGE = "ui/compare/page.py"


def test_pins_restore_from_url_and_round_trip(app):
    pins = "bert-large,albert-xxlarge,H.1024~heads.16~sharing.ffn"
    at = app({"pin": pins}, page=PAGE)
    assert not at.exception and not at.warning
    assert at.query_params["pin"] == pins
    df = at.dataframe[0].value
    assert list(df["name"]) == ["bert-large", "albert-xxlarge", "ALBERT H=1024 L=12 E=128 shared-FFN I=3072"]
    # numbers in one unit per column (millions here), shown with the column's format
    columns = json.loads(at.dataframe[0].proto.columns)
    assert columns["params"]["type_config"]["format"] == "%.2fM"
    assert list(df["params"][:2] * 1e6) == pytest.approx([FACTS_MODEL["bert-large"], FACTS_MODEL["albert-xxlarge"]])
    # each change a badge, coloured by its sign: the first pin is the baseline
    change = FACTS_MODEL["albert-xxlarge"] / FACTS_MODEL["bert-large"] - 1  # -30.7%: fewer, green
    assert [list(v) for v in df["params_delta"][:2]] == [["baseline"], [f"{change * 100:+.1f}%"]]
    badges = columns["params_delta"]["type_config"]
    colour = {o["value"]: o["color"] for o in badges["options"]}
    # the roles, not a copy of ui/colors.py's hex values: fewer parameters is the better change
    assert colour["baseline"] == "gray" and colour[f"{change * 100:+.1f}%"] == colors.GOOD
    assert all(c == colors.BAD for text, c in colour.items() if text.startswith("+"))
    assert len(at.get("plotly_chart")) == 1


def test_pin_current_and_remove_update_the_url(app):
    at = app({"H": "2048", "L": "24", "heads": "16", "I": "8192", "pin": "bert-base"}, page=PAGE)
    at.button(key="compare_pin_current").click().run()
    assert at.query_params["pin"] == "bert-base,albert-xlarge"
    at.multiselect(key="compare_pins").unselect("bert-base").run()
    assert at.query_params["pin"] == "albert-xlarge"
    at.switch_page("ui/explorer/page.py").run()
    at.switch_page(PAGE).run()  # the pins survive a page switch
    assert at.multiselect(key="compare_pins").value == ["albert-xlarge"] and not at.exception


def test_bad_pins_warn_and_are_dropped(app):
    at = app({"pin": "albert-base,<img src=x>,L.999,bert-base"}, page=PAGE)
    assert not at.exception
    assert len(at.warning) == 2 and all("<" not in w.value.replace("\\<", "") for w in at.warning)
    assert at.query_params["pin"] == "albert-base,bert-base"


def test_default_pins_and_short_positions(app):
    at = app({"seq": "512"}, page=PAGE)
    assert at.query_params["pin"] == "bert-base,albert-base" and not at.exception
    at.multiselect(key="compare_pins").select("bert-large").run()
    assert at.query_params["pin"] == "bert-base,albert-base,bert-large"


def test_takeaway_names_the_smallest_pin(app):
    at = app({"pin": "bert-large,albert-large"}, page=PAGE)
    text = " ".join(c.value for c in at.caption)
    ratio = FACTS_MODEL["bert-large"] / FACTS_MODEL["albert-large"]
    assert f"albert-large has {ratio:.1f}x fewer parameters than bert-large" in text  # 19.0x


def test_pins_with_equal_labels_stay_apart_after_a_rerun(app):
    # V and heads are not in the label: both pins are "ALBERT H=768 L=12 E=128 all-shared".
    at = app({"pin": "bert-base,V.50000,heads.16"}, page=PAGE)
    at.number_input(key="wl_batch").set_value(16).run()
    assert at.query_params["pin"] == "bert-base,V.50000,heads.16" and not at.exception
    names = list(at.dataframe[0].value["name"])
    assert len(set(names)) == 3 and names[1].endswith("V=50000") and names[2].endswith("heads=16")
    bars = at.get("plotly_chart")[0].proto.spec
    assert all(n in bars for n in names)


def test_a_named_pin_travels_in_the_link(app):
    at = app({"pin": "bert-base,albert-base"}, page=PAGE)
    at.selectbox(key="compare_name_pin").set_value("albert-base")
    at.text_input(key="compare_name_text").input("my ALBERT")
    at.button(key="compare_name_apply").click().run()
    assert at.query_params["pin"] == "bert-base,albert-base~name.my ALBERT"
    assert list(at.dataframe[0].value["name"]) == ["bert-base", "my ALBERT"]
    again = app({"pin": at.query_params["pin"]}, page=PAGE)
    assert list(again.dataframe[0].value["name"]) == ["bert-base", "my ALBERT"] and not again.warning
    at.selectbox(key="compare_name_pin").set_value("bert-base")
    at.text_input(key="compare_name_text").input("my ALBERT")  # taken: refused with a message
    at.button(key="compare_name_apply").click().run()
    assert "already called my ALBERT" in at.warning[0].value
    assert at.query_params["pin"] == "bert-base,albert-base~name.my ALBERT"


def _link_query(at) -> dict[str, str]:
    from urllib.parse import parse_qsl, urlsplit

    at.session_state[sidebar.SHARE_OPEN_KEY] = True  # the visitor opens the "copy link" box
    link = next(c.value for c in at.run().code)
    return dict(parse_qsl(urlsplit(link).query))


def test_copied_link_equals_the_view_after_removing_a_pin(app):
    at = app({"pin": "bert-base,albert-base,bert-large"}, page=PAGE)
    at.multiselect(key="compare_pins").unselect("bert-large").run()
    assert at.query_params["pin"] == "bert-base,albert-base"
    assert _link_query(at)["pin"] == "bert-base,albert-base"
    at.button(key="compare_pin_current").click().run()  # albert-base is pinned already: nothing changes
    assert any("pinned already, as albert-base" in i.value.replace("\\", "") for i in at.info)  # and it says so
    at.multiselect(key="compare_pins").select("albert-large").run()
    assert _link_query(at)["pin"] == at.query_params["pin"] == "bert-base,albert-base,albert-large"


def test_integer_columns_print_as_integers(app):
    at = app({"pin": "bert-base,V.50000"}, page=PAGE)
    columns = json.loads(at.dataframe[1].proto.columns)  # the architecture table
    for key in ("V", "E", "H", "L", "heads", "I", "G", "K"):
        assert columns[key]["type_config"]["format"] == "%d", key


def test_costs_and_architecture_are_two_tables_that_each_fit_the_page(app):
    """17 columns in one table scrolled sideways at 1400 px from E on: the costs and the architecture are
    two tables, each with the config's name first."""
    at = app({"pin": "bert-base,bert-large,albert-base,albert-large,albert-xlarge,albert-xxlarge"}, page=PAGE)
    cost, arch = list(at.dataframe[0].value.columns), list(at.dataframe[1].proto.column_order)
    assert cost == ["name", "params", "params_delta", "forward_flops", "forward_flops_delta", "training_memory",
                    "training_memory_delta", "own_original"]  # an ALBERTized pin against its original (issue 42)
    assert arch == ["name", "family", "V", "E", "H", "L", "heads", "I", "sharing", "G", "K"]


def test_a_sidebar_move_does_not_rebuild_the_comparison(app, monkeypatch):
    """The pins' numbers, tables and chart depend on the pins and the workload, not on the sidebar's config: moving
    L (what a visitor does most) reuses them; a workload change rebuilds them."""
    from ui.compare import figures as compare_figures

    built = []
    real = compare_figures.compare_frame
    monkeypatch.setattr(compare_figures, "compare_frame", lambda rows: built.append(len(rows)) or real(rows))
    # a pinned set and workload of this test only: the cache is shared by the tests of a process
    at = app({"pin": "bert-base,albert-base,albert-large", "L": "7", "batch": "3", "seq": "96"}, page=PAGE)
    first = len(built)
    table = at.dataframe[0].value
    at.slider(key="cfg_L").set_value(9).run()
    assert not at.exception and len(built) == first  # nothing rebuilt
    assert at.dataframe[0].value.equals(table)
    at.number_input(key="wl_seq").set_value(160).run()
    assert len(built) == first + 1  # the workload changes the numbers
    assert not at.dataframe[0].value["forward_flops"].equals(table["forward_flops"])


def test_a_pin_with_a_position_offset_is_counted_at_its_longest_input(app):
    """Issue 39 (the position offset): RoBERTa's 514 position rows hold 512 tokens; a longer sidebar sequence is
    lowered to 512 for its pin, not to P = 514 (a sequence it cannot run)."""
    at = app({"P": "2048", "seq": "1024", "pin": "albert-base,roberta-base"}, page=PAGE)
    assert not at.exception and not at.warning
    notes = " ".join(c.value for c in at.caption).replace("\\", "")
    assert ("roberta-base: sequence length lowered to 512, its longest input (P = 514 less the position table's "
            "offset 2)") in notes
    assert "albert-base: sequence length lowered to 512, its longest input (P = 512)" in notes
    df = at.dataframe[0].value  # one unit per column: the ratio of the two rows is the ratio of the counts
    roberta, albert = (count_flops(ALL_PRESETS[n], 1, 512).forward for n in ("roberta-base", "albert-base"))
    assert df["forward_flops"].iloc[1] / df["forward_flops"].iloc[0] == pytest.approx(roberta / albert, rel=1e-12)


def test_eight_pins_with_twins_named_compared_with_their_originals_and_a_takeaway_over_all(app):
    """Issue 42: with 8 pins the names were cut, twins told apart only by colour, every delta against the first pin
    and the takeaway about 2 of 8. Twins are "<preset> · ALBERTized", each compares with its own original, the
    takeaway names the cost that differs most among all pins, and no name is cut."""
    from albert_core import count_params
    from albert_core.configuration.coerce import albertize
    from albert_core.configuration.presets import ALL_PRESETS
    from albert_core.format import fmt_ratio
    from ui.figure_style import fmt_delta
    from ui.urls import encode_pin

    twins = {name: albertize(ALL_PRESETS[name]) for name in ("deberta-v3-base", "modernbert-base")}
    pins = ["bert-base", "albert-base", "deberta-v3-base", encode_pin(twins["deberta-v3-base"]), "modernbert-base",
            encode_pin(twins["modernbert-base"]), "roberta-base", "bert-large"]
    at = app({"pin": ",".join(pins)}, page=PAGE)
    assert not at.exception
    cost = at.dataframe[0].value
    names = list(cost["name"])
    assert len(names) == 8 and "deberta-v3-base · ALBERTized" in names and "modernbert-base · ALBERTized" in names
    for name, twin in twins.items():
        row = cost[cost["name"] == f"{name} · ALBERTized"].iloc[0]
        change = fmt_delta(count_params(twin).total / count_params(ALL_PRESETS[name]).total - 1)
        assert row["own_original"].startswith(f"params {change}")  # the pin's name says which original
    assert set(cost[~cost["name"].str.contains("ALBERTized")]["own_original"]) == {""}
    bars = charts(at)
    (spec,) = [s for title, s in bars.items() if title.startswith("Pinned configs")]
    ticks = spec["layout"]["yaxis"]["ticktext"]
    # whole, in lines broken after a space or a hyphen
    assert [t.replace("-<br>", "-").replace("<br>", " ") for t in ticks] == names and not any("…" in t for t in ticks)
    totals = [count_params(ALL_PRESETS[p]).total if p in ALL_PRESETS else None for p in pins]
    totals[3], totals[5] = count_params(twins["deberta-v3-base"]).total, count_params(twins["modernbert-base"]).total
    text = " ".join(c.value for c in at.caption)
    assert "Takeaway over all 8 pins: parameters differ most" in text
    assert fmt_ratio(max(totals) / min(totals)) in text


# ----------------------------------------------------------------------------- issue 44: the sharing schemes since ALBERT
def test_a_pin_with_a_sharing_scheme_round_trips_and_shows_its_scheme(app):
    """A config with a scheme (cycle over 2 groups, unique ends, each layer twice, a rank-8 LoRA on q, v and the FFN's
    up projection) pinned from the sidebar: the pin carries it in the link (no ',', '~' or '.' in its values), a
    fresh session reads it back whole, and the architecture table shows the scheme's columns."""
    from albert_core import ModelConfig, count_params
    from ui.urls import decode_pin, encode_pin

    query = {"G": "2", "order": "cycle", "ends": "1", "rep": "2", "lora": "8", "lorat": "q-v-in", "pin": "bert-base"}
    at = app(query, page=PAGE)
    at.button(key="compare_pin_current").click().run()
    cfg = ModelConfig(num_hidden_groups=2, block_order="cycle", unique_ends=True, repeat=2, lora_rank=8,
                      lora_targets="q-v-in")
    entry = "G.2~order.cycle~ends.1~rep.2~lora.8~lorat.q-v-in"
    assert encode_pin(cfg) == entry and decode_pin(entry) == cfg
    assert at.query_params["pin"] == f"bert-base,{entry}"
    again = app({"pin": at.query_params["pin"]}, page=PAGE)  # the link in a fresh session
    assert not again.exception and not again.warning and again.query_params["pin"] == f"bert-base,{entry}"
    cost = again.dataframe[0].value
    assert cost["params"].iloc[1] * 1e6 == pytest.approx(count_params(cfg).total)
    arch = again.dataframe[1]
    assert list(arch.proto.column_order)[-5:] == ["order", "ends", "repeat", "lora", "lora_on"]
    row = arch.value.iloc[1]
    assert (row["order"], bool(row["ends"]), row["repeat"], row["lora"], row["lora_on"]) == (
        "cycle", True, 2, 8, "q-v-in")
    first = arch.value.iloc[0]  # the BERT: ALBERT's scheme, no LoRA
    assert (first["order"], bool(first["ends"]), first["repeat"], first["lora"], first["lora_on"]) == (
        "groups", False, 1, 0, "")
    name = cost["name"].iloc[1]
    assert "cycle unique ends x2 LoRA r=8" in name


def test_an_albertized_twin_with_a_lora_is_named_by_its_scheme(app):
    """Twins made from one preset told apart by their scheme: a rank-8 and a rank-16 LoRA on the ALBERTized
    RoBERTa-base are two names, not one."""
    from albert_core.configuration.coerce import albertize
    from ui.compare.view import pin_label
    from ui.urls import encode_pin

    twin = albertize(ALL_PRESETS["roberta-base"])
    names = [pin_label(encode_pin(twin.replace(lora_rank=r))) for r in (8, 16)]
    assert names == ["roberta-base · ALBERTized E=128 all LoRA r=8", "roberta-base · ALBERTized E=128 all LoRA r=16"]
    assert pin_label(encode_pin(twin.replace(lora_rank=8, lora_targets="q-v"))).endswith("LoRA r=8 on q-v")
    at = app({"pin": "roberta-base"}, page=PAGE)
    assert [c for c in at.dataframe[1].proto.column_order] == [
        "name", "family", "V", "E", "H", "L", "heads", "I", "sharing", "G", "K"]  # no scheme: no scheme columns
