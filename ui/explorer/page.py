"""Explorer: headline numbers, the parameter breakdown, FLOPs by component, ALBERT vs its BERT twin, exports."""

from __future__ import annotations

from functools import partial

import streamlit as st

from albert_core.configuration.presets import config_name
from albert_core.counting.flops import six_n_flops, six_n_params
from albert_core.counting.memory import MAX_FIT_BATCH
from albert_core.counting.params import component_columns
from albert_core.counting.report import albert_counterpart
from albert_core.format import escape_markdown, fmt_bytes, fmt_flops, fmt_macs, fmt_params
from ui import figure_style, render, sidebar, tables
from ui.explorer import albertize as albertize_panel
from ui.explorer import architecture as figures_architecture
from ui.explorer import exports, review
from ui.explorer import figures as figures_explorer
from ui.explorer.cache import explorer_figures
from ui.state import cached_result, current

cfg, wl = current()
res = albertize_panel.explorer_result(cached_result(cfg, wl))  # an ALBERTized config: against what it came from
fig_treemap, fig_flops, fig_twin = explorer_figures(cfg, wl)
if res.twin_kind != "bert":
    fig_twin = albertize_panel.twin_figure(cfg, wl, res.twin.config, res)
own, twin = res.own, res.twin
bd, forward = own.params, own.flops_sequence.forward
train_mem = own.training_memory

st.title("Explorer")
TWIN_NAME = figures_explorer.TWIN_NAMES[res.twin_kind][1]
TWIN_HELP = {
    "bert": "The BERT twin is the paper's BERT of this size: the same V, H, L, heads, I and head; E = H, no "
            "sharing, GELU; dropout 0.1 in its memory estimate, as BERT trains. It gives the same numbers as that "
            "BERT pinned on Compare.",
    "albertized": "The ALBERTized twin is this encoder with ALBERT's two ideas: a factorized embedding of E = 128 "
                  "and every layer sharing one set of weights (G = 1); everything else as it is. No transformers "
                  "class builds it: the numbers are counted, and the Live model page builds it.",
    "original": "The original is this encoder without ALBERT's ideas: no sharing, and E = H where the family has "
                "no factorized embedding of its own.",
}
st.caption(
    f"**{cfg.label}**, {cfg.head_label} · {wl.summary}. "
    + (f"Deltas compare with its {TWIN_NAME}, **{config_name(twin.config)}** (green = smaller)."
       if twin.config != cfg else "A BERT is its own twin: no deltas."),
    help=TWIN_HELP[res.twin_kind] if twin.config != cfg else None,
)


def memory_parts_text(mem) -> str:
    """Each part of a memory estimate with its name (the optimizer's fp32 master copy, the estimate)."""
    names = mem.part_labels()
    return " + ".join(f"{names[k]} {fmt_bytes(v)}" for k, v in mem.as_dict().items() if k != "total")


def _delta(value: float, base: float) -> str | None:
    if value == base:
        return None
    if res.twin_kind == "albertized":  # an original's page: what ALBERTizing saves, not the original's excess
        return f"{figure_style.fmt_delta(base / value - 1)} ALBERTized"
    return f"{figure_style.fmt_delta(value / base - 1)} vs {TWIN_NAME}"


def metric(label: str, value: str, *, delta: str | None = None, help: str, inverse: bool = True) -> None:
    st.metric(label, value, delta=delta, delta_color="inverse" if inverse else "normal", help=help)


# Eight metrics as a 4 x 2 grid: four columns of two (one message a metric, five for the grid; a row of columns
# per line and a container per metric were 26). A phone stacks the columns: each pair reads together.
size_col, embed_col, encoder_col, flops_col = st.columns(4)
with size_col:
    metric("Total parameters", fmt_params(bd.total), delta=_delta(bd.total, twin.params.total),
           help=f"Exactly {bd.total:,} unique parameters (tied weights once), as "
           "sum(p.numel() for p in model.parameters()) of the transformers model.")
    metric("Weights memory", fmt_bytes(own.inference_memory.weights),
           delta=_delta(own.inference_memory.weights, twin.inference_memory.weights),
           help=f"Parameters × {wl.dtype} bytes (exact; MB = 10^6 bytes).")
