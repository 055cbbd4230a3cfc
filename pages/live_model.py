"""Live model: build the current config in PyTorch (within the memory budget), prove the analytic
count component by component, run it on your text, time it, and look inside (layer smoothness,
attention maps, saved activations). A transformers checkpoint folder can stand in for the config."""

from __future__ import annotations

import os

import streamlit as st

from albert_core import count_flops, count_params, estimate_memory, settings
from albert_core.configuration.config import HEAD_LABELS
from albert_core.configuration.workload import DTYPE_BYTES
from albert_core.format import (
    escape_markdown,
    fmt_bytes,
    fmt_count,
    fmt_duration,
    fmt_flops,
    fmt_params,
    fmt_pct,
    fmt_ratio,
    fmt_share,
    sentence_case,
)
from albert_core.live.analysis import attention_maps, layer_smoothness
from albert_core.live.budget import (
    BusyError,
    Cancelled,
    MemoryBudgetError,
    check_budget,
    flops_fit,
)
from albert_core.live.model import TORCH_DTYPES
from albert_core.paper import SMOOTHNESS_FIGURE_SHORT
from ui import figures_live as fl
from ui import live, live_lab
from ui.render import takeaway
from ui.state import current, seed_widget, sync_widget

DEFAULT_TEXT = (
    "ALBERT shares one set of layer weights across the whole encoder.\n"
    "It still runs every layer, so it is not faster than BERT."
)
URL_SOURCE, URL_TEXT = "model", "text"  # the page's own URL keys (the share link reopens the same view)
TEXT_MAX_CHARS = 2000
SOURCES = {"config": "The sidebar config", "folder": "A transformers checkpoint folder"}
SOURCES[live_lab.SOURCE_KEY] = live_lab.SOURCE_LABEL
if settings.hub_allowed():
    SOURCES["hub"] = "A Hugging Face hub id (downloads)"


def clicked_or_fast(what: str, forward_s: float, runs: int, flops: int, key: str, done_key: tuple) -> bool:
    """Run ``what`` (``runs`` forward passes of ``flops`` each) at once when it counts at most
    live.AUTO_WORK_FLOPS; otherwise only after a click, remembered for this model, text and run count
    (``done_key``), so a visitor never waits for work they did not ask for and an edit never re-runs
    it silently."""
    done = st.session_state.setdefault("live_done", set())
    cost_s = forward_s * runs
    if runs * flops <= live.AUTO_WORK_FLOPS or done_key in done:
        return True
    slot = st.empty()
    with slot.container():
        st.info(f"One forward pass took {fmt_duration(forward_s, digits=2)} on this machine, so to {what} takes about "
                f"{fmt_duration(cost_s, digits=2)}: it waits for your click.")
        clicked = st.button(f"{sentence_case(what)} (about {fmt_duration(cost_s, digits=2)})", key=key)
    if clicked:
        done.add(done_key)
        slot.empty()  # the results replace the offer
    return clicked


def busy_or_error(what: str, exc: Exception) -> None:
    """A full server is a notice (try again), anything else an error; then this section stops."""
    if isinstance(exc, BusyError):
        st.warning(f"Cannot {what} right now: {escape_markdown(str(exc))}.")
    elif isinstance(exc, Cancelled):
        st.info(escape_markdown(str(exc)))
    else:
        st.error(f"Cannot {what}: {escape_markdown(str(exc))}")


cfg, wl = current()
st.title("Live model")
st.caption(
    "A real PyTorch encoder of the configuration: built, counted, run and timed on this machine. "
    "It proves the analytic numbers of the other pages."
)

# ----------------------------------------------------------------------------- which model
seed_widget(URL_SOURCE, "live_source", "config", SOURCES.__contains__)
source = st.radio("Model", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="live_source",
                  help="The sidebar's config (random weights, seeded), or trained weights from a folder "
                  "saved with transformers' save_pretrained.")
sync_widget(URL_SOURCE, source, "config")
dtype = wl.dtype if wl.dtype in TORCH_DTYPES else "fp32"
if dtype != wl.dtype:
    st.caption(f"The live model runs in fp32: {wl.dtype} is a storage format here, not a compute dtype.")
model = None
ref: live.ModelRef | None = None

