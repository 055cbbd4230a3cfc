"""What a visitor sees is what the page computes and what the link reopens (issue 39, items 1 and 2).

The sidebar has one source of truth, the config and workload every page computes with: a whole configuration (a
preset, an upload, a link, Reset) replaces it whole; an edit of one widget goes through the one coerce rule; every
widget is drawn from it (its value / index given, so the browser's first paint is that value); the URL is written
from it. The tests read the three places independently: the widgets (their values and the default each is drawn
with), the URL (decoded by the strict URL reader) and the computed config (the numbers on the page), after fixed
sequences that failed before and after random sequences of a visitor's actions (a hypothesis state machine driving
AppTest).
"""

from __future__ import annotations

import dataclasses
import json

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from streamlit.testing.v1 import AppTest

from albert_core import ModelConfig, Workload, count_params
from albert_core.configuration.config import ALL_LORA_TARGETS, LORA_MATRICES, SHARING_SCHEME
from albert_core.configuration.hf_config import config_from_hf, config_to_hf
from albert_core.configuration.presets import ALL_PRESETS
from albert_core.format import fmt_params
from tests.conftest import APP
from tests.helpers.facts import MODEL_COUNTS
from tests.test_hf_reader import DEBERTA_V3_BASE, NOMIC_BERT_2048, NOMIC_SMALL
from ui import sidebar
from ui.urls import (
    AXIS_QUERY_KEYS,
    QUERY_KEYS,
    SCHEME_QUERY_KEYS,
    WORKLOAD_QUERY_KEYS,
    config_from_query,
    parse_workload_query,
)

# The model widgets by URL key, and the kind of element each is drawn as.
_SLIDERS, _RADIOS = ("H", "L"), ("family",)
_BOXES = ("heads", "sharing", "head", "act")
_CHECKS = ("tied",)
_NUMBERS = tuple(k for k in QUERY_KEYS if k not in (*_SLIDERS, *_RADIOS, *_BOXES, *_CHECKS))
_WL_BOXES, _WL_NUMBERS, _WL_TOGGLES = ("dtype", "opt", "prec"), ("batch", "seq"), ("ckpt",)
# The sharing schemes since ALBERT ("Sharing since ALBERT"): block order, unique ends, repeat, LoRA rank and matrices.
_SCHEME_BOXES, _SCHEME_CHECKS, _SCHEME_NUMBERS, _SCHEME_MULTI = ("order",), ("ends",), ("rep", "lora"), ("lorat",)
_MODEL_KEYS = (*QUERY_KEYS, *SCHEME_QUERY_KEYS)  # every model widget's URL key


def _element(at: AppTest, key: str):
    url_key = key.removeprefix("cfg_").removeprefix("wl_")
    if url_key in _SLIDERS:
        return at.slider(key=key)
    if url_key in _RADIOS:
        return at.radio(key=key)
    if url_key in (*_BOXES, *_WL_BOXES, *_SCHEME_BOXES) or key == sidebar.PRESET_KEY:
        return at.selectbox(key=key)
    if url_key in (*_CHECKS, *_SCHEME_CHECKS):
        return at.checkbox(key=key)
    if url_key in _SCHEME_MULTI:
        return at.multiselect(key=key)
    if url_key in _WL_TOGGLES or key == "cfg_keep4h":
        return at.toggle(key=key)
    return at.number_input(key=key)


def _drawn_with(el) -> object:
    """The value (a box: the index) a widget is drawn with before the browser hears anything else (its proto's
    default), for comparison with `_showing`."""
    kind = type(el).__name__
    if kind == "Multiselect":
        return list(el.proto.default)
    if kind in ("Selectbox", "Radio"):
        return el.proto.default if el.proto.HasField("default") else None
    if kind == "Slider":
        return int(el.proto.default[0])
    if kind == "NumberInput":
        return int(el.proto.default) if el.proto.HasField("default") else None
    return bool(el.proto.default)


