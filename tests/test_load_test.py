"""The load-test tool's pure parts: the browser-like widget state it sends, its moves, its statistics and
the capacity arithmetic, plus one rerun against a scripted fake websocket (no server)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput

from scripts import load_test as lt
from ui.urls import config_from_query


def arun(coro):
    """Run a coroutine on its own loop in a worker thread (another test may leave a loop running here)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def slider(wid="$$ID-aa-cfg_H", value=None, default=(128.0,), lo=128, hi=4096, step=64):
    e = Element()
    e.slider.id = wid
    e.slider.min, e.slider.max, e.slider.step = lo, hi, step
    e.slider.default.extend(default)
    if value is not None:
        e.slider.value.extend([value])
        e.slider.set_value = True
    return e.slider


def number(wid="$$ID-bb-live_layer", value=None, default=1, lo=1, hi=12, integer=True):
    e = Element()
    p = e.number_input
    p.id, p.default, p.min, p.max, p.step = wid, default, lo, hi, 1
    p.has_min = p.has_max = True
    p.data_type = NumberInput.INT if integer else NumberInput.FLOAT
    if value is not None:
        p.value, p.set_value = value, True
    return p


def selectbox(wid="$$ID-cc-cfg_act", options=("gelu", "gelu_new", "relu"), default=0, raw=None):
    e = Element()
    p = e.selectbox
    p.id, p.default = wid, default
    p.options.extend(options)
    if raw is not None:
        p.raw_value, p.set_value = raw, True
    return p


def test_widget_state_is_what_a_browser_reports():
    assert list(lt.widget_state("slider", slider(value=768.0)).double_array_value.data) == [768.0]
    assert list(lt.widget_state("slider", slider()).double_array_value.data) == [128.0]  # default when not set
    s = lt.widget_state("number_input", number(value=7))
    assert s.WhichOneof("value") == "int_value" and s.int_value == 7
    f = lt.widget_state("number_input", number(value=0.5, integer=False))
    assert f.WhichOneof("value") == "double_value" and f.double_value == 0.5
    assert lt.widget_state("selectbox", selectbox(default=2)).string_value == "relu"
    assert lt.widget_state("selectbox", selectbox(raw="gelu_new")).string_value == "gelu_new"
    assert lt.widget_state("selectbox", selectbox(default=-1)) is None  # no selection: nothing to report
    e = Element()
    e.multiselect.id = "$$ID-dd-pins"
    e.multiselect.options.extend(["a", "b", "c"])
    e.multiselect.default.extend([0, 2])
    assert list(lt.widget_state("multiselect", e.multiselect).string_array_value.data) == ["a", "c"]
    e.checkbox.id, e.checkbox.default = "$$ID-ee-cfg_tied", True
    assert lt.widget_state("checkbox", e.checkbox).bool_value is True
    assert lt.widget_state("plotly_chart", e.plotly_chart) is None


def test_merge_keeps_the_visitors_value_unless_the_server_sets_one():
    h, act = "$$ID-aa-cfg_H", "$$ID-cc-cfg_act"
    states = lt.merge_states({}, {h: ("slider", slider(value=512.0)), act: ("selectbox", selectbox(raw="relu"))},
                             full_run=True)
    states[h].double_array_value.data[0] = 576.0  # the visitor moved H
    # The next run sends H without set_value and with its declared default: the visitor's value stays.
    after = lt.merge_states(states, {h: ("slider", slider()), act: ("selectbox", selectbox(raw="gelu"))},
                            full_run=True)
    assert list(after[h].double_array_value.data) == [576.0]
    assert after[act].string_value == "gelu"  # set by the server (session state): the server wins
    # A full run drops widgets it did not send; a fragment run keeps the others.
    assert set(lt.merge_states(after, {act: ("selectbox", selectbox())}, full_run=True)) == {act}
    assert set(lt.merge_states(after, {}, full_run=False)) == {h, act}


def test_user_key_of_widget_ids():
    assert lt.user_key("$$ID-ab84fd7404d170580628d25e99a43613-cfg_H") == "cfg_H"
    assert lt.user_key("$$ID-0123-live-layer-x") == "live-layer-x"  # a key may contain dashes
    assert lt.user_key("$$ID-0123-") is None
    assert lt.user_key("plain") is None