if source == "folder":
    roots = settings.checkpoint_roots()
    if not roots:
        st.info(
            "Loading checkpoint folders is switched off on this server: it would let visitors read the "
            "server's files. Whoever runs the server can allow some folders (docs/deploy.md); run the app on "
            "your own machine to load your own checkpoints."
        )
        st.stop()
    st.caption("Allowed folders: " + ", ".join(f"`{escape_markdown(str(r))}`" for r in roots))
    path = st.text_input("Checkpoint folder", key="live_folder", max_chars=500,
                         help="A folder saved with save_pretrained (config.json + *.safetensors), inside "
                         "one of the allowed folders. Pickle (.bin) weights are never loaded.")
    if not path.strip():
        st.stop()
    try:
        with st.spinner("Loading the checkpoint (budget checked before any weight is read)…"):
            resolved = os.path.realpath(path.strip())
            mtime = os.stat(resolved).st_mtime_ns if os.path.isdir(resolved) else 0
            model = live.checkpoint_model(resolved, mtime, tuple(map(str, roots)))
    except (ValueError, OSError) as exc:  # MemoryBudgetError and BusyError are ValueErrors
        busy_or_error("load this folder", exc)
        st.stop()
    cfg, dtype = model.config, "fp32"
    ref = live.ModelRef(cfg, dtype, model.guard.seq_len, resolved, mtime, tuple(map(str, roots)))
elif source == "hub":
    repo = st.text_input("Hub id", key="live_hub", max_chars=200, placeholder="albert/albert-base-v2")
    if not repo.strip():
        st.stop()
    try:
        with st.spinner("Downloading config.json, checking the budget, then the safetensors weights…"):
            folder = live.hub_folder(repo, live.MAX_TOKENS)
            mtime = os.stat(folder).st_mtime_ns
            model = live.checkpoint_model(str(folder), mtime, (str(folder),))
    except Exception as exc:  # network, hub and format errors all end here, shown, not raised
        busy_or_error(f"load {escape_markdown(repo[:100])} from the hub", exc)
        st.stop()
    cfg, dtype = model.config, "fp32"
    ref = live.ModelRef(cfg, dtype, model.guard.seq_len, str(folder), mtime, (str(folder),))

lab_run = None
if source == live_lab.SOURCE_KEY:
    ref, lab_run = live_lab.render_source(live.MAX_TOKENS)
    cfg, dtype = ref.cfg, "fp32"
    model = live.model_of(ref)

seq_cap = min(live.MAX_TOKENS, cfg.max_position_embeddings)
st.subheader(f"{escape_markdown(cfg.label)} · {HEAD_LABELS[cfg.head]} · {dtype}")
if ref is None:  # the sidebar's config
    st.caption(live.used_fields_note(seq_cap))

# ----------------------------------------------------------------------------- budget and build
check = check_budget(cfg, 1, seq_cap, dtype)
c = st.columns(3)
c[0].metric("Estimated memory", fmt_bytes(check.estimate),
            help="Weights plus one forward pass of one sequence of up to "
            f"{seq_cap} tokens, from estimate_memory.")
c[1].metric("Memory budget", fmt_bytes(check.budget),
            help="Set by whoever runs this server, for the whole server: every visitor's models and runs share "
            "it, and nothing beyond it is allocated.")
c[2].metric("Share of the budget", fmt_share(check.estimate / check.budget),
            help="Estimated memory / memory budget; above 100% as a multiple of the budget.")
st.progress(min(1.0, check.estimate / check.budget))
cap = settings.max_gflop()
forward_flops = count_flops(cfg, 1, seq_cap).forward
st.caption(f"Compute is capped too: each request may run at most {cap:,g} GFLOP of live work on this server; "
           f"one forward pass of this model over {seq_cap} tokens counts "
           f"{fmt_flops(forward_flops)}. Live work runs one visitor at a time.")

if model is None and (problem := live.too_many_blocks(cfg)):
    st.warning(f"No live model for {escape_markdown(cfg.label)}: {escape_markdown(problem)}. Its exact analytic count is on the Explorer page.")
    st.stop()

build_error, fits_instead = None, []
over_cap = live.forward_cap_problem(cfg, seq_cap)
n_params = count_params(cfg).total
with st.status(f"Preparing {cfg.label}…", expanded=False) as status:
    if model is None and check.ok and not over_cap:
        status.update(label=f"Building {cfg.label} ({fmt_params(n_params)} parameters, {dtype}) on the CPU…")
        try:
            model = live.built_model(cfg, dtype, seq_cap)
            ref = live.ModelRef(cfg, dtype, seq_cap)
        except MemoryBudgetError as exc:  # BusyError included
            build_error = str(exc)
    elif model is None and not check.ok:
        build_error, fits_instead = live.refusal(cfg, seq_cap, dtype, check)
    elif model is None:
        build_error = f"Too costly to run here: {over_cap}."
    proof_model = model
    if model is None:
        status.update(label="Building on the meta device (shapes only)…")
        proof_model = live.meta_model(cfg, dtype)
    status.update(label="Counting the live model's parameters per component…")
    table = live.match_table(count_params(cfg), live.live_counts(proof_model))
    device = "meta" if model is None else "cpu"
    status.update(label=f"Built and counted on {device}", state="complete")
