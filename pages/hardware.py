"""Hardware: estimated time per training step and inference batch, the paper's Table 2 speed column
recomputed, and the questions users ask (is ALBERT faster, what batch fits, how long to train)."""

from __future__ import annotations

import streamlit as st

from albert_core import PRESETS, ModelConfig, Workload
from albert_core.configuration.coerce import bert_twin
from albert_core.configuration.presets import matching_preset
from albert_core.configuration.workload import DTYPE_BYTES
from albert_core.format import escape_markdown, fmt_bytes, fmt_count, fmt_duration
from albert_core.hardware.profiles import (
    DATASHEET_PROFILES,
    HARDWARE_NAMES,
    MEASURE_COMMAND,
    THIS_MACHINE,
    get_profile,
    load_measured,
)
from albert_core.hardware.time_model import (
    PAPER_SPEEDUP,
    TABLE2_CHIPS,
    TABLE2_COMM_EFFICIENCY,
    TimeEstimate,
    estimate_time,
    gradient_bytes,
    inference_ratio,
    largest_batch,
    paper_table2,
    time_to_train,
)
from ui import figures_explorer, figures_hardware
from ui.state import current, seed_from_url_once

HW_PARAM, CHIPS_PARAM = "hw", "chips"
HW_KEY, CHIPS_KEY, OVERLAP_KEY = "hw_hardware", "hw_chips", "hw_overlap"
CHIP_CHOICES = figures_hardware.CHIP_CHOICES
DEFAULT_HW, DEFAULT_CHIPS = "a100", 1
_SEEDED = "_hw_seeded"
LARGE_BATCH = 64

cfg, wl = current()
ss = st.session_state



def _seed(query: dict[str, str]) -> list[str]:
    hw, chips, problems = figures_hardware.decode_query(query, DEFAULT_HW, DEFAULT_CHIPS)
    ss[HW_KEY], ss[CHIPS_KEY] = hw, chips
    return problems


seed_from_url_once(_SEEDED, _seed, "using the default instead")


@st.cache_resource(max_entries=128, show_spinner=False)
def cached_estimate(cfg: ModelConfig, wl: Workload, hw: str, chips: int, overlap: bool) -> TimeEstimate:
    return estimate_time(cfg, wl, hw, chips, overlap=overlap)


@st.cache_resource(max_entries=1, show_spinner=False)
def measured_allreduce():
    return load_measured()


@st.cache_resource(max_entries=4, show_spinner=False)
def cached_table2():
    return paper_table2()


st.title("Hardware")
st.caption("Time per training step and per inference batch on real accelerators. **Every time on this page is "
           "an estimate** built from the exact FLOP, parameter and byte counts and each profile's figures "
           "(sources below), except the paper's measured speedups, which are labelled as the paper's.")

c1, c2, c3 = st.columns([3, 2, 2], vertical_alignment="bottom")
with c1:
    st.selectbox("Hardware", HARDWARE_NAMES, key=HW_KEY,
                 format_func=lambda n: DATASHEET_PROFILES[n].label if n in DATASHEET_PROFILES else
                 "this machine (probed once, cached)",
                 help="Datasheet profiles use dense peaks only; this machine is measured.")
with c2:
    st.selectbox("Chips (data parallel)", CHIP_CHOICES, key=CHIPS_KEY,
                 help="The global batch (sidebar) is split over the chips; each holds the whole model.")
with c3:
    overlap = st.toggle("Overlap all-reduce with backward", value=True, key=OVERLAP_KEY)
hw_name, chips = ss[HW_KEY], ss[CHIPS_KEY]
wanted = {HW_PARAM: hw_name, CHIPS_PARAM: str(chips)}
if any(st.query_params.get(k) != v for k, v in wanted.items()):
    st.query_params.update(wanted)

if hw_name == THIS_MACHINE:
    with st.spinner("Probing this machine's matmul throughput and memory bandwidth (once, about 2 s)..."):
        profile = get_profile(hw_name)
else:
    profile = get_profile(hw_name)
