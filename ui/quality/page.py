"""Quality vs cost: published scores (with their provenance) against this project's exact costs, one protocol per
chart unless the visitor mixes them; the paper's Table 2 trade-off complete. The metric, the protocol and the
mixing travel in the URL."""

from __future__ import annotations

import streamlit as st

from albert_core.configuration.presets import config_name
from albert_core.format import escape_markdown
from albert_core.quality import (
    COMPUTE,
    METRICS,
    PROTOCOLS,
    default_protocol,
    figures,
    fmt_value,
    protocols_of,
)
from albert_core.quality_cost import cost_of, points, table2_tradeoff, twins
from ui.quality import figures as fq
from ui.render import chart
from ui.state import current
from ui.url_state import seed_widget, sync_widget

METRIC_PARAM, PROTOCOL_PARAM, MIX_PARAM = "qm", "qp", "qmix"
METRIC_KEY, PROTOCOL_KEY, MIX_KEY = "quality_metric", "quality_protocol", "quality_mix"
DEFAULT_METRIC = "albert-avg"  # the paper's own table: ALBERT and BERT under one setup
CHARTED_METRICS = tuple(m for m in METRICS if figures(m))

cfg, wl = current()
ss = st.session_state

st.title("Quality vs cost")
st.caption("What a design is worth, as **published**: every score below is printed elsewhere and shown as printed, "
           "with its split, who fine-tuned and its source (in each point's hover); every cost is this project's "
           "exact count. A configuration nobody trained and evaluated has no score here, and none is estimated.")

seed_widget(METRIC_PARAM, METRIC_KEY, DEFAULT_METRIC, valid=CHARTED_METRICS.__contains__)
if MIX_KEY not in ss:
    ss[MIX_KEY] = st.query_params.get(MIX_PARAM) == "1"
c1, c2, c3 = st.columns([2, 3, 2], vertical_alignment="bottom")
with c1:
    # every widget drawn with its session value as its index (never a widget default), as the sidebar's: a browser's
    # first-paint follow-up run otherwise showed the first option now and then while the page used the session's
    metric = st.selectbox("Metric", CHARTED_METRICS, index=CHARTED_METRICS.index(ss[METRIC_KEY]), key=METRIC_KEY,
                          format_func=lambda m: METRICS[m].label,
                          help="One metric per chart: ALBERT's five-task average is not GLUE.")
choices = protocols_of(metric)
counts = {p: len(figures(metric, p)) for p in choices}
seed_widget(PROTOCOL_PARAM, PROTOCOL_KEY, default_protocol(metric), valid=choices.__contains__)
if ss[PROTOCOL_KEY] not in choices:  # the metric changed: its own default
    ss[PROTOCOL_KEY] = default_protocol(metric)
with c3:
    mix = st.toggle("Mix protocols", value=ss[MIX_KEY], key=MIX_KEY,
                    help="Off: one protocol (one table, one split, one setup). On: every protocol of the metric on "
                         "one chart; their numbers are not comparable without reading each point's hover.")
with c2:
    protocol = st.selectbox("Protocol (source table)", choices, index=choices.index(ss[PROTOCOL_KEY]), key=PROTOCOL_KEY,
                            disabled=mix,
                            format_func=lambda p: f"{PROTOCOLS[p].label} ({counts[p]} figures)",
                            help="Where the figures come from and how they were made; only one protocol's "
                                 "figures share an axis by default.")
sync_widget(METRIC_PARAM, metric, DEFAULT_METRIC)
sync_widget(PROTOCOL_PARAM, protocol, default_protocol(metric))
sync_widget(MIX_PARAM, "1" if mix else "0", "0")

rows = points(metric, protocol, mix=mix)
if mix:
    splits = sorted({r["split"] for r in rows})
    st.warning(f"Protocols mixed: {len({r['protocol'] for r in rows})} source tables, split "
               f"{' and '.join(splits)}. Points of different protocols are not comparable as they stand; "
               "open markers are test-set figures.", icon="⚠️")
else:
    st.caption(f"**{escape_markdown(PROTOCOLS[protocol].label)}** ({PROTOCOLS[protocol].split}, fine-tuned by "
               f"{escape_markdown(PROTOCOLS[protocol].fine_tuned_by)}): {escape_markdown(PROTOCOLS[protocol].about)} "
               f"Source: {escape_markdown(PROTOCOLS[protocol].source)}.")

