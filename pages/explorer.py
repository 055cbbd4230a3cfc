"""Explorer: headline numbers, the parameter breakdown, FLOPs by component, ALBERT vs its BERT twin, exports."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from albert_core import ModelConfig, Workload, count_params
from albert_core.format import fmt_bytes, fmt_flops, fmt_params, fmt_pct, fmt_ratio
from ui import exports, figures_explorer
from ui.sidebar import inert
from ui.state import cached_report, current


@st.cache_resource(max_entries=64, show_spinner=False)
def figures(cfg: ModelConfig, wl: Workload) -> tuple[go.Figure, go.Figure, go.Figure]:
    """The page's three figures, built once per config and workload (never mutated afterwards)."""
    rep = cached_report(cfg, wl)
    return (figures_explorer.breakdown_treemap(count_params(cfg)),
            figures_explorer.flops_bars(rep["flops"]["components_per_sequence"]),
            figures_explorer.twin_bars(rep))


cfg, wl = current()
rep = cached_report(cfg, wl)
fig_treemap, fig_flops, fig_twin = figures(cfg, wl)
twin = rep["bert_twin"]
params, flops, mem = rep["params"], rep["flops"], rep["memory"]
train_mem = mem["training"]

st.title("Explorer")
st.caption(
    f"**{cfg.label}** with the {cfg.head} head · workload: batch {wl.batch} × {wl.seq_len} tokens, "
    f"{wl.dtype}, optimizer {wl.optimizer}. BERT twin: {twin['config']['label']} (same V, H, L, I, "
    "no factorization, no sharing)."
)


def _delta(value: float, base: float) -> str | None:
    return None if value == base else f"{fmt_pct(value / base - 1, signed=True)} vs BERT twin"


def metric(key: str, label: str, value: str, *, delta: str | None = None, help: str, inverse: bool = True) -> None:
    with st.container(key=key):
        st.metric(label, value, delta=delta, delta_color="inverse" if inverse else "normal", help=help)


c = st.columns(4)
with c[0]:
    metric("metric_total_params", "Total parameters", fmt_params(params["total"]),
           delta=_delta(params["total"], twin["params"]),
           help=f"Exactly {params['total']:,} unique parameters (tied weights once), as "
           "sum(p.numel() for p in model.parameters()) of the transformers model.")
with c[1]:
    metric("metric_embedding_params", "Embedding parameters", fmt_params(params["groups"]["embeddings"]),
           delta=_delta(params["groups"]["embeddings"], twin["groups"]["embeddings"]),
           help="Word, position and token-type tables, their LayerNorm and (ALBERT) the E→H projection.")
with c[2]:
    metric("metric_encoder_params", "Encoder parameters", fmt_params(params["groups"]["encoder"]),
           delta=_delta(params["groups"]["encoder"], twin["groups"]["encoder"]),
           help="Attention and feed-forward blocks with their LayerNorms: the copies held, not the layers run.")
with c[3]:
    metric("metric_forward_flops", "Forward FLOPs / sequence", fmt_flops(flops["forward_per_sequence"]),
           delta=_delta(flops["forward_per_sequence"], twin["flops"]["forward_per_sequence"]),
           help=f"Matmul FLOPs (2 per multiply-add) for one sequence of {wl.seq_len} tokens, attention "
           f"scores included. MACs are half: {flops['forward_per_sequence'] // 2:,}.")
c = st.columns(4)
with c[0]:
    metric("metric_training_flops_token", "Training FLOPs / token", fmt_flops(flops["training_per_token"]),
           help="Forward + backward (backward = 2 × forward) per token at this batch and sequence length.")
with c[1]:
    metric("metric_weights_memory", "Weights memory", fmt_bytes(mem["inference"]["weights"]),
           delta=_delta(mem["inference"]["weights"], twin["memory"]["inference"]["weights"]),
           help=f"Parameters × {wl.dtype} bytes (exact; MB = 10^6 bytes).")
with c[2]:
    if train_mem is None:
        metric("metric_training_memory", "Training memory", "n/a",
               help="int8 weights are inference-only: pick fp32, fp16 or bf16 to train.")
    else:
        metric("metric_training_memory", "Training memory", fmt_bytes(train_mem["total"]),
               delta=_delta(train_mem["total"], twin["memory"]["training"]["total"]),
               help=f"Weights + gradients + {wl.optimizer} states (exact) + saved activations (estimate) "
               f"for batch {wl.batch} × {wl.seq_len}.")
with c[3]:
    metric("metric_saved_by_sharing", "Saved by sharing", fmt_params(params["saved_by_sharing"]),
           help="Parameters an unshared model of the same executed depth (L×K) would add.")

# ----------------------------------------------------------------------------- breakdown
st.subheader("Parameter breakdown")
bd = count_params(cfg)
left, right = st.columns([5, 6])
with left, st.container(key="breakdown_table"):
    st.dataframe(
        exports.breakdown_frame(bd)[["label", "group", "params", "unshared", "share"]],
        hide_index=True, width="stretch",
        column_config={
            "label": st.column_config.TextColumn("Component"),
            "group": st.column_config.TextColumn("Group"),
            "params": st.column_config.NumberColumn("Unique params", format="localized"),
            "unshared": st.column_config.NumberColumn(
                "Without sharing", format="localized", help="One copy per executed layer (L×K)."),
            "share": st.column_config.ProgressColumn("Share of total", format="percent", min_value=0,
                                                     max_value=1),
        },
    )
