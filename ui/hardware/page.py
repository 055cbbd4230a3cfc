"""Hardware: estimated time per training step and inference batch, the paper's Table 2 speed column
recomputed, and the questions users ask (is ALBERT faster, what batch fits, how long to train)."""

from __future__ import annotations

import streamlit as st

from albert_core import PRESETS
from albert_core.counting.report import albert_pair
from albert_core.format import escape_markdown, fmt_bytes, fmt_count, fmt_duration
from albert_core.hardware.profiles import (
    DATASHEET_PROFILES,
    HARDWARE_NAMES,
    MEASURE_COMMAND,
    PROBE_ABOUT_S,
    THIS_MACHINE,
    get_profile,
)
from albert_core.hardware.time_model import LOCAL_ATTENTION
from albert_core.paper import QUOTED_BATCH, QUOTED_CARD_GB
from ui.hardware import cache
from ui.hardware import figures as figures_hardware
from ui.hardware.questions import (
    CHIP_CHOICES,
    compare_speed,
    largest_batch,
    time_to_train,
    timed_inputs,
)
from ui.render import chart
from ui.state import current
from ui.url_state import seed_from_url_once

HW_PARAM, CHIPS_PARAM = "hw", "chips"
HW_KEY, CHIPS_KEY, OVERLAP_KEY = "hw_hardware", "hw_chips", "hw_overlap"
DEFAULT_HW, DEFAULT_CHIPS = "a100", 1
_SEEDED = "_hw_seeded"
BATCH_SEQ = 512  # the sequence length of "what batch fits" (the paper's and the users' reports)

cfg, wl = current()
ss = st.session_state


def _seed(query: dict[str, str]) -> list[str]:
    hw, chips, problems = figures_hardware.decode_query(query, DEFAULT_HW, DEFAULT_CHIPS)
    ss[HW_KEY], ss[CHIPS_KEY] = hw, chips
    return problems


seed_from_url_once(_SEEDED, _seed, "using the default instead")


st.title("Hardware")
st.caption("Time per training step and per inference batch on real accelerators. **Every time on this page is "
           "an estimate** built from the exact FLOP, parameter and byte counts and each profile's figures "
           "(sources below), except the paper's measured speedups, which are labelled as the paper's.")

c1, c2, c3 = st.columns([3, 2, 2], vertical_alignment="bottom")
with c1:
    # drawn with the session's value (seeded from the link): a box without index is painted with option 0 first
    st.selectbox("Hardware", HARDWARE_NAMES, index=list(HARDWARE_NAMES).index(ss[HW_KEY]), key=HW_KEY,
                 format_func=lambda n: DATASHEET_PROFILES[n].label if n in DATASHEET_PROFILES else
                 "this machine (probed once, cached)",
                 help="Datasheet profiles use dense peaks only; this machine is measured.")
with c2:
    st.selectbox("Chips (data parallel)", CHIP_CHOICES, index=list(CHIP_CHOICES).index(ss[CHIPS_KEY]), key=CHIPS_KEY,
                 help="The global batch (sidebar) is split over the chips; each holds the whole model.")
with c3:
    overlap = st.toggle("Overlap all-reduce with backward", value=True, key=OVERLAP_KEY)
hw_name, chips = ss[HW_KEY], ss[CHIPS_KEY]
wanted = {HW_PARAM: hw_name, CHIPS_PARAM: str(chips)}
if any(st.query_params.get(k) != v for k, v in wanted.items()):
    st.query_params.update(wanted)

if hw_name == THIS_MACHINE:
    with st.spinner("Probing this machine's matmul throughput and memory bandwidth "
                    f"(once, about {fmt_duration(PROBE_ABOUT_S, 2)})..."):
        profile = get_profile(hw_name)
else:
    profile = get_profile(hw_name)
timed = timed_inputs(wl, profile, chips)
wl, chips = timed.workload, timed.chips
for note in timed.notes:
    st.caption(escape_markdown(note))

# ----------------------------------------------------------------------------- breakdown
est = cache.hardware_estimate(cfg, wl, hw_name, chips, overlap)
st.subheader(f"{cfg.label}: time per step (estimate)")
m = st.columns(4)
m[0].metric("Training step (estimate)", fmt_duration(est.training_s),
            help=f"Global batch {wl.batch} × {wl.seq_len} tokens over {chips} chip(s), {wl.dtype}, {wl.optimizer}.")
m[1].metric("Inference batch (estimate)", fmt_duration(est.inference_s),
            help="The same per-chip share of the batch, forward only, no communication.")
m[2].metric("Tokens / s (estimate)", fmt_count(round(est.tokens_per_second)))
fits = est.fits
m[3].metric("Training memory per chip", fmt_bytes(est.memory_per_chip),
            delta=None if fits is None else (f"fits in {fmt_bytes(profile.memory_bytes)}" if fits
                                             else f"does not fit in {fmt_bytes(profile.memory_bytes)}"),
            delta_color="green" if fits else "red", delta_arrow="off",  # a yes/no, not a rise or a fall
            help=f"Weights, gradients and optimizer states (exact) plus this chip's activations (estimate); "
            f"{profile.label} has {fmt_bytes(profile.memory_bytes)}.")
chart(figures_hardware.step_breakdown(est), key="hw_breakdown", width="stretch")
st.caption(figures_hardware.step_takeaway(est))
if cfg.local_layers:
    st.caption(LOCAL_ATTENTION)  # one implementation of local attention in every part of the estimate