with embed_col:
    metric("Embedding parameters", fmt_params(own.groups["embeddings"]),
           delta=_delta(own.groups["embeddings"], twin.groups["embeddings"]),
           help="Word, position and token-type tables, their LayerNorm and (ALBERT) the E→H projection.")
    if train_mem is None:
        metric("Training memory", "n/a",
               help=f"int8 weights are inference-only: pick fp32, fp16 or bf16 to train. Inference working "
               f"set: {fmt_bytes(own.inference_memory.total)}.")
    else:
        metric("Training memory", fmt_bytes(train_mem.total),
               delta=_delta(train_mem.total, twin.training_memory.total),
               help=f"{memory_parts_text(train_mem)} for batch {wl.batch} × {wl.seq_len}"
               f"{', gradient checkpointing' if wl.checkpointing else ''}.")
with encoder_col:
    metric("Encoder parameters", fmt_params(own.groups["encoder"]),
           delta=_delta(own.groups["encoder"], twin.groups["encoder"]),
           help="Attention and feed-forward blocks with their LayerNorms: the copies held, not the layers run.")
    metric("Saved by sharing", fmt_params(bd.saved_by_sharing),
           help=f"Parameters an unshared model of the same executed depth "
           f"({figures_architecture.depth_short(cfg)}) would "
           f"add: {bd.unshared_total:,} without sharing vs {bd.total:,}.")
with flops_col:
    metric("Forward FLOPs / sequence", fmt_flops(forward), delta=_delta(forward, twin.flops_sequence.forward),
           help=f"Matmul FLOPs (2 per multiply-add) for one sequence of {wl.seq_len} tokens, attention "
           f"scores included. MACs are half: {own.flops_sequence.macs:,}.")
    metric("Training FLOPs / token", fmt_flops(own.flops_batch.per_token_training),
           delta=_delta(own.flops_batch.per_token_training, twin.flops_batch.per_token_training),
           help="Forward + backward (backward = 2 × forward)"
           + (", plus the encoder layers' forward run again by gradient checkpointing," if wl.checkpointing else "")
           + " per token at this batch and sequence length. The "
           "usual rule of thumb, 6 × N, takes N = the non-embedding parameters a token passes through: the "
           f"encoder layers, once per executed layer (here N = {six_n_params(bd):,}, so 6N = "
           f"{fmt_flops(six_n_flops(bd))}); it leaves out the attention scores, the embedding projection and "
           "the heads.")

# ----------------------------------------------------------------------------- architecture
st.subheader("Architecture")
render.chart(figures_architecture.architecture_diagram(cfg), key="architecture_diagram", width="stretch")
st.caption(figures_architecture.architecture_summary(cfg))
if schedule := figures_architecture.schedule_text(cfg):
    st.caption(escape_markdown(schedule))
if lora_cost := figures_architecture.lora_cost_text(bd, own.flops_sequence, wl.batch):
    st.markdown(escape_markdown(lora_cost))

# ----------------------------------------------------------------------------- breakdown
st.subheader("Parameter breakdown")
left, right = st.columns([11, 9])
with left:
    st.dataframe(
        tables.columns(component_columns(bd.components, "params")), hide_index=True, width="stretch",
        height="content",
        column_order=["label", "params", "unshared", "share"],  # the treemap colours show the group
        column_config={
            "label": st.column_config.TextColumn("Component", width="medium",
                                                 help="Live-model module the parameters belong to."),
            "params": st.column_config.NumberColumn("Unique params", format="localized",
                                                    help="Parameters stored (shared copies counted once)."),
            "unshared": st.column_config.NumberColumn(
                "Without sharing", format="localized", help="One copy per executed layer (L×K)."),
            "share": st.column_config.ProgressColumn("Share", format="percent", min_value=0, max_value=1,
                                                     width="small", help="Share of the unique parameters."),
        },
    )