def test_moves_step_and_turn_back_at_the_ends():
    p = slider(lo=128, hi=256, step=64)
    assert lt.next_value("slider", p, 128, 1) == (192, 1)
    assert lt.next_value("slider", p, 256, 1) == (192, -1)  # at the top: back down
    assert lt.next_value("slider", p, 128, -1) == (192, 1)
    values, value, direction = [], 1, 1
    for _ in range(5):
        value, direction = lt.next_value("number_input", number(hi=3), value, direction)
        values.append(value)
    assert values == [2, 3, 2, 1, 2]
    assert lt.next_value("selectbox", selectbox(), "relu", 1) == ("gelu_new", -1)
    with pytest.raises(ValueError, match="no room"):
        lt.next_value("number_input", number(lo=1, hi=1), 1, 1)
    with pytest.raises(ValueError, match="cannot be moved"):
        lt.next_value("checkbox", None, True, 1)


def test_percentile_matches_numpy():
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 100):
        xs = list(rng.exponential(size=n))
        for q in (0.5, 0.95, 1.0):
            assert lt.percentile(xs, q) == pytest.approx(float(np.percentile(xs, 100 * q)))
    with pytest.raises(ValueError):
        lt.percentile([], 0.5)


def test_capacity_arithmetic():
    # 0.05 s of CPU per rerun, 70 % of one core: 14 reruns/s; a visitor every 10 s: 140 visitors.
    assert lt.capacity(0.05, 2, 1, 10, 0.7) == {"cores_used": 1, "reruns_per_s": 14.0, "visitors": 140}
    assert lt.capacity(0.05, 2, 2, 10, 0.7)["visitors"] == 280
    assert lt.capacity(0.05, 2, 4, 10, 0.7)["cores_used"] == 2  # more processes than cores buys nothing
    assert lt.capacity(0.4, 2, 2, 5, 0.5) == {"cores_used": 2, "reruns_per_s": 2.5, "visitors": 12}
    with pytest.raises(ValueError):
        lt.capacity(0, 2, 1, 10, 0.7)
    with pytest.raises(ValueError):
        lt.capacity(0.1, 2, 1, 10, 1.5)


def test_capacity_table_uses_the_median_single_process_cost():
    def step(s, cpu):
        return {"sessions": s, "pages": {"explorer": {"server_cpu_s_per_rerun": cpu}}}

    results = [{"processes": 1, "steps": [step(1, 0.1), step(10, 0.2), step(20, 0.6)]},
               {"processes": 2, "steps": [step(10, 9.0)]}]  # not used: per-rerun cost comes from 1 process
    (row,) = lt.capacity_table(results, 2, [10], 0.5)
    assert row["server_cpu_s_per_rerun"] == 0.2
    assert row["visitors_1proc_every_10s"] == 25 and row["visitors_2proc_every_10s"] == 50


def test_arguments_are_checked():
    assert lt.parse_list("1, 10,20") == [1, 10, 20]
    assert lt.parse_list("all", lt.PAGES, str) == list(lt.PAGES)
    with pytest.raises(ValueError, match="unknown page"):
        lt.parse_list("explorer,nope", lt.PAGES, str)
    lt.check_loopback("http://127.0.0.1:8501")
    with pytest.raises(ValueError, match="loopback"):
        lt.check_loopback("http://example.org:8501")
    with pytest.raises(SystemExit):
        lt.main(["--sessions", "0"])
    with pytest.raises(SystemExit):
        lt.main(["--url", "http://10.0.0.1:8501"])


class FakeSocket:
    """Answers each sent BackMsg with a scripted list of ForwardMsgs."""

    def __init__(self, replies: list[list[ForwardMsg]]):
        self.replies, self.sent, self.queue = replies, [], []

    async def send(self, data: bytes) -> None:
        msg = BackMsg()
        msg.ParseFromString(data)
        self.sent.append(msg)
        self.queue.extend(m.SerializeToString() for m in self.replies.pop(0))

    async def recv(self) -> bytes:
        if not self.queue:
            await asyncio.sleep(3600)
        return self.queue.pop(0)


def element_msg(proto_field: str, proto, fragment: str = "") -> ForwardMsg:
    m = ForwardMsg()
    getattr(m.delta.new_element, proto_field).CopyFrom(proto)
    m.delta.fragment_id = fragment
    return m


def finished(status) -> ForwardMsg:
    m = ForwardMsg()
    m.script_finished = status
    return m