del model, proof_model  # the caches own the model; this run keeps only `ref`
if build_error:
    (st.warning if "busy" in build_error else st.error)(escape_markdown(build_error))
    if fits_instead:
        st.info("What fits on this server:\n" + "".join(f"\n- {escape_markdown(o)}" for o in fits_instead))
    st.info("Built on the **meta device** instead (shapes only, no memory): the parameter count below is "
            "still the real model's, so the proof holds for any size.")

# ----------------------------------------------------------------------------- count proof
st.subheader("Analytic vs live parameter count")
all_match = (table["match"] == live.MATCH).all()
total_row = table.iloc[-1]
if all_match:
    st.success(f"Every component matches: {fmt_count(total_row['live'])} parameters in the "
               f"live model ({device}) = {fmt_count(total_row['analytic'])} counted analytically.")
else:
    st.error(f"Analytic and live counts differ: {fmt_count(total_row['analytic'])} vs "
             f"{fmt_count(total_row['live'])}.")
st.dataframe(
    table, hide_index=True, key="live_match_table", height=35 * (len(table) + 1) + 3,  # totals row in view
    column_config={
        "analytic": st.column_config.NumberColumn("analytic (count_params)", format="localized"),
        "live": st.column_config.NumberColumn(f"live ({device}, numel)", format="localized"),
        "match": st.column_config.TextColumn("match", width="small"),
    },
)
st.caption("Live: `sum(p.numel())` per component of the PyTorch module tree (shared and tied tensors once). "
           "Analytic: `count_params`, closed forms with no torch involved.")

if ref is None or build_error:
    st.stop()


# ----------------------------------------------------------------------------- run on text
# Fragments: a text edit reruns only this section, a layer or head change only the attention map; the
# sidebar, the build and the count proof above are not redone. They take `ref`, never the model.
@st.fragment
def attention_section(ref: live.ModelRef, first: str, pair: str | None) -> None:
    cfg = ref.cfg
    run = live.run_text(ref, first, pair)  # cached: no forward pass here
    enc = run.encoded
    st.subheader("Attention map")
    c = st.columns(2)
    # Bounded by the config with a message (a widget maximum only turns the box red without saying why).
    layer = live.bounded(c[0], "Executed layer", cfg.executed_layers, "live_layer",
                         f"this model executes L×K = {cfg.executed_layers} layers",
                         help=f"1 to L×K = {cfg.executed_layers}: every executed layer, shared or not, has its own "
                         "attention map.")
    head = live.bounded(c[1], "Head", cfg.num_heads, "live_head", f"this model has {cfg.num_heads} heads",
                        help=f"1 to {cfg.num_heads}.")
    weights, labels = attention_maps(run.output, int(layer) - 1, int(head) - 1, enc.tokens)
    st.plotly_chart(fl.attention_heatmap(weights, labels, int(layer) - 1, int(head) - 1),
                    key="fig_live_attention", width="stretch")
    takeaway(escape_markdown(fl.attention_takeaway(weights, labels)))