with right:
    render.chart(fig_treemap, key="breakdown_treemap", width="stretch")
st.caption(figures_explorer.breakdown_takeaway(bd))

# ----------------------------------------------------------------------------- FLOPs
st.subheader("Where the compute goes")
comp_flops = own.flops_sequence.by_name()
scores = comp_flops.get("encoder.attention.scores", 0)
render.chart(fig_flops, key="flops_bars", width="stretch")
st.caption(figures_explorer.flops_takeaway(comp_flops, forward, wl.seq_len))

# ----------------------------------------------------------------------------- does it fit?
st.subheader("Does it fit?")
fit = figures_explorer.fit_display_columns(figures_explorer.fit_columns(res))
batch_cols = [c for c in fit if c.endswith(": batch")]
st.dataframe(
    tables.columns(fit), hide_index=True, width="stretch",
    column_config={"device": st.column_config.TextColumn("Device memory", help="Decimal GB (10⁹ bytes).")}
    | {c: st.column_config.TextColumn(c.replace(": batch", ": largest batch"),
                                      help="\"does not fit\": not even one sequence fits.") for c in batch_cols},
)
mode = ("inference working set (int8)" if not wl.training else
        f"training, {wl.dtype} {wl.precision}, {wl.optimizer}"
        + (", gradient checkpointing" if wl.checkpointing else ""))
st.caption(f"Largest batch of {wl.seq_len}-token sequences whose estimated memory ({mode}) fits, searched "
           f"up to {MAX_FIT_BATCH:,}. Activations are an estimate, and nothing is set aside for the CUDA "
           "context, the framework or allocator fragmentation (often 1-3 GB): leave headroom.")

# ----------------------------------------------------------------------------- vs BERT
with st.container(border=True, key="panel_vs_bert"):
    st.subheader("Does ALBERT run faster or use less memory than BERT?" if res.twin_kind == "bert" else
                 "What do ALBERT's two ideas do to this encoder?")
    if res.twin_kind != "bert":
        render.chart(fig_twin, key="twin_bars", width="stretch")
        st.markdown(albertize_panel.twin_summary(cfg, wl, res.twin.config, res))
        original, albertized = ((cfg, res.twin.config) if res.twin_kind == "albertized" else (res.twin.config, cfg))
        st.markdown(f"**What ALBERTizing saves**: {escape_markdown(config_name(original))} against E = "
                    f"{albertized.embedding_size} alone, the sharing alone and both")
        st.dataframe(albertize_panel.savings_frame(albertize_panel.savings(original, albertized, wl)),
                     hide_index=True, width="stretch", key="albertize_savings",
                     # pinned and at most medium: on a phone the values scroll beside the cost's name
                     column_config={"cost": st.column_config.TextColumn("cost", width="medium", pinned=True)})
        st.caption(f"Each change against {escape_markdown(config_name(original))} (negative: less; for the largest "
                   "batch, positive: more fits). Parameters and FLOPs are exact counts; the training memory's "
                   "activations, the batch that fits (searched on that estimate) and the step time (time model, "
                   "datasheet profile) are estimates.")
    elif not res.is_bert:  # an ALBERT beside its BERT twin
        render.chart(fig_twin, key="twin_bars", width="stretch")
        st.markdown(figures_explorer.twin_summary(res))
    elif fig_twin is None:
        st.markdown("This config **is** a BERT, its own twin. Pick an ALBERT preset to compare.")
    else:
        alt = albert_counterpart(cfg)
        st.markdown(f"This config **is** a BERT. Its ALBERT counterpart, **{alt.label}** (E = "
                    f"{alt.embedding_size}, one layer shared by all {cfg.num_layers}), compares like this:")
        render.chart(fig_twin, key="twin_bars", width="stretch")
        st.markdown(figures_explorer.twin_summary(cached_result(alt, wl),
                                                  names=("its ALBERT counterpart", "this BERT")))
    local_note = (f" (the {cfg.local_layers * cfg.inner_group_num} local layers score only the pairs within "
                  f"{cfg.local_window // 2} tokens of each other)" if cfg.local_window else "")
    average = " on average" if cfg.local_window else ""
    per_layer = fmt_flops(scores / cfg.executed_layers)
    with st.expander("Recurring confusions", expanded=False):
        st.markdown(
            f"""
- **FLOPs or MACs?** One multiply-add is one MAC and two FLOPs. This app counts FLOPs
  ({fmt_flops(forward)} per sequence = {fmt_macs(forward / 2)}); tools such as thop or ptflops report
  MACs, hence the factor of 2.
- **Where are the attention FLOPs?** QKᵀ and the attention-weighted values are matmuls without weights:
  4·S²·H per executed layer{local_note}, {per_layer} per layer here{average}, {fmt_flops(scores)} over
  all {figures_architecture.depth_short(cfg)} layers. Counters that only hook `nn.Linear` miss them, and
  torch's FlopCounterMode counts CPU `scaled_dot_product_attention` as 0 (use `attn_implementation="eager"`).
- **What does `num_hidden_groups` do?** It is G, the number of distinct layer copies: layer i uses group
  int(i / (L / G)) (i mod G with the block order "cycle"). G = 1 shares one layer across all {cfg.num_layers};
  G = L shares nothing. It changes parameters, never FLOPs or activations. `inner_group_num` (K) repeats layers
  inside each group and *does* add compute.
- **Why is my ALBERT as slow as BERT?** See above: same executed depth and width, same FLOPs.
"""
        )