def _showing(el) -> object:
    kind = type(el).__name__
    if kind == "Multiselect":
        return list(el.indices)
    return el.index if kind in ("Selectbox", "Radio") else el.value


def computed(at: AppTest) -> tuple[ModelConfig, Workload]:
    """The config and workload the pages compute with this run (what `sidebar.render` returned)."""
    return at.session_state[sidebar._CURRENT]


def shown(at: AppTest, eps: float) -> tuple[ModelConfig, Workload]:
    """The config and workload the sidebar's widgets show (the axes have no widget: the state a preset, an upload
    or the link set; layer_norm_eps has none either and is taken as given)."""
    fields = {QUERY_KEYS[k]: _element(at, f"cfg_{k}").value for k in QUERY_KEYS}
    fields |= {SCHEME_QUERY_KEYS[k]: sidebar.widget_field_value(k, _element(at, f"cfg_{k}").value)
               for k in SCHEME_QUERY_KEYS}
    cfg = ModelConfig(**fields, **at.session_state[sidebar._AXES], layer_norm_eps=eps)
    wl = Workload(**{WORKLOAD_QUERY_KEYS[k]: _element(at, f"wl_{k}").value for k in WORKLOAD_QUERY_KEYS})
    return cfg, wl


def from_link(at: AppTest) -> tuple[ModelConfig, Workload]:
    """The config and workload the address bar holds, read by the strict URL reader."""
    query = dict(at.query_params)
    wl, problems = parse_workload_query(query)
    assert not problems, problems
    return config_from_query(query), wl


def _without_eps(cfg: ModelConfig) -> ModelConfig:
    return cfg.replace(layer_norm_eps=ModelConfig().layer_norm_eps)


def check_one_truth(at: AppTest) -> tuple[ModelConfig, Workload]:
    """Widgets = computed = link (the link carries every field but layer_norm_eps, which the upload message names),
    every widget drawn with the value it shows, the number on the page the exact count of the computed config."""
    assert not at.exception, [e.value for e in at.exception]
    cfg, wl = computed(at)
    assert shown(at, cfg.layer_norm_eps) == (cfg, wl)
    link_cfg, link_wl = from_link(at)
    assert (_without_eps(link_cfg), link_wl) == (_without_eps(cfg), wl)
    for key in [sidebar.PRESET_KEY, *(f"cfg_{k}" for k in _MODEL_KEYS), *(f"wl_{k}" for k in WORKLOAD_QUERY_KEYS)]:
        el = _element(at, key)
        assert _drawn_with(el) == _showing(el), (key, _drawn_with(el), _showing(el))
    total = next(m for m in at.metric if m.label == "Total parameters")
    assert f"Exactly {count_params(cfg).total:,} " in total.help
    return cfg, wl


def total_on_page(at: AppTest) -> str:
    return next(m.value for m in at.metric if m.label == "Total parameters")


# ----------------------------------------------------------------------------- the sequences that failed on 66927f6
def test_a_preset_in_a_fresh_session_is_the_preset_whole(app):
    at = app()
    at.selectbox(key=sidebar.PRESET_KEY).set_value("electra-small-discriminator").run()
    assert at.number_input(key="cfg_E").value == 128 and total_on_page(at) == "13.55M"  # was E 256, 17.49M
    assert computed(at)[0] == ALL_PRESETS["electra-small-discriminator"]
    check_one_truth(at)


def test_a_preset_after_an_albertized_encoder_is_the_preset_whole(app):
    at = app()
    at.selectbox(key=sidebar.PRESET_KEY).set_value("roberta-large").run()
    at.number_input(key="cfg_E").set_value(128).run()
    at.selectbox(key="cfg_sharing").set_value("all").run()
    assert computed(at)[0].sharing == "all" and computed(at)[0].embedding_size == 128
    at.selectbox(key=sidebar.PRESET_KEY).set_value("albert-base").run()
    assert total_on_page(at) == "11.68M" and f"{MODEL_COUNTS['albert-base']:,}" in at.metric[0].help  # was 31.71M
    assert at.number_input(key="cfg_E").value == 128 and computed(at)[0] == ALL_PRESETS["albert-base"]
    check_one_truth(at)


