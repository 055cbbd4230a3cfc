"""Scaling: how parameters, FLOPs and memory of BERT and ALBERT grow with H, L, V and E, and what
each sharing mode holds. The current config is starred (or outlined) in every chart."""

from __future__ import annotations

import streamlit as st

from albert_core import PRESETS, ModelConfig, coerce
from albert_core.configuration.config import SHARING_LABELS
from albert_core.format import escape_markdown, fmt_bytes, fmt_flops, fmt_params, fmt_pct, fmt_ratio
from ui import caches
from ui import figures_scaling as fs
from ui import scaling_takeaways as tk
from ui.render import takeaway
from ui.state import cached_figure, cached_result, current

H_VALUES = (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
L_VALUES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
V_VALUES = (1_000, 5_000, 10_000, 20_000, 30_000, 50_000, 100_000, 150_000, 250_000)
E_VALUES = (64, 128, 256, 512)
HEAT_E = (32, 64, 128, 256, 512, 768, 1024)
HEAT_H = (256, 512, 768, 1024, 2048, 4096)
PRESET_MAX_SEQ = min(p.max_position_embeddings for p in PRESETS.values())


def _with(values: tuple[int, ...], extra: int) -> tuple[int, ...]:
    return tuple(sorted({*values, extra}))


def figure(builder: str, *args):
    """``fs.<builder>(*args)``, built once per distinct input (`ui.state.cached_figure`). Each chart's
    base is keyed by what it plots only, its current-config marks are added per run
    (``fs.mark_<chart>``, ~1 ms): a move of L rebuilds only the charts whose data depend on L."""
    return cached_figure(getattr(fs, builder), *args)


def albert_form(cfg: ModelConfig) -> ModelConfig:
    """The config itself if ALBERT; for BERT the same encoder with factorized embeddings (E = 128,
    nothing shared), so the E-charts show what factorization alone would do to it."""
    if cfg.family == "albert":
        return cfg
    return coerce({"family": "albert", "sharing": "none"}, cfg).config


cfg, wl = current()
res = cached_result(cfg, wl)
total = res.own.params.total
chart = {"width": "stretch"}

st.title("Scaling")
st.caption(
    f"Current config: **{escape_markdown(cfg.label)}** ({fmt_params(total)} params), starred in every chart. "
    f"Workload: batch {wl.batch} × {wl.seq_len} tokens, {wl.dtype}, {wl.optimizer}. All counts are exact "
    "(the same code as the Explorer); only activation memory is an estimate."
)

# ----------------------------------------------------------------------------- H and L
left, right = st.columns(2)
with left:
    hs = _with(H_VALUES, cfg.hidden_size)
    df, i_note, at, top = caches.scaling_hidden_frame(cfg, hs)
    st.plotly_chart(fs.mark_params_vs_hidden(figure("params_vs_hidden_base", df), cfg, total),
                    key="fig_params_vs_hidden", **chart)
    if at is not None and top is not None:
        takeaway(
            f"at H = {cfg.hidden_size:,} ALBERT holds {fmt_ratio(at)} BERT's parameters, "
            f"at H = {max(hs):,} {fmt_ratio(top)} ({i_note}): both grow as H² "
            "(a layer is 4H² + 2HI), so the gap is set by how many layer copies each holds."
        )
    else:
        takeaway(f"BERT grows as H² per layer (a layer is 4H² + 2HI, here {i_note}); switch the family to "
                 "ALBERT to compare.")

with right:
    # Parameters are linear in L in every sharing mode (constant when all-shared), so inside the swept depths the
    # star lies on the lines without a point of its own: the frame and the chart then serve every depth.
    swept = [v for v in L_VALUES if v >= cfg.num_hidden_groups]
    inside = bool(swept) and swept[0] <= cfg.num_layers <= swept[-1]
    ls = tuple(swept) if inside else tuple(sorted({*swept, cfg.num_layers}))
    df = caches.scaling_sweep(fs.any_depth(cfg), "num_layers", ls, wl=wl)
    st.plotly_chart(fs.mark_params_vs_layers(figure("params_vs_layers_base", df), cfg, total),
                    key="fig_params_vs_layers", **chart)
    if cfg.family == "albert" and cfg.sharing == "all":
        takeaway(
            f"all-shared ALBERT stays at {fmt_params(total)} however deep it gets (G×K = "
            f"{cfg.num_hidden_groups * cfg.inner_group_num} layer copies held); BERT adds one layer of "
            "weights per layer. The FLOPs grow with L for both."
        )
    elif cfg.family == "albert" and cfg.sharing != "none":
        grows = "feed-forward" if cfg.sharing == "attention" else "attention"
        takeaway(f"{SHARING_LABELS[cfg.sharing]}: only the unshared {grows} block adds weights with each layer; "
                 "BERT adds a whole layer.")
    else:
        takeaway("without sharing every layer brings its own weights: params grow linearly in L.")

# ----------------------------------------------------------------------------- embeddings
left, right = st.columns(2)
with left:
    acfg = albert_form(cfg)
    df = caches.scaling_embedding_frame(fs.any_depth(acfg), _with(V_VALUES, cfg.vocab_size),
                                        _with(E_VALUES, acfg.embedding_size), wl)
    st.plotly_chart(fs.mark_embedding_vs_vocab(figure("embedding_vs_vocab_base", df), cfg,
                                               res.own.groups["embeddings"]),
                    key="fig_embedding_vs_vocab", **chart)
    h, e = cfg.hidden_size, acfg.embedding_size
    takeaway(
        f"BERT's table grows by H = {h:,} weights per word, ALBERT's by E = {e:,} ({fmt_ratio(h / e)} less), "
        "plus a fixed E×H projection."
        if h > e else "with E ≥ H factorizing the embeddings saves nothing: the projection only adds E×H."
    )

with right:
    seed = caches.scaling_seed_table(fs.any_depth(cfg))  # V, E and H matter, not the depth
    st.plotly_chart(figure("embedding_reduction", seed, "current"), key="fig_embedding_reduction", **chart)
    base_row = seed.iloc[0]
    takeaway(
        f"the often-quoted embedding chart (V = {fs.SEED_VOCAB:,}, E = {fs.SEED_EMBEDDING}): ALBERT-base "
        f"{base_row['standard']:,} → {base_row['factorized']:,} token-embedding weights "
        f"({fmt_pct(base_row['reduction'])} less); the saving grows with H because only E×H does."
    )

# ----------------------------------------------------------------------------- presets and (E, H)
left, right = st.columns(2)
with left:
    seq = min(wl.seq_len, PRESET_MAX_SEQ)
    df, (param_ratio, flop_ratio) = caches.scaling_presets(seq, cfg.head)
    st.plotly_chart(fs.mark_flops_vs_params(figure("flops_vs_params_base", df), fs.current_point(cfg, seq)),
                    key="fig_flops_vs_params", **chart)
    takeaway(
        f"ALBERT-xxlarge has {fmt_ratio(param_ratio)} BERT-large's parameters but {fmt_ratio(flop_ratio)} "
        f"its FLOPs per {seq}-token sequence: sharing saves parameters, never compute."
    )

with right:
    acfg = albert_form(cfg)
    df, g = caches.scaling_heatmap_frame(fs.params_depth_key(acfg), _with(HEAT_E, acfg.embedding_size),
                                         _with(HEAT_H, acfg.hidden_size))
    base = figure("params_heatmap_base", df)
    st.plotly_chart(fs.mark_params_heatmap(base, acfg) if cfg.family == "albert" else base,
                    key="fig_params_heatmap", **chart)
    mode = SHARING_LABELS[acfg.sharing]
    note = "" if cfg.family == "albert" else " (BERT shown in its factorized form, nothing shared)"
    takeaway(f"{mode}{note}: at H = {acfg.hidden_size:,}, E from {g.e_lo} to {g.e_hi:,} takes the total from "
             f"{fmt_params(g.at_h_e_lo)} to {fmt_params(g.at_h_e_hi)}; at E = {acfg.embedding_size:,}, H from "
             f"{g.h_lo} to {g.h_hi:,} takes it from {fmt_params(g.at_e_h_lo)} to "
             f"{fmt_params(g.at_e_h_hi)}: the encoder grows as H², E only scales the V×E table.")

# ----------------------------------------------------------------------------- sharing, memory
left, right = st.columns(2)
with left:
    t4, (saved_attention, saved_ffn) = caches.scaling_table4()
    st.plotly_chart(fs.mark_sharing_modes(figure("sharing_modes_base", t4), total), key="fig_sharing_modes",
                    **chart)
    takeaway(
        f"exact counts (bars) vs the paper's rounded figures (diamonds): at E = 128 sharing attention saves "
        f"{fmt_params(saved_attention)}, sharing the FFN {fmt_params(saved_ffn)}: "
        "the FFN (2HI) is twice the attention (4H²) when I = 4H."
    )

with right:
    kind = res.own.memory_kind
    rows = {cfg.label: res.own.memory}
    if cfg.family == "albert":
        rows[f"BERT twin: {res.twin.config.label}"] = res.twin.memory
    mem = fs.memory_frame(rows)
    st.plotly_chart(figure("memory_bars", mem, cfg.label, kind, res.own.memory.part_labels()),
                    key="fig_memory_bars", **chart)
    if len(rows) == 2:
        a, b = mem.iloc[0], mem.iloc[1]
        takeaway(
            f"{kind} memory {fmt_bytes(a['total'])} vs {fmt_bytes(b['total'])}: weights, gradients and optimizer "
            f"state follow the parameter count, the activations ({fmt_bytes(a['activations'])} vs "
            f"{fmt_bytes(b['activations'])}) follow the executed layers L×K and batch × sequence: "
            "sharing does not shrink them."
        )
    else:
        takeaway(f"{kind} memory {fmt_bytes(mem.iloc[0]['total'])}; activations grow with batch × sequence, "
                 "not with the parameter count.")
    if kind == "inference":
        st.caption("int8 weights are inference-only: no gradients or optimizer state.")

# ----------------------------------------------------------------------------- sequence length and batch
st.subheader("Sequence length and batch")
seqs = fs.workload_values(wl.seq_len, min(64, cfg.max_position_embeddings), cfg.max_position_embeddings)
batches = fs.workload_values(wl.batch, 1, min(4096, max(64, 4 * wl.batch)))
by_seq = caches.scaling_workload_frame(cfg, wl, "seq_len", seqs)
by_batch = caches.scaling_workload_frame(cfg, wl, "batch", batches)
left, right = st.columns(2)
with left:
    st.plotly_chart(figure("flops_vs_seq", by_seq, wl.seq_len), key="fig_flops_vs_seq", **chart)
    span = tk.seq_span(by_seq)
    takeaway(f"attention scores are {fmt_pct(span.attention_share_lo, 0)} of the forward FLOPs at S = "
             f"{span.seq_lo:,} and {fmt_pct(span.attention_share_hi, 0)} at S = {span.seq_hi:,}: "
             "the weight matmuls grow as S, the scores as S², whatever the sharing.")
with right:
    st.plotly_chart(figure("memory_vs_workload", by_seq, "seq_len", wl.seq_len),
                    key="fig_memory_vs_seq", **chart)
    takeaway(f"from S = {span.seq_lo:,} to {span.seq_hi:,} the activations (an estimate) go from "
             f"{fmt_bytes(span.activations_lo)} to {fmt_bytes(span.activations_hi)}; weights, gradients and "
             "optimizer states do not depend on S.")
left, right = st.columns(2)
with left:
    st.plotly_chart(figure("memory_vs_workload", by_batch, "batch", wl.batch),
                    key="fig_memory_vs_batch", **chart)
    one = tk.per_sequence(by_batch)
    takeaway(f"each sequence of {wl.seq_len} tokens adds about {fmt_bytes(one.activations)} of "
             f"activations; the {fmt_bytes(one.fixed)} of weights and states are paid once.")
with right:
    st.plotly_chart(figure("flops_vs_batch", by_batch, wl.batch), key="fig_flops_vs_batch", **chart)
    takeaway(f"training FLOPs grow linearly with B: {fmt_flops(one.training_flops)} per "
             f"{wl.seq_len}-token sequence" + (" (with the recomputed forward of gradient checkpointing)."
                                               if wl.checkpointing else "."))
