"""Compare: up to eight pinned configs side by side, with deltas against the first; the pins live in the URL."""

from __future__ import annotations

import streamlit as st

from albert_core.configuration.presets import ALL_PRESETS, config_name
from albert_core.format import escape_markdown
from ui import urls
from ui.compare.view import compare_view, pin_label, published_view
from ui.render import chart
from ui.state import current
from ui.url_state import seed_from_url_once

PIN_PARAM = urls.PIN_PARAM
PINS_KEY = "compare_pins"  # the multiselect
_PINS = "_compare_pins"  # survives page switches (widget state is dropped when the widget is not drawn)
NAME_PIN_KEY, NAME_TEXT_KEY = "compare_name_pin", "compare_name_text"
_NAME_PROBLEM = "_compare_name_problem"
_PIN_PROBLEM = "_compare_pin_problem"
_SEEDED = "_compare_seeded"
DEFAULT_PINS = ["bert-base", "albert-base"]

cfg, wl = current()
ss = st.session_state


def _seed(query: dict[str, str]) -> list[str]:
    """The URL's pins, else a BERT vs ALBERT default."""
    ss[_PINS], problems = urls.decode_pins(query[PIN_PARAM]) if PIN_PARAM in query else (DEFAULT_PINS, [])
    return problems


seed_from_url_once(_SEEDED, _seed)


def _label(entry: str) -> str:
    """The pin's name in the table and chart: the visitor's, a twin's "<preset> · ALBERTized", else the config's."""
    return pin_label(entry)


def _option(entry: str) -> str:
    """The multiselect's text: unique for every option (Streamlit maps the text back to the option)."""
    body, name = urls.split_pin(entry)
    return f"{name} ({config_name(urls.decode_pin(body))})" if name else pin_label(entry)


def _pin_current() -> None:
    entry = urls.encode_pin(cfg)
    same = [e for e in ss[_PINS] if urls.decode_pin(e) == cfg]
    if same:  # say so rather than do nothing
        ss[_PIN_PROBLEM] = f"The sidebar's config is pinned already, as {_label(same[0])}."
    elif len(ss[_PINS]) < urls.MAX_PINS:
        _set_pins([*ss[_PINS], entry])


def _set_pins(entries: list[str]) -> None:
    """The one place the pins change (callbacks run before the script, so the sidebar's link sees them)."""
    ss[_PINS] = entries
    st.query_params[PIN_PARAM] = urls.encode_pins(entries)


def _on_select() -> None:
    _set_pins(list(ss[PINS_KEY]))


def _on_name() -> None:
    entry, wanted = ss[NAME_PIN_KEY], ss[NAME_TEXT_KEY]
    ss.pop(_NAME_PROBLEM, None)
    if entry not in ss[_PINS]:
        return
    try:
        named = urls.encode_pin(urls.decode_pin(entry), wanted)
    except ValueError as exc:
        ss[_NAME_PROBLEM] = f"Pin not renamed: {exc}."
        return
    others = [urls.pin_name(e) for e in ss[_PINS] if e != entry]
    if urls.pin_name(named) in others:
        ss[_NAME_PROBLEM] = f"Pin not renamed: another pin is already called {urls.pin_name(named)}."
        return
    _set_pins([named if e == entry else e for e in ss[_PINS]])
    ss[NAME_TEXT_KEY] = ""


st.title("Compare")
st.caption(f"Every pinned config at the current workload: {wl.summary}. Deltas are relative to the first pin; "
           "the pins (and their names) are part of the link. A config without a name of yours is named after its "
           "preset: the label plus the fields that differ from it.")

ss[PINS_KEY] = list(ss[_PINS])
pinned = [urls.decode_pin(e) for e in ss[_PINS]]
options = [*ss[_PINS], *(p for p, pc in ALL_PRESETS.items() if pc not in pinned)]
c1, c2 = st.columns([5, 1], vertical_alignment="bottom")
with c1:
    st.multiselect("Pinned configs", options, key=PINS_KEY, format_func=_option, max_selections=urls.MAX_PINS,
                   on_change=_on_select, help="Add presets here, remove pins with ×; the first pin is the baseline.")
with c2:
    st.button("Pin current config", key="compare_pin_current", on_click=_pin_current,
              disabled=len(ss[_PINS]) >= urls.MAX_PINS, help=f"Add {config_name(cfg)} (from the sidebar).")
if _PIN_PROBLEM in ss:
    st.info(escape_markdown(ss.pop(_PIN_PROBLEM)))