name = config_name(cfg)
cost = cost_of(cfg)
family_twins = twins(rows)
for axis in ("params", "flops"):
    x = cost.params if axis == "params" else cost.flops_per_token
    chart(fq.quality_chart(rows, axis, metric, family_twins, None if x is None else (name, x)),
          key=f"quality_{axis}", width="stretch")
    st.caption(escape_markdown(fq.chart_sentence(rows, axis, family_twins, (name, cost), mixed=mix)))
if any(r["compute"] for r in rows):
    chart(fq.quality_chart(rows, "compute", metric), key="quality_compute", width="stretch")
st.caption(escape_markdown(fq.chart_sentence(rows, "compute", mixed=mix) + fq.compute_hint(rows, metric))
           + " Your config has no published training compute; the Hardware page estimates the time to train it.")

# ----------------------------------------------------------------------------- Table 2
st.subheader("The paper's Table 2 trade-off, complete")
t2 = table2_tradeoff()
frame, formats = fq.table2_frame(t2)
number = st.column_config.NumberColumn
st.dataframe(frame, hide_index=True, width="stretch", key="quality_table2", column_config={
    "model": st.column_config.TextColumn("Model", pinned=True),
    "table": st.column_config.TextColumn("Table", width="small"),
    "steps": number("Steps", format="localized"),
    **{label: number(label, format="%.1f", help="Published (dev), as printed") for label in fq.TABLE2_LABELS.values()},
    "speedup": st.column_config.TextColumn("Speedup", help="Training speed relative to BERT-large, as printed "
                                           "(Table 2)"),
    "hours": st.column_config.TextColumn("Hours", help="Training time on the same TPUs, as printed (Table 6)"),
    "params": number("Params (exact)", format=formats["params"], help="This project's count of the preset"),
    "training FLOPs / step": number("Training FLOPs / step (exact)", format=formats["training FLOPs / step"],
                                    help="Batch 4,096 x 512 tokens, pretraining heads, MLM on 15 % (this project's "
                                         "count)"),
    "training FLOPs": number("Training FLOPs (exact)", format=formats["training FLOPs"],
                             help="Per step x the row's steps"),
})
st.caption(escape_markdown(fq.table2_sentence(t2)) + " Accuracies, speedups and hours: the paper's (Tables 2 and 6, "
           "dev); parameters and FLOPs: this project's exact counts.")

# ----------------------------------------------------------------------------- the record
with st.expander(f"Every published {METRICS[metric].label} figure, with its provenance"):
    st.dataframe([{
        "model": f.model, "value": fmt_value(f.value) + (" (computed)" if f.computed else ""), "split": f.split,
        "protocol": PROTOCOLS[f.protocol].label, "fine-tuned by": f.fine_tuned_by, "training": f.training,
        "aggregation": f.aggregation, "source": f.source, "note": f.note,
    } for f in figures(metric)], hide_index=True, width="stretch", key="quality_record")
    st.caption("'Computed': our arithmetic on the source's own per-task numbers. The same record: "
               "`python -m albert_core quality --json`.")
with st.expander("Published training compute"):
    st.dataframe([{
        "model": c.model, "hours": ("~" if c.approximate else "") + f"{c.wall_hours:g}",
        "devices": str(c.devices or "not printed"), "device": c.device,
        "device-hours": "" if c.device_hours is None else f"{c.device_hours:,.0f}", "as printed": c.how,
        "source": c.source,
    } for c in COMPUTE], hide_index=True, width="stretch", key="quality_compute_table")
with st.expander("Which figures may share an axis"):
    st.markdown(
        "- **One protocol at a time.** A protocol is one source table: one split, one aggregation, one setup. "
        "BERT-base's GLUE is 79.6 on the test server and 84.7 in a dev re-run; ModernBERT-base is 88.4 in its paper "
        "and 87.4 in mmBERT's re-run.\n"
        "- **ALBERT's 'Avg' is not GLUE**: it averages SQuAD1.1, SQuAD2.0, MNLI, SST-2 and RACE.\n"
        "- **Training length**: ALBERT's Table 2 models trained 125k steps; the README's V1 xxlarge (91.0) 1.5M "
        "steps, the V2 models 3M (base 10M).\n"
        "- **MTEB depends on the fine-tuning recipe** (ModernBERT-base: 45.0, 53.8 or 54.0), and v1 and v2 are "
        "different suites.\n"
        "- **No interpolated score**: a score is a measurement of trained weights under a protocol. Between two "
        "published models the curve follows no one cost (in Table 2, ALBERT-base is 2.2 points below BERT-base at "
        "the same FLOPs, ALBERT-large 0.1 above it with a sixth of its parameters), so an unpublished "
        "configuration, your config or an ALBERTized twin, is placed on the cost axis only.")
