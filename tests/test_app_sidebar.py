"""The shared sidebar: URL codec (restore, fallback with warnings), presets, family switch, reset, errors."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from albert_core import PRESETS, ModelConfig, Workload
from albert_core.format import escape_markdown
from ui import sidebar
from ui.urls import QUERY_KEYS, config_to_query, workload_to_query

FULL_DEFAULT = {**config_to_query(ModelConfig()), **workload_to_query(Workload())}


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_default_view_writes_the_full_state_to_the_url(app):
    at = app()
    assert not at.exception and not at.warning and not at.error
    assert at.query_params == FULL_DEFAULT
    at.session_state[sidebar.SHARE_OPEN_KEY] = True  # the visitor opens the "copy link" box
    link = at.run().sidebar.code[0].value
    assert dict(parse_qsl(urlsplit(link).query)) == FULL_DEFAULT


def test_url_restores_the_view(app):
    query = {"family": "albert", "H": "2048", "L": "24", "heads": "16", "I": "8192", "batch": "4", "seq": "256",
             "dtype": "bf16", "opt": "sgd"}
    at = app(query)
    assert not at.exception and not at.warning
    assert at.slider(key="cfg_H").value == 2048 and at.slider(key="cfg_L").value == 24
    assert at.selectbox(key="cfg_preset").value == "albert-xlarge"  # these fields are exactly the preset
    assert at.number_input(key="wl_seq").value == 256 and at.selectbox(key="wl_opt").value == "sgd"
    assert metrics(at)["Total parameters"] == "58.72M"  # transformers' exact count: 58,724,864
    assert at.query_params["H"] == "2048" and at.query_params["dtype"] == "bf16"


@pytest.mark.parametrize("query, bad", [
    ({"H": "abc"}, "H"),
    ({"L": "-3"}, "L"),
    ({"H": "16384", "heads": "16"}, "H"),  # valid model, outside the slider
    ({"sharing": "[x](javascript:alert(1))"}, "sharing"),
    ({"opt": "<script>alert(1)</script>"}, "opt"),
    ({"seq": "4096"}, "seq"),  # longer than P = 512
    ({"H": "1000", "heads": "12"}, "fit"),  # valid values that do not fit together
])
def test_invalid_url_values_fall_back_with_an_inert_warning(app, query, bad):
    at = app(query)
    assert not at.exception
    assert len(at.warning) >= 1 and bad in at.warning[0].value
    for w in at.warning:  # markdown / HTML specials are escaped: nothing renders as a link or a tag
        text = w.value.replace("\\[", "").replace("\\]", "").replace("\\(", "").replace("\\<", "")
        assert "[" not in text and "<" not in text and "](" not in text
    assert metrics(at)["Total parameters"] == "11.68M"  # fell back to ALBERT-base
    assert at.query_params["H"] == "768"


def test_slider_change_updates_numbers_and_url(app):
    at = app()
    at.slider(key="cfg_L").set_value(24).run()
    assert not at.exception and at.query_params["L"] == "24"
    assert metrics(at)["Total parameters"] == "11.68M"  # all-shared: more layers, same parameters
    assert metrics(at)["Forward FLOPs / sequence"] != "22.4 GFLOP"
    at.slider(key="cfg_H").set_value(1024).run()
    # heads follows H (1024 is not divisible by 12), I follows 4H, the preset becomes albert-large
    assert at.selectbox(key="cfg_heads").value == 16 and at.number_input(key="cfg_I").value == 4096
    assert at.selectbox(key="cfg_preset").value == "albert-large"
    assert metrics(at)["Total parameters"] == "17.68M"


def test_heads_offers_only_divisors_of_h(app):
    at = app({"H": "768"})
    options = [int(o.split()[0]) for o in at.selectbox(key="cfg_heads").options]
    assert options and all(768 % n == 0 for n in options) and 5 not in options and 12 in options


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_sets_every_field(app, name):
    at = app()
    at.selectbox(key="cfg_preset").set_value(name).run()
    assert not at.exception
    cfg = PRESETS[name]
    for key, field in QUERY_KEYS.items():
        expected = config_to_query(cfg)[key]
        assert at.query_params[key] == expected, (key, field)


def test_family_switch_disables_e_and_restores_it(app):
    at = app({"E": "256"})
    at.radio(key="cfg_family").set_value("bert").run()
    e = at.number_input(key="cfg_E")
    assert e.disabled and e.value == 768 and at.selectbox(key="cfg_sharing").value == "none"
    assert at.query_params["family"] == "bert" and at.query_params["E"] == "768"
    at.radio(key="cfg_family").set_value("albert").run()
    assert at.number_input(key="cfg_E").value == 256 and at.selectbox(key="cfg_sharing").value == "all"


def test_seq_len_follows_max_positions_and_reset(app):
    at = app({"H": "1024", "heads": "16"})
    at.number_input(key="cfg_P").set_value(64).run()
    assert at.number_input(key="wl_seq").value == 64 and at.query_params["seq"] == "64"
    at.button(key="sb_reset").click().run()
    assert at.query_params == FULL_DEFAULT and at.selectbox(key="cfg_preset").value == "albert-base"


def test_every_control_has_a_tooltip(app):
    at = app()
    widgets = [*at.sidebar.slider, *at.sidebar.number_input, *at.sidebar.selectbox, *at.sidebar.radio,
               *at.sidebar.checkbox, *at.sidebar.toggle, *at.sidebar.button]
    assert len(widgets) >= 19
    assert all(w.help for w in widgets), [w.label for w in widgets if not w.help]


def test_decode_url_and_inert_are_pure():
    cfg, wl, problems = sidebar.decode_url({"H": "100000", "L": "2", "G": "2", "sharing": "ffn"})
    assert cfg == ModelConfig(num_layers=2, num_hidden_groups=2, sharing="ffn") and wl == Workload()
    assert problems and "H" in problems[0]
    assert escape_markdown("[a](b) <i>*c*</i> $x$") == r"\[a\]\(b\) \<i\>\*c\*\<\/i\> \$x\$"


def test_sidebar_state_survives_page_switches(app):
    at = app()
    at.slider(key="cfg_L").set_value(30).run()
    for page in ("ui/paper/page.py", "ui/compare/page.py", "ui/explorer/page.py"):
        at.switch_page(page).run()
        assert not at.exception and at.slider(key="cfg_L").value == 30 and at.query_params["L"] == "30"


def test_tie_checkbox_only_matters_with_an_mlm_head(app):
    at = app()
    assert at.checkbox(key="cfg_tied").disabled  # XModel has no MLM decoder to tie
    at.selectbox(key="cfg_head").set_value("pretraining").run()
    assert not at.checkbox(key="cfg_tied").disabled and not at.exception


def test_the_first_interaction_keeps_the_view_and_no_pages_folder_sits_beside_the_app(app):
    """Regression (first visitors after a restart): a folder named `pages/` beside app.py makes Streamlit run a
    session's first run in its legacy multipage mode, outside st.navigation, and the next run did not recognise
    that run's widgets (every sidebar value reset on the first interaction). The page scripts live in ui/<page>/."""
    assert not (Path(__file__).resolve().parents[1] / "pages").exists()
    at = app({"V": "30001"})
    at.slider(key="cfg_L").set_value(11).run()
    assert not at.exception and at.slider(key="cfg_L").value == 11 and at.query_params["L"] == "11"
    assert at.number_input(key="cfg_V").value == 30001