if ss[_PINS]:
    with st.expander("Name a pin"):
        n1, n2, n3 = st.columns([3, 3, 1], vertical_alignment="bottom")
        n1.selectbox("Pin", ss[_PINS], key=NAME_PIN_KEY, format_func=_option)
        n2.text_input("Name", key=NAME_TEXT_KEY, max_chars=urls.MAX_PIN_NAME,
                      help="Letters, digits, spaces, - and _; empty gives the pin its config's name back.")
        n3.button("Name it", key="compare_name_apply", on_click=_on_name)
        if _NAME_PROBLEM in ss:
            st.warning(escape_markdown(ss[_NAME_PROBLEM]), icon="⚠️")

pins = ss[_PINS]
if st.query_params.get(PIN_PARAM) != urls.encode_pins(pins):
    st.query_params[PIN_PARAM] = urls.encode_pins(pins)

if not pins:
    st.info("Pin the current config or pick presets above to compare them.")
    st.stop()

view = compare_view(tuple(pins), wl)  # depends on the pins and the workload only: not on a sidebar move
for note in view.notes:
    st.caption(escape_markdown(note))
if wl.dtype == "int8":
    st.caption("int8 is inference-only: the memory column is the inference working set.")

delta_help = f"Change against {view.base}, the first pin; green = smaller (fewer parameters, FLOPs or bytes)."
# "%d": whole numbers as whole numbers ("plain" printed V=50000 as 50000.00000000001 in the browser).
arch = {k: st.column_config.NumberColumn(k, width="small", format="%d") for k in ("V", "E", "H", "L", "I", "G", "K")}
name_column = st.column_config.TextColumn("Config", pinned=True)  # sized to the longest name: never cut (issue 42)
# Two tables, so each fits a 1400-px page without sideways scrolling: what the pins cost, and what they are.
formats, badges = view.formats, view.badges
change = st.column_config.MultiselectColumn  # read-only here: a coloured badge per change
change_cfg = {"options": list(badges), "color": list(badges.values()), "help": delta_help}
st.dataframe(
    view.cost, hide_index=True, width="stretch",
    column_config={
        "name": name_column,
        "params": st.column_config.NumberColumn("Params", format=formats["params"],
                                                help="Unique parameters (tied weights once)."),
        "params_delta": change("Δ params", **change_cfg),
        "forward_flops": st.column_config.NumberColumn(
            "Forward FLOPs / seq", format=formats["forward_flops"],
            help=f"Matmul FLOPs for one sequence of {wl.seq_len} tokens."),
        "forward_flops_delta": change("Δ FLOPs", **change_cfg),
        "training_memory": st.column_config.NumberColumn(
            "Training memory", format=formats["training_memory"],
            help=f"Weights, gradients, optimizer states and activations at batch {wl.batch} × {wl.seq_len}, "
            f"{wl.dtype} (MB = 10⁶ bytes)."),
        "training_memory_delta": change("Δ memory", **change_cfg),
        "own_original": st.column_config.TextColumn(
            "vs its original", width="medium",
            help="An ALBERTized pin against the pin or the preset it was made from: each cost's change (the Δ columns "
            "compare every pin with the first)."),
    },
)
st.dataframe(
    view.arch, hide_index=True, width="stretch",
    column_order=view.arch.column_names,  # the scheme's columns only where a pin leaves ALBERT's scheme
    column_config={
        "name": st.column_config.TextColumn("Config", pinned=True),  # sized to the longest name: never cut
        "family": st.column_config.TextColumn("Family", width="small"),
        "heads": st.column_config.NumberColumn("Heads", width="small", format="%d"),
        "sharing": st.column_config.TextColumn("Sharing", width="small"),
        "order": st.column_config.TextColumn(
            "Block order", width="small", help="Which shared group layer i runs: contiguous groups (ALBERT, AABB) "
            "or a cycle, i mod G (ABAB)."),
        "ends": st.column_config.CheckboxColumn(
            "Unique ends", width="small", help="The first and last layers have weights of their own; the G groups "
            "share the layers between them."),
        "repeat": st.column_config.NumberColumn(
            "Repeat", width="small", format="%d", help="Each layer runs this many times in a row (MobileLLM-LS: 2)."),
        "lora": st.column_config.NumberColumn(
            "LoRA rank", width="small", format="%d", help="A LoRA of this rank at every executed position of a shared "
            "block (0: none)."),
        "lora_on": st.column_config.TextColumn(
            "LoRA on", width="small", help="The matrices that carry it: q, k, v, o (attention), in, out (FFN)."),
    } | arch,
)
chart(view.bars, key="compare_bars", width="stretch")
st.caption(view.takeaway)
if (published := published_view(tuple(pins))) is not None:
    with st.expander(f"Published quality of the pinned architectures ({published.num_rows} figures)"):
        st.dataframe(published, hide_index=True, width="stretch", key="compare_published")
        st.caption("As published, with their sources (the Quality vs cost page charts them): compare values of one "
                   "metric and protocol only. A config no one published has no score, and none is estimated.")