# ELECTRA-small discriminator's config.json as published with its checkpoint (written out here, not generated).
ELECTRA_SMALL_FILE = {
    "architectures": ["ElectraForPreTraining"], "attention_probs_dropout_prob": 0.1, "embedding_size": 128,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 256, "initializer_range": 0.02,
    "intermediate_size": 1024, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "electra",
    "num_attention_heads": 4, "num_hidden_layers": 12, "pad_token_id": 0, "type_vocab_size": 2, "vocab_size": 30522,
}


def _upload(at: AppTest, data: dict, name: str = "config.json") -> AppTest:
    at.file_uploader(key=sidebar.UPLOAD_KEY).set_value((name, json.dumps(data).encode(), "application/json")).run()
    return at


def test_an_upload_is_the_file_whole_and_says_what_the_link_cannot_carry(app):
    at = _upload(app(), ELECTRA_SMALL_FILE)
    cfg = computed(at)[0]
    assert cfg.embedding_size == 128 and cfg.head == "discriminator"  # was E 256
    assert cfg == ALL_PRESETS["electra-small-discriminator"]
    check_one_truth(at)
    at = _upload(app(), {**ELECTRA_SMALL_FILE, "layer_norm_eps": 1e-6}, "eps.json")
    assert computed(at)[0].layer_norm_eps == 1e-6  # was lost (1e-12)
    said = " ".join(c.value.replace("\\", "") for c in at.sidebar.caption)
    assert "cannot carry layer_norm_eps = 1e-06" in said and "reopens with 1e-12" in said
    check_one_truth(at)


def test_every_box_is_drawn_with_the_value_the_link_gives(app):
    """A box drawn without its index is painted with option 0 first (Optimizer "none" beside opt=adamw)."""
    at = app({"opt": "adamw", "dtype": "bf16", "prec": "mixed", "sharing": "ffn", "head": "masked-lm",
              "act": "relu", "family": "albert"})
    assert at.selectbox(key="wl_opt").proto.default == list(at.selectbox(key="wl_opt").options).index("adamw")
    check_one_truth(at)


def test_an_edit_that_cannot_form_a_model_is_not_applied_and_says_why(app):
    """RoBERTa's positions start after the padding id (offset 2): a table of 2 rows holds none. The widget goes back
    to the config the page still computes with, and the message names the rule."""
    at = app({"family": "roberta"})
    before = computed(at)[0]
    assert before.position_offset == 2
    at.number_input(key="cfg_P").set_value(2).run()
    assert computed(at)[0] == before and at.number_input(key="cfg_P").value == before.max_position_embeddings
    said = at.error[0].value.replace("\\", "")
    assert said.startswith("Not applied") and "position_offset (2) must be below max_position_embeddings" in said
    check_one_truth(at)