def test_activation_help_says_it_changes_training_memory(app):
    from albert_core import estimate_memory

    at = app()
    help_text = at.selectbox(key="cfg_act").help
    assert "no effect on counts" not in help_text.lower() and "training memory" in help_text
    albert = PRESETS["albert-base"]
    assert estimate_memory(albert).activations != estimate_memory(albert.replace(hidden_act="gelu")).activations


def test_groups_above_layers_are_clamped_with_the_rule(app):
    at = app()
    at.number_input(key="cfg_G").set_value(13).run()  # ALBERT-base: L = 12
    assert not at.exception and not at.error
    assert at.number_input(key="cfg_G").value == 12 and at.query_params["G"] == "12"
    assert any("G ≤ L" in w.value and "G = 13" in w.value for w in at.sidebar.warning)
    at.slider(key="cfg_L").set_value(6).run()  # L below G: G follows with the same message
    assert at.number_input(key="cfg_G").value == 6 and at.query_params["L"] == "6" and not at.error


@pytest.mark.parametrize("page", [None, "ui/scaling/page.py", "ui/compare/page.py", "ui/paper/page.py"])
def test_the_share_box_draws_its_code_block_only_once_opened(app, page):
    """A code block on a page makes a fresh browser load and run its syntax-highlighting bundle (1.5 MB, about a
    tenth of the first page's browser CPU): the closed share box draws none; opening it reruns and shows the link
    (the browser test test_copied_link_reproduces_the_view_in_a_fresh_context opens it)."""
    at = app(page=page)
    box = next(e for e in at.sidebar.expander if e.label == "Copy link to this view")
    assert not at.exception and box.proto.expanded is False
    assert len(at.sidebar.code) == 0