def test_a_visitor_moves_a_slider_like_a_browser():
    h = slider(value=512.0)
    nav, query = ForwardMsg(), ForwardMsg()
    nav.navigation.page_script_hash = "page-hash"
    query.page_info_changed.query_string = "H=512"
    boom = ForwardMsg()
    boom.delta.new_element.exception.type = "KeyError"
    load = [finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN), nav, element_msg("slider", h), query,
            finished(ForwardMsg.FINISHED_SUCCESSFULLY)]
    move = [element_msg("slider", slider()), boom, finished(ForwardMsg.FINISHED_SUCCESSFULLY)]
    v = lt.Visitor("ws://127.0.0.1:1/_stcore/stream", "scaling", 3, timeout=5)
    v.ws = FakeSocket([load, move])

    async def go():
        await v.open_page("scaling")
        return await v.move("cfg_H")

    assert arun(go()) >= 0
    first, second = (m.rerun_script for m in v.ws.sent)
    assert first.page_name == "scaling" and first.query_string == lt.start_query(3)
    assert second.page_script_hash == "page-hash" and second.query_string == "H=512"
    (state,) = second.widget_states.widgets
    assert state.id == h.id and list(state.double_array_value.data) == [576.0]  # 512 + one step of 64
    assert v.errors == ["exception on the page: KeyError: "]


def test_message_cache_keeps_the_most_recently_used():
    cache: dict[str, bytes] = {}
    for k in "abc":
        lt.remember(cache, k, k.encode(), limit=2)
    assert list(cache) == ["b", "c"]
    lt.remember(cache, "b", b"b", limit=2)  # used again: now the newest
    lt.remember(cache, "d", b"d", limit=2)
    assert list(cache) == ["b", "d"]


def test_a_reference_stands_for_the_cached_message():
    chart = ForwardMsg()
    chart.delta.new_element.slider.CopyFrom(slider(value=1024.0))
    chart.hash, chart.metadata.cacheable = "h1", True
    ref = ForwardMsg()
    ref.ref_hash = "h1"
    done = finished(ForwardMsg.FINISHED_SUCCESSFULLY)
    v = lt.Visitor("ws://127.0.0.1:1/_stcore/stream", "explorer", 0, timeout=5)
    v.ws = FakeSocket([[chart, done], [ref, done]])
    arun(v.rerun())
    arun(v.rerun())
    assert list(v.ws.sent[1].rerun_script.cached_message_hashes) == ["h1"]  # reported, as a browser does
    assert v.cache_refs == 1 and not v.errors
    assert list(v.states["$$ID-aa-cfg_H"].double_array_value.data) == [1024.0]  # the widget came by reference


def test_a_widget_in_a_fragment_reruns_only_its_fragment():
    h, layer = slider(value=768.0), number(value=1, hi=12)
    full = [element_msg("slider", h), element_msg("number_input", layer, fragment="frag-1"),
            finished(ForwardMsg.FINISHED_SUCCESSFULLY)]
    fragment = [element_msg("number_input", number(hi=12), fragment="frag-1"),
                finished(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)]
    v = lt.Visitor("ws://127.0.0.1:1/_stcore/stream", "live_model", 0, timeout=5)
    v.ws = FakeSocket([full, fragment])
    arun(v.rerun())
    arun(v.move("live_layer"))
    sent = v.ws.sent[1].rerun_script
    assert sent.fragment_id == "frag-1"
    assert {w.id: w.int_value for w in sent.widget_states.widgets if w.id == layer.id} == {layer.id: 2}
    assert set(v.states) == {h.id, layer.id}  # the sidebar's widget survives the fragment run
    assert v.states[layer.id].int_value == 2


def test_each_series_starts_from_configs_of_its_own():
    """Steps (and the bench's pages) must not share configs, or one's moves are answered by another's caches;
    the series only changes the token types, which no page's work depends on."""
    from urllib.parse import parse_qsl


    def cfg(index, series):
        return config_from_query(dict(parse_qsl(lt.start_query(index, series))))

    base = cfg(0, 0)
    assert (base.hidden_size, base.num_heads, base.intermediate_size, base.type_vocab_size) == (256, 4, 1024, 2)
    configs = {cfg(i, s) for i in range(12) for s in range(16)}
    assert len(configs) == 12 * 16
    assert cfg(3, 5) == cfg(3, 0).replace(type_vocab_size=7)


def test_latency_goal_is_judged_per_serving_setup():
    def setup(processes, p95s):
        pages = {f"page{i}": {"p95_s": v} for i, v in enumerate(p95s)}
        return {"processes": processes, "steps": [{"sessions": 1, "pages": {"x": {"p95_s": 5.0}}},
                                                  {"sessions": 10, "pages": pages}]}

    one_slow_page = setup(1, [0.4, 1.02])  # one page over 1 s: this setup misses
    goals = lt.p95_goals([one_slow_page, setup(2, [0.3, 0.49])])
    assert goals == {"p95 < 1 s at 10 sessions, 1 process": False,
                     "p95 < 1 s at 10 sessions, 2 processes behind nginx": True,
                     "p95 < 1 s at 10 sessions (one setup)": True}
    assert not lt.p95_goals([one_slow_page])["p95 < 1 s at 10 sessions (one setup)"]
    assert not lt.p95_goals([setup(2, [0.3, None])])["p95 < 1 s at 10 sessions (one setup)"]  # unmeasured
    assert lt.p95_goals([]) == {"p95 < 1 s at 10 sessions (one setup)": False}