@st.fragment
def text_section(ref: live.ModelRef, seq_cap: int) -> None:
    cfg, dtype, checkpoint = ref.cfg, ref.dtype, ref.folder
    st.subheader("Run it on your text")
    seed_widget(URL_TEXT, "live_text", DEFAULT_TEXT, max_chars=TEXT_MAX_CHARS)
    text = st.text_area(
        "Text (first line: segment A; the rest: segment B)", max_chars=TEXT_MAX_CHARS, key="live_text",
        help=f"Tokenized to at most {seq_cap} tokens as [CLS] A [SEP] B [SEP]. Unless a checkpoint is loaded "
        "the weights are random (seeded): the outputs mean nothing, the shapes, costs and timings are real.",
    )
    sync_widget(URL_TEXT, text, DEFAULT_TEXT)
    first, _, rest = (text or "").strip().partition("\n")
    pair = rest.strip() or None
    try:
        with st.spinner("Tokenizing and running one forward pass…"):
            run = live.run_text(ref, first, pair)
    except ValueError as exc:  # MemoryBudgetError / BusyError included: kept outputs over budget, a full server
        busy_or_error("run this input", exc)
        return
    enc = run.encoded
    T = len(enc)
    flops = count_flops(cfg, 1, T).forward
    tok = live.tokens_frame(enc)
    left, right = st.columns([2, 3])
    with left:
        st.dataframe(tok, key="live_tokens", height=min(35 * (T + 1) + 3, 320),
                     column_config={"token": st.column_config.TextColumn("token"),
                                    "id": st.column_config.NumberColumn("id", format="plain"),
                                    "segment": st.column_config.TextColumn("segment", width="small")})
    with right:
        n_b = int((tok["segment"] == "B").sum())
        st.metric("Tokens", T, help=f"From the {enc.source}; at most {seq_cap}.")
        st.caption(f"{T - n_b} in segment A, {n_b} in segment B, from the {escape_markdown(enc.source)}. One forward pass "
                   f"({fmt_flops(flops)}, hidden states and attention maps kept) took {fmt_duration(run.seconds, digits=2)}.")

    # ------------------------------------------------------------------------- speed
    st.subheader("Latency and throughput")
    fit = min(30, flops_fit(flops) - 1)  # timed runs that fit the compute cap after the warm-up
    run_key = (ref, first, pair)
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
    if n and clicked_or_fast(f"time {n} runs", run.seconds, n + 1, flops, "live_time_button", ("time", run_key, n)):
        try:
            with st.spinner(f"Timing {n} forward passes and probing this machine's matmul speed…"):
                t = live.timing(ref, first, pair, n, live.session_alive())
        except (ValueError, Cancelled) as exc:
            busy_or_error("time this input", exc)
            return
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
        takeaway(
            f"sharing saves parameters, not time: this model runs all {cfg.executed_layers} layers "
            f"({fmt_flops(flops)} per {T}-token sequence) in {fmt_duration(t['median_s'])}, {fmt_pct(share)} of this "
            f"machine's best matmul speed ({t['peak']:.0f} GFLOP/s on {t['threads']} threads); "
            + ("a short sequence gives small matrices, and attention and element-wise work add more, so it stays "
               "well below that limit." if share < 0.5 else "the matrices are large enough to run near that limit.")
        )

    # ------------------------------------------------------------------------- inside the model
    st.subheader(f"Layer smoothness ({SMOOTHNESS_FIGURE_SHORT})")
    smooth = layer_smoothness(run.output.hidden_states, enc.tensors()["attention_mask"])
    st.plotly_chart(fl.smoothness_figure(smooth), key="fig_live_smoothness", width="stretch")
    last = smooth.iloc[-1]
    takeaway(f"layer {int(last['layer'])} changes its input by L2 {last['l2_distance']:.3g} "
             f"({last['angle_degrees']:.3g}°), layer 1 by {smooth.iloc[0]['l2_distance']:.3g}; the paper finds "
             "ALBERT's layer-to-layer transitions much smoother than BERT's (shared weights). "
             + ("These are trained weights: compare with a BERT checkpoint." if checkpoint else
                "With random weights the curves only show the mechanics; load a trained checkpoint to see the "
                "effect."))
    del run  # the fragment below fetches it from the cache; nothing here pins the tensors

    attention_section(ref, first, pair)

    st.subheader("Saved activations: measured vs estimate")
    est = estimate_memory(cfg, 1, T, dtype, optimizer="none", training=True, dropout=0.0, device="cpu").activations
    forward_s = live.run_text(ref, first, pair).seconds
    if clicked_or_fast("measure the saved activations", forward_s, 2, flops, "live_saved_button", ("saved", run_key)):
        try:
            with st.spinner("Running one training-mode forward with saved-tensor hooks…"):
                measured = live.saved_bytes(ref, first, pair)
        except ValueError as exc:
            busy_or_error("measure saved activations here", exc)
            return
        st.plotly_chart(fl.activation_bars(measured, est), key="fig_live_activations", width="stretch")
        takeaway(
            f"autograd saved {fmt_bytes(measured)} for one {T}-token sequence; estimate_memory says "
            f"{fmt_bytes(est)} ({fmt_ratio(measured / est)} measured/estimate) in {dtype} "
            f"({DTYPE_BYTES[dtype]} bytes per element). The estimate follows transformers' eager model (Python "
            "GELU saving several tensors, explicit softmax, the MLM loss of a training step); this model uses fused "
            "GELU and attention kernels and computes no loss, so it saves less: activations, not weights, are what "
            "sharing leaves untouched."
        )


text_section(ref, seq_cap)
if lab_run is not None:
    live_lab.render_demos(live.model_of(ref), ref.folder, lab_run, seq_cap)