with right:
    st.plotly_chart(fig_treemap, key="breakdown_treemap", width="stretch")
groups = params["groups"]
biggest = max(bd.components, key=lambda comp: comp.params)
st.caption(
    f"Takeaway: embeddings hold {fmt_pct(groups['embeddings'] / params['total'])} of the parameters and the "
    f"encoder {fmt_pct(groups['encoder'] / params['total'])}; the largest single component is "
    f"{biggest.label} ({fmt_params(biggest.params)})."
)

# ----------------------------------------------------------------------------- FLOPs
st.subheader("Where the compute goes")
comp_flops = flops["components_per_sequence"]
scores = comp_flops.get("encoder.attention.scores", 0)
st.plotly_chart(fig_flops, key="flops_bars", width="stretch")
st.caption(
    f"Takeaway: at S = {wl.seq_len}, the attention scores (QKᵀ and the weighted values, 4·S²·H per "
    f"executed layer) are {fmt_pct(scores / flops['forward_per_sequence'])} of the forward FLOPs; they "
    "grow with S², the rest with S."
)

# ----------------------------------------------------------------------------- vs BERT
with st.container(border=True, key="panel_vs_bert"):
    st.subheader("Does ALBERT run faster or use less memory than BERT?")
    rows = figures_explorer.twin_metrics(rep)
    st.plotly_chart(fig_twin, key="twin_bars", width="stretch")
    p_cfg, p_twin = rows[0][1], rows[0][2]
    f_cfg, f_twin = rows[1][1], rows[1][2]
    a_cfg, a_twin = rows[2][1], rows[2][2]
    w_cfg, w_twin = rows[3][1], rows[3][2]
    if cfg.family == "bert":
        st.markdown("This config **is** a BERT: its twin is itself. Pick an ALBERT preset to compare.")
    else:
        st.markdown(
            f"""
- **Parameters: down {fmt_ratio(p_twin / p_cfg)}** ({fmt_params(p_cfg)} vs {fmt_params(p_twin)}), from
  factorized embeddings (V·E + E·H instead of V·H) and cross-layer sharing.
- **Forward FLOPs: {fmt_ratio(f_cfg / f_twin)} of BERT's** ({fmt_flops(f_cfg)} vs {fmt_flops(f_twin)}).
  Sharing saves no compute: the shared layer still runs L×K = {cfg.executed_layers} times. Only the
  embedding projection and MLM head change a little.
- **Activations: {fmt_ratio(a_cfg / a_twin)} of BERT's** ({fmt_bytes(a_cfg)} vs {fmt_bytes(a_twin)}), since
  every executed layer keeps its own activations for backward, shared weights or not.
- **Weights memory: down {fmt_ratio(w_twin / w_cfg)}** ({fmt_bytes(w_cfg)} vs {fmt_bytes(w_twin)}), and
  gradients and optimizer states shrink with it.

So ALBERT is a *smaller* model, not a *faster* one: at the same H and L it takes about as long and
about as much activation memory as BERT (the paper's Table 2 speedups compare models of different H).
"""
        )
    with st.expander("Recurring confusions", expanded=False):
        st.markdown(
            f"""
- **FLOPs or MACs?** One multiply-add is one MAC and two FLOPs. This app counts FLOPs
  ({fmt_flops(flops['forward_per_sequence'])} per sequence = {fmt_flops(flops['forward_per_sequence'] / 2)}
  MACs); tools such as thop or ptflops report MACs, hence the factor of 2.
- **Where are the attention FLOPs?** QKᵀ and the attention-weighted values are matmuls without weights
  (4·S²·H per layer: {fmt_flops(scores)} here). Counters that only hook `nn.Linear` miss them, and
  torch's FlopCounterMode counts CPU `scaled_dot_product_attention` as 0 (use `attn_implementation="eager"`).
- **What does `num_hidden_groups` do?** It is G, the number of distinct layer copies: layer i uses group
  int(i / (L / G)). G = 1 shares one layer across all {cfg.num_layers}; G = L shares nothing. It changes
  parameters, never FLOPs or activations. `inner_group_num` (K) repeats layers inside each group and *does*
  add compute.
- **Why is my ALBERT as slow as BERT?** See above: same executed depth and width, same FLOPs.
"""
        )

# ----------------------------------------------------------------------------- exports
st.subheader("Exports")
c = st.columns(3)
with c[0]:
    try:
        hf = exports.hf_config_json(cfg)
        st.download_button("transformers config.json", hf, file_name="config.json", mime="application/json",
                           key="dl_hf_config", on_click="ignore", icon=":material/download:")
    except ValueError as exc:
        st.download_button("transformers config.json", "", disabled=True, key="dl_hf_config")
        st.caption(inert(f"Not available: {exc}.") + " The paper's shared-attention and shared-FFN modes are not "
                   "transformers architectures.")
with c[1]:
    st.download_button("Breakdown CSV", exports.breakdown_csv(bd), file_name="albert_breakdown.csv",
                       mime="text/csv", key="dl_breakdown_csv", on_click="ignore", icon=":material/download:")
with c[2]:
    st.download_button("JSON report", exports.dumps(rep), file_name="albert_report.json",
                       mime="application/json", key="dl_report_json", on_click="ignore",
                       icon=":material/download:")
st.caption("Charts: use the camera icon in each chart's toolbar to save a PNG.")