with st.expander("Parts and assumptions"):
    st.dataframe(figures_hardware.breakdown_frame(est).drop(columns=["seconds"]), hide_index=True,
                 width="stretch", key="hw_parts")
    st.markdown("\n".join(f"- {escape_markdown(a)}" for a in est.assumptions))

# ----------------------------------------------------------------------------- answers
st.subheader("Questions people ask")
with st.container(border=True, key="hw_answer_speed"):
    st.markdown("**Is ALBERT faster than BERT on my device?**")
    speed = compare_speed(cfg, wl, profile, chips=chips, overlap=overlap)
    if speed is None:
        st.markdown(figures_hardware.NO_COUNTERPART.format(act=cfg.hidden_act))
    else:
        st.markdown(figures_hardware.speed_answer(speed, cfg))

with st.container(border=True, key="hw_answer_memory"):
    st.markdown(f"**What is the largest batch that fits in N GB at sequence {BATCH_SEQ}?** (training, AdamW, "
                "estimate; a model with fewer positions at its longest sequence)")
    gb = st.number_input("GB per device", 1, 1024, QUOTED_CARD_GB, key="hw_gb")
    rows = []
    # the sidebar's config and the config it is compared with (issue 42), then the presets users quote
    pair = albert_pair(cfg) or (cfg,)
    named = {**dict(zip(figures_hardware.pair_names(pair, cfg), pair, strict=True)),
             **{name: PRESETS[name] for name in QUOTED_BATCH}}
    for name, model in named.items():
        seq = min(BATCH_SEQ, model.max_seq_len)
        rows.append({"model": name, "sequence": seq,
                     "batch, fp16 mixed": largest_batch(model, gb * 1e9, seq, "fp16", precision="mixed"),
                     "batch, fp32": largest_batch(model, gb * 1e9, seq, "fp32")})
    st.dataframe(rows, hide_index=True, key="hw_batch_table")
    reported = " vs ".join(f"{b} ({figures_hardware.paper_name(n)})" for n, b in QUOTED_BATCH.items())
    st.caption(f"From estimate_memory (weights, gradients and AdamW states exact; activations estimated). Users "
               f"report about {reported} on a {QUOTED_CARD_GB} GB card with mixed precision; the "
               "estimate (mixed: fp16 weights, gradients and activations, fp32 master weights and Adam moments) "
               "leaves out the framework's own memory (CUDA context, allocator slack), and gives the same "
               "ordering: ALBERT-xxlarge's activations "
               f"at H = {PRESETS['albert-xxlarge'].hidden_size} outweigh the parameters sharing saves.")

with st.container(border=True, key="hw_answer_train"):
    st.markdown(f"**How long does it take to train on N tokens with {chips} chip(s)?** (estimate)")
    tokens_b = st.number_input("Billions of tokens", 0.001, 10_000.0, 1.0, key="hw_tokens")
    seconds = time_to_train(est, tokens_b * 1e9)
    st.markdown(f"{fmt_duration(seconds)} for {tokens_b:g} B tokens on {chips} × {profile.label} at batch "
                f"{wl.batch} × {wl.seq_len} ({fmt_duration(est.training_s)} per step).")

# ----------------------------------------------------------------------------- data parallel
with st.container(border=True, key="hw_data_parallel"):
    st.markdown("**What does sharing buy when the same run scales out?** Gradient traffic per step")
    pair = albert_pair(cfg)
    if pair is None:
        st.markdown(figures_hardware.NO_COUNTERPART.format(act=cfg.hidden_act))
    else:
        st.markdown(figures_hardware.gradient_traffic(pair, wl.dtype, cfg))
    measured = cache.hardware_measured_allreduce()
    if measured is None:
        st.caption(f"No local measurement shipped; `{MEASURE_COMMAND}` produces it.")
    else:
        st.dataframe(figures_hardware.measured_allreduce_frame(measured, cfg), hide_index=True, width="stretch",
                     key="hw_measured_allreduce")
        st.caption(escape_markdown(figures_hardware.measured_takeaway(measured, cfg)))
    st.markdown(
        "**Scaling out.** This app stays one process; the lab's trainer runs data-parallel under "
        "`torch.distributed` (DistributedDataParallel: gloo on CPU, nccl on GPU). Every process takes its "
        "shard of the same global batch, so the loss curve is the one-process curve, and `train --json` "
        "reports `allreduce_bytes_per_step`, counted by a DDP communication hook:"
    )
    st.markdown(figures_hardware.scale_out_commands())

# ----------------------------------------------------------------------------- Table 2
st.subheader("The paper's speed column, recomputed")
table2_bars, table2_frame, table2_takeaway, table2_method = cache.hardware_table2()
chart(table2_bars, key="hw_table2_bars", width="stretch")
st.dataframe(table2_frame, hide_index=True, width="stretch", key="hw_table2")
st.caption(table2_takeaway)
with st.expander("How Table 2 is recomputed"):
    st.markdown(table2_method)

# ----------------------------------------------------------------------------- profiles
with st.expander("Hardware profiles and their sources"):
    shown = [*DATASHEET_PROFILES.values(), *([profile] if profile.measured else [])]
    st.dataframe(figures_hardware.profiles_frame(shown), hide_index=True, width="stretch", key="hw_profiles")
    st.caption("Dense peaks only (never the 'with sparsity' figures, twice as high). 'Achievable' is an "
               "assumption for datasheet profiles; this machine's figures are measured (1.0: the probe "
               "already measures what a matmul achieves).")