def test_a_button_press_is_one_rerun_with_its_trigger_and_page_errors_are_kept():
    e = Element()
    e.button.id = "$$ID-dd-train_submit"
    alert = ForwardMsg()
    alert.delta.new_element.alert.body = "you already have 6 runs queued or running"
    alert.delta.new_element.alert.format = 1  # ERROR
    page = [element_msg("button", e.button), finished(ForwardMsg.FINISHED_SUCCESSFULLY)]
    v = lt.Visitor("ws://127.0.0.1:1/_stcore/stream", "train", 0, timeout=5)
    v.ws = FakeSocket([page, [alert, *page], page])
    arun(v.rerun())
    arun(v.press("train_submit"))
    arun(v.rerun())
    triggers = [[w.trigger_value for w in m.rerun_script.widget_states.widgets if w.id == e.button.id]
                for m in v.ws.sent]
    assert triggers == [[], [True], []]  # the click is sent once, as a browser sends it
    assert v.alerts == ["you already have 6 runs queued or running"]
    with pytest.raises(KeyError, match="no button with key 'train_clear'"):
        arun(v.press("train_clear"))


def test_lab_arguments_are_bounded():
    with pytest.raises(SystemExit):
        lt.main(["--lab-visitors", "11"])
    with pytest.raises(SystemExit):
        lt.main(["--vocabularies", ",".join(str(1000 * v) for v in range(2, 2 + lt.MAX_VOCABULARIES + 1))])
    with pytest.raises(SystemExit):
        lt.main(["--vocabularies", "2500,2500"])


def test_each_vocabulary_visitor_asks_for_short_runs_with_its_own_vocabulary():
    plans = lt.lab_plans(1, 2, [2500, 3500])
    assert len(plans) == 5
    vocab = plans[3:]
    assert ["V=2500&" in q for q, _ in vocab] == [True, False] and "V=3500&" in vocab[1][0]
    assert all(vals["train_size"] == "The sidebar's size" and vals["train_steps"] <= 200 for _, vals in vocab)
    assert vocab[0][1]["train_seeds"] != vocab[1][1]["train_seeds"]  # runs nobody else asked for



def test_probe_visitors_tick_the_probe_and_attackers_do_not():
    plans = lt.lab_plans(2, 2, probe=True)
    assert [vals.get("train_probe") for _, vals in plans] == [True, True, None, None]
    assert "train_probe" not in lt.lab_plans(1, 0)[0][1]
    e = Element()
    e.checkbox.id, e.checkbox.default = "$$ID-ee-train_probe", False
    state = lt.widget_state("checkbox", e.checkbox)
    lt.set_state_value("checkbox", state, True)
    assert state.bool_value is True  # a checkbox is sent as a bool, as the browser sends it


def test_live_visitors_open_the_live_page_on_family_presets_the_docker_budget_builds():
    from urllib.parse import parse_qsl

    from albert_core.configuration.presets import ALL_PRESETS
    from albert_core.live.budget import check_budget

    for name in lt.LIVE_PRESETS:
        cfg = config_from_query(dict(parse_qsl(lt.live_query(name))))
        assert cfg == ALL_PRESETS[name]
        assert check_budget(cfg, 1, min(128, cfg.max_position_embeddings), budget_bytes=512 * 2**20).ok
    assert len({ALL_PRESETS[n].family for n in lt.LIVE_PRESETS}) >= 4  # several families
    with pytest.raises(SystemExit):
        lt.main(["--live-visitors", "11"])
    with pytest.raises(SystemExit):
        lt.main(["--envelope", "lots"])


def test_the_envelope_goal_is_per_process():
    def setup(processes, peak):
        return {"processes": processes, "server_rss_overall_peak_bytes": peak, "steps": []}

    mib = 2**20
    key = "peak RSS within 1,000 MiB per process"
    assert lt.envelope_goal([setup(1, 990 * mib)], 1000 * mib) == {key: True}
    assert lt.envelope_goal([setup(1, 1001 * mib)], 1000 * mib) == {key: False}
    assert lt.envelope_goal([setup(1, 990 * mib), setup(2, 1900 * mib)], 1000 * mib) == {key: True}
    assert lt.envelope_goal([setup(1, None)], 1000 * mib) == {key: False}