# ----------------------------------------------------------------------------- design review
if doctor := st.session_state.get(sidebar.DOCTOR_KEY):
    review.render_doctor(*doctor)
review.render_doctor_paste()
review.render_audit(cfg, wl)

# ----------------------------------------------------------------------------- exports
st.subheader("Exports")
try:
    exports.hf_config_json(cfg)  # whether transformers can hold this config (the file itself is made on a click)
    hf_problem = None
except ValueError as exc:
    hf_problem = str(exc)
# The files are built when a visitor clicks (a callable `data`), not on every rerun of the page.
# One row that wraps (one horizontal container; two rows of four columns were ten more messages a rerun).
DL = {"on_click": "ignore", "icon": ":material/download:", "width": "content"}
with st.container(horizontal=True, key="exports", gap="small"):
    st.download_button("transformers config.json", partial(exports.hf_config_json, cfg) if hf_problem is None else "",
                       file_name="config.json", mime="application/json",
                       key="dl_hf_config", disabled=hf_problem is not None,
                       help="`AlbertConfig` / `BertConfig` JSON: `from_pretrained` of its folder builds this model.",
                       **DL)
    st.download_button("Breakdown CSV", partial(exports.breakdown_csv, bd),
                       file_name=exports.file_name(cfg, "params", "csv"),
                       mime="text/csv", key="dl_breakdown_csv", help="The parameter breakdown table above.", **DL)
    st.download_button("JSON report", partial(exports.report_json, res),
                       file_name=exports.file_name(cfg, "report", "json"),
                       mime="application/json", key="dl_report_json",
                       help="Every number on this page, and the BERT twin's.", **DL)
    st.download_button("FLOP breakdown CSV", partial(exports.flops_csv, res),
                       file_name=exports.file_name(cfg, "flops", "csv"),
                       mime="text/csv", key="dl_flops_csv",
                       help="Forward FLOPs per component for one sequence and the batch, training FLOPs for the batch.",
                       **DL)
    st.download_button("Memory breakdown CSV", partial(exports.memory_csv, res),
                       file_name=exports.file_name(cfg, "memory", "csv"),
                       mime="text/csv", key="dl_memory_csv",
                       help="Weights, gradients, optimizer states, activations (estimate): training and inference.",
                       **DL)
if hf_problem:
    st.caption(escape_markdown(f"config.json not available: {hf_problem}.") + (
        " The paper's shared-attention and shared-FFN modes have no transformers class."
        if cfg.sharing in ("attention", "ffn") else ""))
st.caption("Charts: use the camera icon in each chart's toolbar to save a PNG.")
