"""Scaling: how parameters, FLOPs and memory of BERT and ALBERT grow with H, L, V and E, and what
each sharing mode holds. The current config is starred (or outlined) in every chart."""

from __future__ import annotations

import streamlit as st

from albert_core import PRESETS, ModelConfig, coerce, count_flops, count_params
from albert_core.configuration.config import FAMILY_NAMES, LORA_MATRIX_LABELS, PAPER_FAMILIES, SHARING_LABELS
from albert_core.counting.flops import differences_words, flop_differences
from albert_core.format import (
    change_words,
    escape_markdown,
    fmt_bytes,
    fmt_flops,
    fmt_params,
    fmt_pct,
    fmt_ratio,
)
from ui import tables
from ui.render import chart, takeaway
from ui.scaling import charts, families
from ui.scaling import figures as fs
from ui.state import cached_result, current

H_VALUES = (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
L_VALUES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
V_VALUES = (1_000, 5_000, 10_000, 20_000, 30_000, 50_000, 100_000, 150_000, 250_000)
E_VALUES = (64, 128, 256, 512)
HEAT_E = (32, 64, 128, 256, 512, 768, 1024)
HEAT_H = (256, 512, 768, 1024, 2048, 4096)
PRESET_MAX_SEQ = min(p.max_position_embeddings for p in PRESETS.values())


def _with(values: tuple[int, ...], extra: int) -> tuple[int, ...]:
    return tuple(sorted({*values, extra}))


def albert_form(cfg: ModelConfig) -> ModelConfig:
    """The config itself if ALBERT; for BERT the same encoder with factorized embeddings (E = 128,
    nothing shared), so the E-charts show what factorization alone would do to it."""
    if cfg.family == "albert":
        return cfg
    return coerce({"family": "albert", "sharing": "none"}, cfg).config


def lora_section(cfg: ModelConfig, total: int) -> None:
    """Parameters against the LoRA rank for the config, or why it cannot carry a LoRA per position."""
    st.subheader("A LoRA per position on the shared weights")
    refusal = fs.lora_refusal(cfg)
    if refusal is not None:
        st.info(refusal)
        return
    base = fs.lora_base(cfg)
    lora = charts.lora(base, fs.lora_ranks(base, cfg.lora_rank))
    left, right = st.columns(2)
    with left:
        chart(lora.marked(cfg, total), key="fig_params_vs_lora_rank", **STRETCH)
        n = lora.numbers
        top = max(n.ranks)
        text = (f"each unit of rank adds {n.per_rank:,} parameters (r × (d_in + d_out) per matrix, at every executed "
                f"position that carries it); rank {top:,} adds {fmt_params(n.at_top - n.without)} to the "
                f"{fmt_params(n.without)} without a LoRA ({fmt_pct((n.at_top - n.without) / n.without, signed=True)})")
        if n.break_even is not None:
            where = "" if n.break_even <= n.max_rank else f", past the largest valid rank {n.max_rank:,}"
            text += (f"; the LoRA would hold as many parameters as not sharing at all ({fmt_params(n.unshared)}) at "
                     f"rank ≈ {n.break_even:,.0f}{where}")
        takeaway(text + ". FLOPs grow too: a LoRA on a shared weight cannot be merged into it.")
    with right:
        rows = [f"- **{m}** ({LORA_MATRIX_LABELS[m]}): {positions:,} positions × r × ({d_in:,} + {d_out:,})"
                for m, positions, d_in, d_out in base.lora_terms()]
        st.markdown("A LoRA of rank r on a d_in × d_out matrix holds r × (d_in + d_out) parameters, one per "
                    "executed position of the shared block, and costs 2 × r × (d_in + d_out) FLOPs per token there. "
                    "Here, per unit of rank:\n" + "\n".join(rows))


cfg, wl = current()
res = cached_result(cfg, wl)
total = res.own.params.total
STRETCH = {"width": "stretch"}

st.title("Scaling")
st.caption(
    f"Current config: **{escape_markdown(cfg.label)}** ({fmt_params(total)} params), starred in every chart. "
    f"Workload: {wl.summary}. All counts are exact "
    "(the same code as the Explorer); only activation memory is an estimate."
)

# ----------------------------------------------------------------------------- an encoder after BERT
if cfg.family not in PAPER_FAMILIES:
    original, twin = families.pair(cfg)
    st.subheader(f"{FAMILY_NAMES[cfg.family]} beside its ALBERTized twin")
    left, right = st.columns(2)
    with left:
        share = families.embedding_share(original, twin, _with(families.V_VALUES, cfg.vocab_size))
        chart(share.marked(cfg), key="fig_family_embedding_share", **STRETCH)
        po, pf = count_params(original), count_params(original.replace(embedding_size=twin.embedding_size))
        takeaway(f"at V = {cfg.vocab_size:,} the embeddings are {fmt_pct(po.group_totals()['embeddings'] / po.total)} "
                 f"of this encoder's {fmt_params(po.total)} parameters; E = {twin.embedding_size} alone takes it to "
                 f"{fmt_params(pf.total)}, the embeddings then {fmt_pct(pf.group_totals()['embeddings'] / pf.total)}.")
    with right:
        layers = families.params_vs_layers(original, twin, _with(families.L_VALUES, cfg.num_layers))
        chart(layers.marked(cfg), key="fig_family_params_vs_layers", **STRETCH)
        fo, ft = (count_flops(c, 1, min(wl.seq_len, original.max_seq_len, twin.max_seq_len))
                  for c in (original, twin))
        where = differences_words(flop_differences(ft, fo))
        takeaway(f"the shared twin ({fmt_params(count_params(twin).total)}) stays flat in L, but at L = "
                 f"{cfg.num_layers} it runs {fmt_flops(ft.forward)} per sequence against {fmt_flops(fo.forward)}, "
                 f"{change_words(ft.forward, fo.forward)}" + (f" ({where})" if where else "")
                 + ": sharing saves parameters, never compute.")
    st.subheader("Every family at its published size")
    st.dataframe(tables.columns(families.family_table()), hide_index=True, width="stretch", column_config={
        "embedding share": st.column_config.ProgressColumn("embedding share", format="percent", min_value=0,
                                                           max_value=1, help="Share of the parameters in the "
                                                           "embeddings (tables, their norm, any projection)."),
        "V": st.column_config.NumberColumn("V", format="localized"),
        "E = 128": st.column_config.TextColumn("E = 128", help="The same model with a factorized embedding "
                                               "of 128 (ALBERT's E): exact."),
        "E = 128, all shared": st.column_config.TextColumn("E = 128, all shared",
                                                           help="And every layer sharing one set of weights."),
    })
    lora_section(cfg, total)
    st.caption("The charts below compare BERT with ALBERT (the paper's two families); switch the family to BERT or "
               "ALBERT in the sidebar to see them.")
    st.stop()

# ----------------------------------------------------------------------------- H and L
left, right = st.columns(2)
with left:
    hs = fs.hidden_sizes_that_fit(cfg, _with(H_VALUES, cfg.hidden_size))
    hidden = charts.hidden(cfg, hs)
    chart(hidden.marked(cfg, total), key="fig_params_vs_hidden", **STRETCH)
    i_note, at, top = hidden.numbers.i_note, hidden.numbers.share_at, hidden.numbers.share_top
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
    swept = [v for v in L_VALUES if v >= fs.least_depth(cfg)]
    inside = bool(swept) and swept[0] <= cfg.num_layers <= swept[-1]
    ls = tuple(swept) if inside else tuple(sorted({*swept, cfg.num_layers}))
    chart(charts.layers(fs.any_depth(cfg), ls, wl).marked(cfg, total), key="fig_params_vs_layers", **STRETCH)
    if cfg.family == "albert" and cfg.sharing == "all" and cfg.lora_rank:
        takeaway(
            f"all-shared ALBERT holds {cfg.attention_copies} layer copies however deep it gets, but its rank-"
            f"{cfg.lora_rank} LoRA adds weights at every executed position: {fmt_params(total)} at L = "
            f"{cfg.num_layers}; BERT adds one layer of weights per layer. The FLOPs grow with L for both."
        )
    elif cfg.family == "albert" and cfg.sharing == "all":
        copies = f"G×K = {cfg.num_hidden_groups * cfg.inner_group_num}" if not cfg.unique_ends else (
            f"(G + 2)×K = {cfg.attention_copies}, with the unique first and last layers")
        takeaway(
            f"all-shared ALBERT stays at {fmt_params(total)} however deep it gets ({copies} layer copies held); "
            "BERT adds one layer of weights per layer. The FLOPs grow with L for both."
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
    embedding = charts.embedding(fs.any_depth(acfg), _with(V_VALUES, cfg.vocab_size),
                                 _with(E_VALUES, acfg.embedding_size), wl)
    chart(embedding.marked(cfg, res.own.groups["embeddings"]), key="fig_embedding_vs_vocab", **STRETCH)
    h, e = cfg.hidden_size, acfg.embedding_size
    takeaway(
        f"BERT's table grows by H = {h:,} weights per word, ALBERT's by E = {e:,} ({fmt_ratio(h / e)} less), "
        "plus a fixed E×H projection."
        if h > e else "with E ≥ H factorizing the embeddings saves nothing: the projection only adds E×H."
    )

with right:
    reduction = charts.reduction(fs.any_depth(cfg))  # V, E and H matter, not the depth
    chart(reduction.marked(), key="fig_embedding_reduction", **STRETCH)
    base_row = reduction.numbers
    takeaway(
        f"the often-quoted embedding chart (V = {fs.SEED_VOCAB:,}, E = {fs.SEED_EMBEDDING}): ALBERT-base "
        f"{base_row.standard:,} → {base_row.factorized:,} token-embedding weights "
        f"({fmt_pct(base_row.reduction)} less); the saving grows with H because only E×H does."
    )

# ----------------------------------------------------------------------------- presets and (E, H)
left, right = st.columns(2)
with left:
    seq = min(wl.seq_len, PRESET_MAX_SEQ)
    presets = charts.presets(seq, cfg.head)
    param_ratio, flop_ratio = presets.numbers
    chart(presets.marked(fs.current_point(cfg, seq)), key="fig_flops_vs_params", **STRETCH)
    takeaway(
        f"ALBERT-xxlarge has {fmt_ratio(param_ratio)} BERT-large's parameters but {fmt_ratio(flop_ratio)} "
        f"its FLOPs per {seq}-token sequence: sharing saves parameters, never compute."
    )

with right:
    acfg = albert_form(cfg)
    heat = charts.heatmap(fs.params_depth_key(acfg), _with(HEAT_E, acfg.embedding_size),
                          fs.hidden_sizes_that_fit(acfg, _with(HEAT_H, acfg.hidden_size)))
    g = heat.numbers
    chart(heat.marked(acfg) if cfg.family == "albert" else heat.base, key="fig_params_heatmap", **STRETCH)
    mode = SHARING_LABELS[acfg.sharing]
    note = "" if cfg.family == "albert" else " (BERT shown in its factorized form, nothing shared)"
    takeaway(f"{mode}{note}: at H = {acfg.hidden_size:,}, E from {g.e_lo} to {g.e_hi:,} takes the total from "
             f"{fmt_params(g.at_h_e_lo)} to {fmt_params(g.at_h_e_hi)}; at E = {acfg.embedding_size:,}, H from "
             f"{g.h_lo} to {g.h_hi:,} takes it from {fmt_params(g.at_e_h_lo)} to "
             f"{fmt_params(g.at_e_h_hi)}: the encoder grows as H², E only scales the V×E table.")

# ----------------------------------------------------------------------------- sharing, memory
left, right = st.columns(2)
with left:
    sharing = charts.sharing()
    saved_attention, saved_ffn = sharing.numbers
    chart(sharing.marked(total), key="fig_sharing_modes", **STRETCH)
    takeaway(
        f"exact counts (bars) vs the paper's rounded figures (diamonds): at E = 128 sharing attention saves "
        f"{fmt_params(saved_attention)}, sharing the FFN {fmt_params(saved_ffn)}: "
        "the FFN (2HI) is twice the attention (4H²) when I = 4H."
    )

with right:
    memory = charts.memory(cfg, wl)
    kind, totals, activations = memory.numbers.kind, memory.numbers.totals, memory.numbers.activations
    chart(memory.marked(), key="fig_memory_bars", **STRETCH)
    if len(totals) == 2:
        takeaway(
            f"{kind} memory {fmt_bytes(totals[0])} vs {fmt_bytes(totals[1])}: weights, gradients and optimizer "
            f"state follow the parameter count, the activations ({fmt_bytes(activations[0])} vs "
            f"{fmt_bytes(activations[1])}) follow the executed layers L×K and batch × sequence: "
            "sharing does not shrink them."
        )
    else:
        takeaway(f"{kind} memory {fmt_bytes(totals[0])}; activations grow with batch × sequence, "
                 "not with the parameter count.")
    if kind == "inference":
        st.caption("int8 weights are inference-only: no gradients or optimizer state.")

# ----------------------------------------------------------------------------- LoRA
lora_section(cfg, total)

# ----------------------------------------------------------------------------- sequence length and batch
st.subheader("Sequence length and batch")
seqs = fs.workload_values(wl.seq_len, min(64, cfg.max_position_embeddings), cfg.max_position_embeddings)
batches = fs.workload_values(wl.batch, 1, min(4096, max(64, 4 * wl.batch)))
by_seq = charts.by_workload(cfg, wl, "seq_len", seqs)
by_batch = charts.by_workload(cfg, wl, "batch", batches)
left, right = st.columns(2)
with left:
    chart(by_seq.flops, key="fig_flops_vs_seq", **STRETCH)
    span = by_seq.numbers
    takeaway(f"attention scores are {fmt_pct(span.attention_share_lo, 0)} of the forward FLOPs at S = "
             f"{span.seq_lo:,} and {fmt_pct(span.attention_share_hi, 0)} at S = {span.seq_hi:,}: "
             "the weight matmuls grow as S, the scores as S², whatever the sharing.")
with right:
    chart(by_seq.memory, key="fig_memory_vs_seq", **STRETCH)
    takeaway(f"from S = {span.seq_lo:,} to {span.seq_hi:,} the activations (an estimate) go from "
             f"{fmt_bytes(span.activations_lo)} to {fmt_bytes(span.activations_hi)}; weights, gradients and "
             "optimizer states do not depend on S.")
left, right = st.columns(2)
with left:
    chart(by_batch.memory, key="fig_memory_vs_batch", **STRETCH)
    one = by_batch.numbers
    takeaway(f"each sequence of {wl.seq_len} tokens adds about {fmt_bytes(one.activations)} of "
             f"activations; the {fmt_bytes(one.fixed)} of weights and states are paid once.")
with right:
    chart(by_batch.flops, key="fig_flops_vs_batch", **STRETCH)
    takeaway(f"training FLOPs grow linearly with B: {fmt_flops(one.training_flops)} per "
             f"{wl.seq_len}-token sequence" + (" (with the recomputed forward of gradient checkpointing)."
                                               if wl.checkpointing else "."))