notes = []
if wl.dtype not in profile.peak_flops:
    notes.append(f"{profile.label} has no {wl.dtype} figure: timed in fp32.")
    wl = wl.replace(dtype="fp32")
if chips > 1 and not profile.link_bandwidth:
    notes.append(f"{profile.label} is one chip: timed on 1.")
    chips = 1
if chips > wl.batch:
    notes.append(f"{chips} chips need a batch of at least {chips}: timed on {wl.batch} chips.")
    chips = max(c for c in CHIP_CHOICES if c <= wl.batch)
for note in notes:
    st.caption(escape_markdown(note))

# ----------------------------------------------------------------------------- breakdown
est = cached_estimate(cfg, wl, hw_name, chips, overlap)
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
st.plotly_chart(figures_hardware.step_breakdown(est), key="hw_breakdown", width="stretch")
st.caption(figures_hardware.step_takeaway(est))
with st.expander("Parts and assumptions"):
    st.dataframe(figures_hardware.breakdown_frame(est).drop(columns=["seconds"]), hide_index=True,
                 width="stretch", key="hw_parts")
    st.markdown("\n".join(f"- {escape_markdown(a)}" for a in est.assumptions))

# ----------------------------------------------------------------------------- answers
st.subheader("Questions people ask")
with st.container(border=True, key="hw_answer_speed"):
    st.markdown("**Is ALBERT faster than BERT on my device?**")
    pair = (cfg, bert_twin(cfg)) if cfg.family == "albert" else (figures_explorer.albert_counterpart(cfg), cfg)
    if pair[0] is None:
        st.markdown("This BERT has no ALBERT counterpart (pick an ALBERT preset).")
    else:
        seq = min(wl.seq_len, pair[0].max_position_embeddings)
        ratios = {b: inference_ratio(pair[0], profile, b, seq, wl.dtype)[2] for b in (1, LARGE_BATCH)}
        st.markdown(figures_hardware.speed_answer(pair[0].label, pair[1].label, ratios, profile.label))

with st.container(border=True, key="hw_answer_memory"):
    st.markdown("**What is the largest batch that fits in N GB at sequence 512?** (training, AdamW, estimate)")
    gb = st.number_input("GB per device", 1, 1024, 16, key="hw_gb")
    rows = []
    for name in ("bert-large", "albert-xxlarge"):
        row = {"model": name}
        row["batch, fp16 mixed"] = largest_batch(PRESETS[name], gb * 1e9, 512, "fp16", precision="mixed")
        row["batch, fp32"] = largest_batch(PRESETS[name], gb * 1e9, 512, "fp32")
        rows.append(row)
    st.dataframe(rows, hide_index=True, key="hw_batch_table")
    st.caption("From estimate_memory (weights, gradients and AdamW states exact; activations estimated). Users "
               "report about 12 (BERT-large) vs 6 (ALBERT-xxlarge) on a 16 GB card with mixed precision; the "
               "estimate (mixed: fp16 weights, gradients and activations, fp32 master weights and Adam moments) "
               "leaves out the framework's own memory (CUDA context, allocator slack), and gives the same "
               "ordering: ALBERT-xxlarge's activations "
               "at H = 4096 outweigh the parameters sharing saves.")

with st.container(border=True, key="hw_answer_train"):
    st.markdown(f"**How long does it take to train on N tokens with {chips} chip(s)?** (estimate)")
    tokens_b = st.number_input("Billions of tokens", 0.001, 10_000.0, 1.0, key="hw_tokens")
    seconds = time_to_train(est, tokens_b * 1e9)
    st.markdown(f"{fmt_duration(seconds)} for {tokens_b:g} B tokens on {chips} × {profile.label} at batch "
                f"{wl.batch} × {wl.seq_len} ({fmt_duration(est.training_s)} per step).")