# ----------------------------------------------------------------------------- the sharing schemes since ALBERT
def test_every_scheme_widget_edits_the_config_the_pages_and_the_link_hold(app):
    """Block order, unique ends, repeat, LoRA rank and matrices: each edit goes through the one rule, each widget is
    drawn with the value the page computes with, and the link writes the keys only while they leave ALBERT's
    scheme."""
    at = app({"G": "2"})
    assert not {"order", "ends", "rep", "lora", "lorat"} & set(at.query_params)  # ALBERT's own scheme: no keys
    at.selectbox(key="cfg_order").set_value("cycle").run()
    at.checkbox(key="cfg_ends").check().run()
    at.number_input(key="cfg_rep").set_value(2).run()
    assert at.multiselect(key="cfg_lorat").disabled  # no LoRA yet: its matrices wait for a rank
    at.number_input(key="cfg_lora").set_value(8).run()
    assert at.multiselect(key="cfg_lorat").value == list(LORA_MATRICES) and not at.multiselect(key="cfg_lorat").disabled
    at.multiselect(key="cfg_lorat").unselect("k").unselect("o").unselect("out").run()
    cfg, _ = check_one_truth(at)
    assert (cfg.block_order, cfg.unique_ends, cfg.repeat, cfg.lora_rank, cfg.lora_targets) == (
        "cycle", True, 2, 8, "q-v-in")
    assert {k: at.query_params[k] for k in ("order", "ends", "rep", "lora", "lorat")} == {
        "order": "cycle", "ends": "1", "rep": "2", "lora": "8", "lorat": "q-v-in"}
    assert total_on_page(at) == fmt_params(count_params(cfg).total)
    at.number_input(key="cfg_lora").set_value(0).run()  # no LoRA: its matrices go back to all six, off the link
    assert computed(at)[0].lora_targets == ALL_LORA_TARGETS and "lorat" not in at.query_params
    check_one_truth(at)


def test_a_lora_rank_on_shared_attention_takes_the_attention_matrices(app):
    """A rank set alone takes the matrices of the blocks some positions share (the FFN is every layer's own here):
    the coerce rule, not a refusal the visitor could not get out of (the matrices wait for a rank)."""
    at = app({"sharing": "attention"})
    at.number_input(key="cfg_lora").set_value(4).run()
    assert not at.error and computed(at)[0].lora_targets == "q-k-v-o"
    assert at.multiselect(key="cfg_lorat").value == ["q", "k", "v", "o"]
    check_one_truth(at)
    at.selectbox(key="cfg_sharing").set_value("none").run()  # nothing shared, no repeat: no LoRA is left
    assert computed(at)[0].lora_rank == 0 and at.number_input(key="cfg_lora").disabled
    check_one_truth(at)


@pytest.mark.parametrize(("edits", "rule"), [
    ((("number_input", "cfg_lora", 769),), "lora_rank must be at most 768 on 'q'"),
    ((("checkbox", "cfg_ends", True), ("number_input", "cfg_G", 11)),
     "num_hidden_groups must be at most num_layers - 2 (10) with unique_ends"),
    ((("number_input", "cfg_lora", 8), ("multiselect", "cfg_lorat", [])), "lora_targets must be one or more of"),
])
def test_a_scheme_edit_that_cannot_form_a_model_is_not_applied_and_says_why(app, edits, rule):
    at = app()
    for kind, key, value in edits[:-1]:
        getattr(at, kind)(key=key).set_value(value).run()
    before = computed(at)[0]
    kind, key, value = edits[-1]
    getattr(at, kind)(key=key).set_value(value).run()
    said = at.error[0].value.replace("\\", "")
    assert said.startswith("Not applied") and rule in said, said
    assert computed(at)[0] == before
    check_one_truth(at)  # every widget back at the config the page still computes with


def test_a_bert_has_no_scheme_and_a_link_with_one_is_drawn_whole(app):
    at = app({"lora": "8", "lorat": "q-v-in", "order": "cycle", "G": "3", "rep": "3", "ends": "1"})
    assert not at.warning and computed(at)[0].lora_targets == "q-v-in"
    assert at.multiselect(key="cfg_lorat").value == ["q", "v", "in"]
    check_one_truth(at)
    at.radio(key="cfg_family").set_value("bert").run()
    cfg, _ = check_one_truth(at)
    assert {k: getattr(cfg, k) for k in SHARING_SCHEME} == dict(SHARING_SCHEME)
    assert all(_element(at, f"cfg_{k}").disabled for k in SCHEME_QUERY_KEYS)


