"""Live model: build the current config in PyTorch (within the memory budget), prove the analytic
count component by component, run it on your text, time it, and look inside (layer smoothness,
attention maps, saved activations). A transformers checkpoint folder can stand in for the config."""

from __future__ import annotations

import streamlit as st

from albert_core.format import escape_markdown
from ui.live import build as live_build
from ui.live import lab_demos as live_lab_demos
from ui.live import sources as live_sources
from ui.live import text as live_text
from ui.live.gate import busy_or_error
from ui.live.models import MAX_TOKENS, model_of
from ui.state import current

cfg, wl = current()
st.title("Live model")
st.caption(
    "A real PyTorch encoder of the configuration: built, counted, run and timed on this machine. "
    "It proves the analytic numbers of the other pages."
)

# ----------------------------------------------------------------------------- which model
source = live_sources.pick()
dtype = live_sources.compute_dtype(wl.dtype)
chosen = live_sources.load(source, cfg, dtype)  # stops the page when nothing can be loaded
seq_cap = min(MAX_TOKENS, chosen.cfg.max_seq_len)  # the position table's rows after its offset (RoBERTa: P - 2)
st.subheader(f"{escape_markdown(chosen.cfg.label)} · {chosen.cfg.head_label} · {chosen.dtype}")
if chosen.ref is None:  # the sidebar's config
    st.caption(live_build.used_fields_note(seq_cap))

# ----------------------------------------------------------------------------- budget, build, count proof
check = live_build.show_budget(chosen.cfg, seq_cap, chosen.dtype)
proof = live_build.build_and_count(chosen.cfg, chosen.dtype, seq_cap, chosen.ref, check)
live_build.show_proof(proof)
if not proof.runnable:
    st.stop()

# ----------------------------------------------------------------------------- run on text
live_text.text_section(proof.ref, seq_cap)
if chosen.lab_run is not None:
    try:
        trained = model_of(proof.ref)  # cached, unless the cache freed it since
    except ValueError as exc:  # MemoryBudgetError / BusyError: reloading it does not fit now
        busy_or_error("run the trained model's demos", exc)
    else:
        live_lab_demos.render_demos(trained, proof.ref.folder, chosen.lab_run, seq_cap)