# ----------------------------------------------------------------------------- data parallel
with st.container(border=True, key="hw_data_parallel"):
    st.markdown("**What does sharing buy when the same run scales out?** Gradient traffic per step")
    grad = DTYPE_BYTES[wl.dtype]
    twin_cfg = bert_twin(cfg)
    mine, theirs = gradient_bytes(cfg, wl.dtype), gradient_bytes(twin_cfg, wl.dtype)
    st.markdown(
        f"Every data-parallel step all-reduces the gradients of the unique parameters (time model): "
        f"**{fmt_bytes(mine)}** for {escape_markdown(cfg.label)} against {fmt_bytes(theirs)} for its BERT twin "
        f"({wl.dtype} gradients, {grad} bytes each; a ring sends 2(n-1)/n of it per chip)."
    )
    measured = measured_allreduce()
    if measured is None:
        st.caption(f"No local measurement shipped; `{MEASURE_COMMAND}` produces it.")
    else:
        st.dataframe(figures_hardware.measured_allreduce_frame(measured, matching_preset(cfg.replace(
            head="model"))), hide_index=True, width="stretch", key="hw_measured_allreduce")
        st.caption(escape_markdown(figures_hardware.measured_takeaway(measured)))
    st.markdown(
        "**Scaling out.** This app stays one process; the lab's trainer runs data-parallel under "
        "`torch.distributed` (DistributedDataParallel: gloo on CPU, nccl on GPU). Every process takes its "
        "shard of the same global batch, so the loss curve is the one-process curve, and `train --json` "
        "reports `allreduce_bytes_per_step`, counted by a DDP communication hook:"
    )
    st.markdown(figures_hardware.scale_out_commands())

# ----------------------------------------------------------------------------- Table 2
st.subheader("The paper's speed column, recomputed")
df = cached_table2()
st.plotly_chart(figures_hardware.table2_bars(df), key="hw_table2_bars", width="stretch")
st.dataframe(figures_hardware.table2_frame(df), hide_index=True, width="stretch", key="hw_table2")
st.caption(figures_hardware.table2_takeaway(df, TABLE2_COMM_EFFICIENCY, TABLE2_CHIPS))
with st.expander("How Table 2 is recomputed"):
    st.markdown(
        f"""
- Setting of the paper: batch 4,096, sequence 512, Cloud TPU v3, pre-training heads, the MLM head on the
  15% masked positions, LAMB (two states per weight, as AdamW). The paper says 64 to 512 TPUs depending
  on size, and (its Table 5) BERT-large and ALBERT-xxlarge took 34 h for 400k steps and 32 h for 125k steps
  on the same number of TPUs. Only {TABLE2_CHIPS} chips is consistent with both: on 256 chips
  ALBERT-xxlarge's 0.92 s per step would need more than the chips' peak.
- The **one calibrated constant**: the gradient all-reduce reaches {TABLE2_COMM_EFFICIENCY:.1%} of the
  datasheet's all-reduce bandwidth (fitted once, least squares on all six log ratios). With the datasheet
  figure the all-reduce is a few percent of a step and the model stays near the FLOPs-only column.
- BERT-base's 4.7x is out of reach of any model built on these counts. A predicted speedup is a ratio of
  sums of parts (matmuls, elementwise traffic, optimizer update, all-reduce), and a ratio of sums always
  lies between the smallest and the largest ratio of its parts, whatever efficiency or bandwidth each part
  is given: the column "any model on these parts" is that range. BERT-base's FLOPs, parameters and
  activations are each about a third of BERT-large's, so its range ends near 3.4x, below the ±20% band
  (3.76x). Something outside the counts (another pod size for that run, memory pressure, ...) would be
  needed; the paper does not say.
- Paper speedups ({", ".join(f"{k} {v}x" for k, v in PAPER_SPEEDUP.items())}) are the paper's measurements,
  not ours.
"""
    )

# ----------------------------------------------------------------------------- profiles
with st.expander("Hardware profiles and their sources"):
    shown = [*DATASHEET_PROFILES.values(), *([profile] if profile.measured else [])]
    st.dataframe(figures_hardware.profiles_frame(shown), hide_index=True, width="stretch", key="hw_profiles")
    st.caption("Dense peaks only (never the 'with sparsity' figures, twice as high). 'Achievable' is an "
               "assumption for datasheet profiles; this machine's figures are measured (1.0: the probe "
               "already measures what a matmul achieves).")