# ----------------------------------------------------------------------------- random sequences of a visitor's actions
PRESET_NAMES = list(ALL_PRESETS)
# Every preset as its own config.json (what the Explorer's download writes).
PRESET_FILES = {name: config_to_hf(cfg) for name, cfg in ALL_PRESETS.items()}
# What visitors upload: those, and published files as their repositories hold them (written out by hand).
UPLOAD_FILES = {**PRESET_FILES, "electra-small published": ELECTRA_SMALL_FILE,
                "deberta-v3-base published ('p2c|c2p')": DEBERTA_V3_BASE,
                "nomic-bert-2048 published (GPT-2 keys)": NOMIC_BERT_2048, "nomic 512x6 (GPT-2 keys)": NOMIC_SMALL}


class SidebarVisitor(RuleBasedStateMachine):
    """One visitor's session: preset picks, uploads of every preset's own config.json, slider, box and number
    edits, family switches, ALBERTize and back, Reset, and the current link reopened in a fresh session. After every
    step: widgets = computed = link; after a preset pick or an upload, the exact total of that preset or file."""

    @initialize()
    def open_app(self):
        self.at = AppTest.from_file(APP, default_timeout=60)
        self.at.run()
        self.expect_total: int | None = None

    def _run(self, el, value) -> None:
        el.set_value(value).run()
        self.expect_total = None

    @rule(name=st.sampled_from(PRESET_NAMES))
    def pick_preset(self, name):
        self.at.selectbox(key=sidebar.PRESET_KEY).set_value(name).run()
        self.expect_total = count_params(ALL_PRESETS[name]).total

    @rule(name=st.sampled_from(list(UPLOAD_FILES)))
    def upload_file(self, name):
        _upload(self.at, UPLOAD_FILES[name], "config.json")
        assert "Loaded config.json" in " ".join(c.value.replace("\\", "") for c in self.at.sidebar.caption), name
        self.expect_total = count_params(config_from_hf(UPLOAD_FILES[name])).total

    @rule(key=st.sampled_from(_SLIDERS), data=st.data())
    def move_slider(self, key, data):
        el = self.at.slider(key=f"cfg_{key}")
        lo, hi, step = sidebar.SLIDER_RANGES[key]
        value = data.draw(st.integers(lo // step, min(hi, 2048 if key == "H" else 48) // step)) * step
        self._run(el, value)

    @rule(key=st.sampled_from(_NUMBERS), data=st.data())
    def type_number(self, key, data):
        el = self.at.number_input(key=f"cfg_{key}")
        if el.disabled:
            return
        value = data.draw(st.one_of(st.integers(int(el.min), min(int(el.max), 4096)), st.just(el.value * 2)))
        self._run(el, max(int(el.min), min(int(el.max), value)))

    @rule(key=st.sampled_from(_BOXES + ("family",)), data=st.data())
    def choose(self, key, data):
        el = self.at.radio(key="cfg_family") if key == "family" else self.at.selectbox(key=f"cfg_{key}")
        if el.disabled:
            return
        values = [v for v in el.options]
        index = data.draw(st.integers(0, len(values) - 1))
        if key == "heads":
            self._run(el, int(values[index].split()[0]))
        elif key == "family":
            self._run(el, el.options[index])
        else:
            el.select_index(index).run()
            self.expect_total = None

    @rule(key=st.sampled_from(("keep4h", "tied")))
    def flip(self, key):
        el = self.at.toggle(key="cfg_keep4h") if key == "keep4h" else self.at.checkbox(key="cfg_tied")
        if not el.disabled:
            self._run(el, not el.value)

    @rule(key=st.sampled_from(_SCHEME_BOXES + _SCHEME_CHECKS + _SCHEME_NUMBERS + _SCHEME_MULTI), data=st.data())
    def edit_scheme(self, key, data):
        """The sharing schemes since ALBERT: a block order, unique ends, a repeat, a LoRA rank (small ones, and now
        and then one above a matrix's rank, which is refused) and its matrices (an empty set is refused too)."""
        el = _element(self.at, f"cfg_{key}")
        if el.disabled:
            return
        if key in _SCHEME_BOXES:
            el.select_index(data.draw(st.integers(0, len(el.options) - 1))).run()
        elif key in _SCHEME_CHECKS:
            el.set_value(not el.value).run()
        elif key == "rep":
            el.set_value(data.draw(st.integers(int(el.min), int(el.max)))).run()
        elif key == "lora":
            el.set_value(data.draw(st.one_of(st.sampled_from((0, 1, 4, 8, 64)), st.integers(0, 2048)))).run()
        else:
            el.set_value(data.draw(st.lists(st.sampled_from(LORA_MATRICES), unique=True, max_size=6))).run()
        self.expect_total = None

    @rule(key=st.sampled_from(_WL_BOXES + _WL_NUMBERS + _WL_TOGGLES), data=st.data())
    def edit_workload(self, key, data):
        el = _element(self.at, f"wl_{key}")
        if el.disabled:
            return
        if key in _WL_BOXES:
            el.select_index(data.draw(st.integers(0, len(el.options) - 1))).run()
        elif key in _WL_NUMBERS:
            el.set_value(data.draw(st.integers(int(el.min), min(int(el.max), 2048)))).run()
        else:
            el.set_value(not el.value).run()
        self.expect_total = None

    @precondition(lambda self: computed(self.at)[0].family != "bert")
    @rule(back=st.booleans())
    def albertize(self, back):
        """ALBERT's two ideas from the sidebar: E = 128 and all layers shared (and back to no sharing)."""
        self.at.number_input(key="cfg_E").set_value(min(128, self.at.slider(key="cfg_H").value)).run()
        self.at.selectbox(key="cfg_sharing").set_value("none" if back else "all").run()
        self.expect_total = None

    @rule()
    def reset(self):
        self.at.button(key=sidebar.RESET_KEY).click().run()
        self.expect_total = count_params(ModelConfig()).total

    @rule()
    def reopen_link(self):
        """The current link opened in a fresh session gives the same config (bar layer_norm_eps) and workload."""
        before = computed(self.at)
        fresh = AppTest.from_file(APP, default_timeout=60)
        fresh.query_params.update(dict(self.at.query_params))
        fresh.run()
        assert not fresh.warning, [w.value for w in fresh.warning]
        after = computed(fresh)
        assert (_without_eps(after[0]), after[1]) == (_without_eps(before[0]), before[1])
        self.at = fresh
        self.expect_total = None if before[0].layer_norm_eps != after[0].layer_norm_eps else \
            count_params(after[0]).total

    @invariant()
    def one_truth(self):
        if not hasattr(self, "at"):
            return
        cfg, _ = check_one_truth(self.at)
        if self.expect_total is not None:
            assert count_params(cfg).total == self.expect_total


# Derandomized: `make test` runs the same 25 sequences every time (CI must not depend on luck). Explore more with
# `run_state_machine_as_test(SidebarVisitor, settings=settings(max_examples=..., derandomize=False))`: 230 random
# sequences of 20 steps passed on 2026-12-04 after the int8 fix below, which such a run found.
SidebarVisitor.TestCase.settings = settings(
    max_examples=25, stateful_step_count=15, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_random_visitor_sequences = SidebarVisitor.TestCase


def test_every_preset_file_reads_back_as_the_preset():
    """The uploads the state machine makes are the presets themselves (the file reader and writer agree)."""
    for name, data in PRESET_FILES.items():
        assert config_from_hf(data) == ALL_PRESETS[name], name
    assert {f.name for f in dataclasses.fields(ModelConfig)} - set(QUERY_KEYS.values()) - set(
        AXIS_QUERY_KEYS.values()) - set(SCHEME_QUERY_KEYS.values()) == {"layer_norm_eps"}  # no link carries it
    assert set(SCHEME_QUERY_KEYS.values()) == set(SHARING_SCHEME)  # every scheme field has its widget


# Every page opened from a link that sets its own boxes away from their first option (and the sidebar's).
_PAGE_LINKS = {
    "ui/explorer/page.py": {}, "ui/scaling/page.py": {}, "ui/compare/page.py": {}, "ui/paper/page.py": {},
    "ui/hardware/page.py": {"hw": "h200", "chips": "8"},
    "ui/train/page.py": {"exp": "table4"},
    "ui/live/page.py": {"text": "A visitor's own words.\nAnd a second segment."},
}


def test_every_box_on_every_page_is_drawn_with_its_value(app):
    """A box drawn without its index is painted with option 0 first, whatever the session holds; a text box
    without its value comes up empty. Every page, from a link that sets non-default values."""
    sidebar_link = {"opt": "adamw", "dtype": "bf16", "sharing": "ffn", "act": "relu"}
    for page, own in _PAGE_LINKS.items():
        at = app({**sidebar_link, **own}, page=page)
        assert not at.exception, (page, [e.value for e in at.exception])
        boxes = [*at.selectbox, *at.radio]
        assert boxes, page
        for box in boxes:
            assert box.proto.HasField("default") and box.proto.default == box.index, (page, box.label)
        for area in [*at.text_area, *at.text_input]:
            assert area.proto.default == area.value, (page, area.label)
        for key, value in own.items():
            assert at.query_params.get(key) == value, (page, key)


def test_the_discriminator_head_is_offered_where_transformers_has_its_class(app):
    """ELECTRA's replaced-token discriminator (ElectraForPreTraining) was offered, under ELECTRA's class name, for
    every family after BERT. It is offered for ELECTRA; elsewhere only while the config has it (a link), named as
    having no class."""
    at = app({"family": "roberta"})
    assert "discriminator" not in [o.split()[0] for o in at.selectbox(key="cfg_head").options]
    assert not any("discriminator" in o for o in at.selectbox(key="cfg_head").options)
    at = app({"family": "electra"})
    assert any(o.startswith("replaced-token discriminator (ElectraForPreTraining") for o in
               at.selectbox(key="cfg_head").options)
    at = app({"family": "roberta", "head": "discriminator"})  # a link: the box holds what the page computes
    box = at.selectbox(key="cfg_head")
    assert computed(at)[0].head == "discriminator" and box.value == "discriminator"
    assert "no transformers class for this family" in box.options[box.index]
    check_one_truth(at)


def test_int8_weights_on_every_family_and_its_albertized_twin(app):
    """Found by the state machine (roberta-base, then dtype int8): the ALBERTize comparison estimated training
    memory for int8 weights, which are inference-only, and the Explorer showed the error box. An inference-only
    workload compares what inference costs."""
    from albert_core.configuration.presets import FAMILY_BASE_PRESET
    from albert_core.counting.memory import estimate_memory
    from albert_core.hardware.albertized import compare_albertized

    for family, name in FAMILY_BASE_PRESET.items():
        at = app({"dtype": "int8"})
        at.selectbox(key=sidebar.PRESET_KEY).set_value(name).run()
        if family != "bert":
            at.number_input(key="cfg_E").set_value(min(128, at.slider(key="cfg_H").value)).run()
            at.selectbox(key="cfg_sharing").set_value("all").run()
        assert computed(at)[1].dtype == "int8", family
        check_one_truth(at)
    original, wl = ALL_PRESETS["roberta-base"], Workload(dtype="int8")
    pair = compare_albertized(original, original.replace(embedding_size=128, sharing="all"), wl)
    measures = [r.measure for r in pair.rows]
    assert not any("training" in m or "largest batch" in m for m in measures), measures
    working = pair.row("inference working set (activations estimated)")
    assert working.original == estimate_memory(original, wl.batch, wl.seq_len, "int8", training=False).total
