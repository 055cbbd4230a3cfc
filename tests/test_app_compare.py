"""Compare page: the pinned set round-trips through the URL, bad pins warn, numbers and deltas are right."""

from __future__ import annotations

from facts import MODEL_COUNTS as FACTS_MODEL

from albert_core import PRESETS

PAGE = "pages/compare.py"


def test_pins_restore_from_url_and_round_trip(app):
    pins = "bert-large,albert-xxlarge,H.1024~heads.16~sharing.ffn"
    at = app({"pin": pins}, page=PAGE)
    assert not at.exception and not at.warning
    assert at.query_params["pin"] == pins
    df = at.dataframe[0].value
    assert list(df["name"]) == ["bert-large", "albert-xxlarge", PRESETS["albert-base"].replace(
        hidden_size=1024, num_heads=16, sharing="ffn").label]
    assert list(df["params"][:2]) == [FACTS_MODEL["bert-large"], FACTS_MODEL["albert-xxlarge"]]
    assert df["params_delta"].iloc[1] == FACTS_MODEL["albert-xxlarge"] / FACTS_MODEL["bert-large"] - 1
    assert df["params_delta"].iloc[0] == 0
    assert len(at.get("plotly_chart")) == 1


def test_pin_current_and_remove_update_the_url(app):
    at = app({"H": "2048", "L": "24", "heads": "16", "I": "8192", "pin": "bert-base"}, page=PAGE)
    at.button(key="compare_pin_current").click().run()
    assert at.query_params["pin"] == "bert-base,albert-xlarge"
    at.multiselect(key="compare_pins").unselect("bert-base").run()
    assert at.query_params["pin"] == "albert-xlarge"
    at.switch_page("pages/explorer.py").run()
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
