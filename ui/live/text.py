"""The Live model page's "run it on your text" section: the visitor's text tokenized and run once (tokens
table), then latency and throughput, layer smoothness, the attention map of one layer and head, and the
saved activations measured against `estimate_memory`.

Fragments: a text edit reruns only this section, a layer or head change only the attention map; the
sidebar, the build and the count proof above are not redone. They take a `ModelRef`, never the model, and
fetch each run from its cache (`ui.live.runs`). Costly work waits for a click (`ui.live.gate`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from albert_core import settings
from albert_core.configuration.config import LIMITS
from albert_core.configuration.workload import DTYPE_BYTES
from albert_core.counting.flops import count_flops
from albert_core.counting.memory import estimate_memory
from albert_core.format import (
    direction,
    escape_markdown,
    fmt_bytes,
    fmt_duration,
    fmt_flops,
    fmt_pct,
    fmt_ratio,
)
from albert_core.live.analysis import attention_maps, layer_smoothness
from albert_core.live.budget import Cancelled, flops_fit
from albert_core.paper import SMOOTHNESS_FIGURE_SHORT
from ui.live import figures as fl
from ui.live.gate import busy_or_error, clicked_or_fast
from ui.live.models import ModelRef
from ui.live.runs import Run, run_text, saved_bytes, session_alive, timing
from ui.render import chart, takeaway
from ui.url_state import seed_widget, sync_widget

DEFAULT_TEXT = (
    "ALBERT shares one set of layer weights across the whole encoder.\n"
    "It still runs every layer, so it is not faster than BERT."
)
URL_TEXT = "text"  # the page's own URL key (the share link reopens the same text)
TEXT_MAX_CHARS = 2000


def tokens_frame(encoded: Any) -> pd.DataFrame:
    """One row per token (position, token, id, segment): read top to bottom, no sideways scroll."""
    return pd.DataFrame({
        "token": list(encoded.tokens),
        "id": [int(i) for i in encoded.ids],
        "segment": ["A" if int(t) == 0 else "B" for t in encoded.token_type_ids],
    })


def bounded(where: Any, label: str, top: int, key: str, rule: str, help: str) -> int:
    """A whole-number input from 1 to ``top``: a value above ``top`` is shown as ``top`` with a message
    naming the rule (a widget maximum alone turns the box red and says nothing)."""
    value = where.number_input(label, 1, LIMITS["num_layers"][1] * LIMITS["inner_group_num"][1], 1, key=key,
                               help=help)
    if value > top:
        where.warning(f"{label} {value} does not exist: {rule}; showing {label.lower()} {top}.")
        return top
    return int(value)


@st.fragment
def attention_section(ref: ModelRef, first: str, pair: str | None) -> None:
    cfg = ref.cfg
    st.subheader("Attention map")
    try:
        run = run_text(ref, first, pair)  # cached: no forward pass here, unless the cache freed it since
    except ValueError as exc:  # MemoryBudgetError / BusyError: the pass is redone and the server is full
        busy_or_error("draw the attention map", exc)
        return
    enc = run.encoded
    c = st.columns(2)
    # Bounded by the config with a message (a widget maximum only turns the box red without saying why).
    layer = bounded(c[0], "Executed layer", cfg.executed_layers, "live_layer",
                    f"this model executes L×K = {cfg.executed_layers} layers",
                    help=f"1 to L×K = {cfg.executed_layers}: every executed layer, shared or not, has its own "
                    "attention map.")
    head = bounded(c[1], "Head", cfg.num_heads, "live_head", f"this model has {cfg.num_heads} heads",
                   help=f"1 to {cfg.num_heads}.")
    weights, labels = attention_maps(run.output, int(layer) - 1, int(head) - 1, enc.tokens)
    chart(fl.attention_heatmap(weights, labels, int(layer) - 1, int(head) - 1),
          key="fig_live_attention", width="stretch")
    takeaway(escape_markdown(fl.attention_takeaway(weights, labels)))


@st.fragment
def text_section(ref: ModelRef, seq_cap: int) -> None:
    st.subheader("Run it on your text")
    first, pair = _read_text(seq_cap)
    try:
        with st.spinner("Tokenizing and running one forward pass…"):
            run = run_text(ref, first, pair)
    except ValueError as exc:  # MemoryBudgetError / BusyError included: kept outputs over budget, a full server
        busy_or_error("run this input", exc)
        return
    T = len(run.encoded)
    flops = count_flops(ref.cfg, 1, T).forward
    _show_tokens(run, flops, seq_cap)
    if not _show_speed(ref, run, first, pair, flops):
        return
    _show_smoothness(run, trained=bool(ref.folder))
    del run  # the fragment below fetches it from the cache; nothing here pins the tensors
    attention_section(ref, first, pair)
    _show_saved_activations(ref, first, pair, T, flops)


def _read_text(seq_cap: int) -> tuple[str, str | None]:
    """The text box (seeded from and written back to the URL): segment A and segment B (None if empty)."""
    seeded = seed_widget(URL_TEXT, "live_text", DEFAULT_TEXT, max_chars=TEXT_MAX_CHARS)
    text = st.text_area(
        "Text (first line: segment A; the rest: segment B)", seeded, max_chars=TEXT_MAX_CHARS, key="live_text",
        help=f"Tokenized to at most {seq_cap} tokens as [CLS] A [SEP] B [SEP]. Unless a checkpoint is loaded "
        "the weights are random (seeded): the outputs mean nothing, the shapes, costs and timings are real.",
    )
    sync_widget(URL_TEXT, text, DEFAULT_TEXT)
    first, _, rest = (text or "").strip().partition("\n")
    return first, rest.strip() or None


def _show_tokens(run: Run, flops: int, seq_cap: int) -> None:
    enc = run.encoded
    T = len(enc)
    tok = tokens_frame(enc)
    left, right = st.columns([2, 3])
    with left:
        st.dataframe(tok, key="live_tokens", height=min(35 * (T + 1) + 3, 320),
                     column_config={"token": st.column_config.TextColumn("token"),
                                    # %d: a whole number (the "plain" format drew 000000000002)
                                    "id": st.column_config.NumberColumn("id", format="%d"),
                                    "segment": st.column_config.TextColumn("segment", width="small")})
    with right:
        n_b = int((tok["segment"] == "B").sum())
        st.metric("Tokens", T, help=f"From the {enc.source}; at most {seq_cap}.")
        st.caption(f"{T - n_b} in segment A, {n_b} in segment B, from the {escape_markdown(enc.source)}. One forward "
                   f"pass ({fmt_flops(flops)}, hidden states and attention maps kept) took "
                   f"{fmt_duration(run.seconds, digits=2)}.")


def _show_speed(ref: ModelRef, run: Run, first: str, pair: str | None, flops: int) -> bool:
    """Latency and throughput of n timed runs (after a click when they cost more than a moment); False when
    the timing could not run (said, and the section stops)."""
    cfg, T = ref.cfg, len(run.encoded)
    st.subheader("Latency and throughput")
    fit = min(30, flops_fit(flops) - 1)  # timed runs that fit the compute cap after the warm-up
    n = 0
    if fit < 1:
        st.info(f"Timing needs at least two forward passes ({fmt_flops(2 * flops)}), over this server's cap of "
                f"{settings.max_gflop():,g} GFLOP per request.")
    elif fit == 1:
        n = 1
    else:
        n = st.slider("Timed runs n", 1, fit, min(5, fit), key="live_n",
                      help="Forward passes timed after one warm-up; the median is shown (robust to a busy "
                      f"machine). At most {fit}: the compute cap per request.")
    run_key = (ref, first, pair)
    if not (n and clicked_or_fast(f"time {n} runs", run.seconds, n + 1, flops, "live_time_button",
                                  ("time", run_key, n))):
        return True
    try:
        with st.spinner(f"Timing {n} forward passes and probing this machine's matmul speed…"):
            t = timing(ref, first, pair, n, session_alive())
    except (ValueError, Cancelled) as exc:
        busy_or_error("time this input", exc)
        return False
    share = t["gflops"] / t["peak"]
    c = st.columns(4)
    c[0].metric("Median latency", fmt_duration(t["median_s"]),
                help=f"Median of {n} runs; p10 {fmt_duration(t['p10'])}, p90 {fmt_duration(t['p90'])}; "
                f"torch uses {t['threads']} threads.")
    c[1].metric("Forward FLOPs", fmt_flops(flops), help=f"count_flops for batch 1 × {T} tokens (matmul FLOPs).")
    c[2].metric("Achieved", f"{t['gflops']:.1f} GFLOP/s")
    c[3].metric("Share of matmul limit", fmt_pct(share),
                help=f"This machine's best fp32 matmul (torch.matmul or oneDNN): {t['peak']:.1f} GFLOP/s "
                "(fp32, short probe).")
    runs = (f"sharing saves parameters, not time: this model runs all {cfg.executed_layers} layers"
            if cfg.sharing != "none" else
            f"this model shares no layer weights; it runs its {cfg.executed_layers} layers")
    takeaway(
        f"{runs} ({fmt_flops(flops)} per {T}-token sequence) in {fmt_duration(t['median_s'])}, "
        f"{fmt_pct(share)} of this machine's best matmul speed ({t['peak']:.0f} GFLOP/s on {t['threads']} threads); "
        + ("a short sequence gives small matrices, and attention and element-wise work add more, so it stays "
           "well below that limit." if share < 0.5 else "the matrices are large enough to run near that limit.")
    )
    return True


def _show_smoothness(run: Run, trained: bool) -> None:
    st.subheader(f"Layer smoothness ({SMOOTHNESS_FIGURE_SHORT})")
    smooth = layer_smoothness(run.output.hidden_states, run.encoded.tensors()["attention_mask"])
    chart(fl.smoothness_figure(smooth), key="fig_live_smoothness", width="stretch")
    last = smooth.iloc[-1]
    takeaway(f"layer {int(last['layer'])} changes its input by L2 {last['l2_distance']:.3g} "
             f"({last['angle_degrees']:.3g}°), layer 1 by {smooth.iloc[0]['l2_distance']:.3g}; the paper finds "
             "ALBERT's layer-to-layer transitions much smoother than BERT's (shared weights). "
             + ("These are trained weights: compare with a BERT checkpoint." if trained else
                "With random weights the curves only show the mechanics; load a trained checkpoint to see the "
                "effect."))


def _show_saved_activations(ref: ModelRef, first: str, pair: str | None, T: int, flops: int) -> None:
    cfg, dtype = ref.cfg, ref.dtype
    st.subheader("Saved activations: measured vs estimate")
    est = estimate_memory(cfg, 1, T, dtype, optimizer="none", training=True, dropout=0.0, device="cpu").activations
    try:
        forward_s = run_text(ref, first, pair).seconds  # cached, unless the cache freed it since
    except ValueError as exc:  # MemoryBudgetError / BusyError: the pass is redone and the server is full
        busy_or_error("measure saved activations here", exc)
        return
    if not clicked_or_fast("measure the saved activations", forward_s, 2, flops, "live_saved_button",
                           ("saved", (ref, first, pair))):
        return
    try:
        with st.spinner("Running one training-mode forward with saved-tensor hooks…"):
            measured = saved_bytes(ref, first, pair)
    except ValueError as exc:
        busy_or_error("measure saved activations here", exc)
        return
    chart(fl.activation_bars(measured, est), key="fig_live_activations", width="stretch")
    way = direction(measured, est)  # the sentence follows the measurement (issue 42)
    verdict = {-1: "so it saves less", 0: "yet it saved nearly what the estimate says",
               1: "yet it saved more (the estimate leaves out what this build keeps beyond them)"}[way]
    takeaway(
        f"autograd saved {fmt_bytes(measured)} for one {T}-token sequence; estimate_memory says "
        f"{fmt_bytes(est)} ({fmt_ratio(measured / est)} measured/estimate) in {dtype} "
        f"({DTYPE_BYTES[dtype]} bytes per element). The estimate follows transformers' eager model (Python "
        "GELU saving several tensors, explicit softmax, the MLM loss of a training step); this model uses fused "
        f"GELU and attention kernels and computes no loss, {verdict}: activations, not weights, are what "
        "sharing leaves untouched."
    )
