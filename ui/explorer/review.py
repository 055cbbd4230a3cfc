"""Design-review panels of the Explorer: the counter audit (`albert_core.review.audit`) and the config doctor
(`albert_core.review.doctor`). Tables are pure functions (tests call them); `render_*` draw them."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.format import escape_markdown, fmt_count, fmt_ratio
from albert_core.review.audit import AUDIT_LIMITS, Audit, audit
from albert_core.review.doctor import Diagnosis, diagnose
from ui.explorer import exports

SEVERITY_ICONS = {"error": "🛑", "warning": "⚠️", "info": "ℹ️"}


def audit_frame(result: Audit) -> pd.DataFrame:
    """One row per tool: its figure and unit, the exact figure, the ratio, what is left unexplained, where it ran."""
    return pd.DataFrame(
        [
            {
                "tool": r.tool.label,
                "status": r.status if r.version is None else f"{r.status} ({r.version})",
                "figure": "-" if r.figure is None else f"{fmt_count(r.figure)} {r.tool.unit}",
                "exact": f"{fmt_count(r.exact)} {'params' if r.tool.quantity == 'parameters' else 'FLOPs'}",
                "ratio": "-" if r.ratio is None else fmt_ratio(r.ratio),
                "unexplained": "-" if r.unexplained is None else fmt_count(r.unexplained),
                "run on": r.run_on,
            }
            for r in result.rows
        ]
    )


def causes_frame(result: Audit) -> pd.DataFrame:
    """One row per cause of every tool's difference (signed, in exact units)."""
    return pd.DataFrame(
        [
            {"tool": r.tool.label, "cause": c.what, "amount": f"{c.amount:+,}"}
            for r in result.rows
            for c in r.causes
        ],
        columns=["tool", "cause", "amount"],
    )


def components_frame(result: Audit) -> pd.DataFrame:
    """One row per component for every tool that reports per module: its figure under the component's
    module, the exact figure (parameters held, forward FLOPs run), what is left unexplained, the causes."""
    return pd.DataFrame(
        [
            {
                "tool": r.tool.label,
                "component": c.label,
                "module": c.module or "- (reported under the layer holding its module)",
                "figure": f"{fmt_count(c.figure)} {r.tool.unit}",
                "exact": fmt_count(c.exact),
                "ratio": "-" if c.ratio is None else fmt_ratio(c.ratio),
                "unexplained": fmt_count(c.unexplained),
                "causes": "; ".join(f"{x.what}: {x.amount:+,}" for x in c.causes),
            }
            for r in result.rows
            for c in r.components
        ],
        columns=["tool", "component", "module", "figure", "exact", "ratio", "unexplained", "causes"],
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _audit(cfg: ModelConfig, batch: int, seq_len: int) -> Audit:
    return audit(cfg, batch, seq_len)


def render_audit(cfg: ModelConfig, wl: Workload) -> None:
    """The 'What the usual counters say' section: run on request, cached per config and workload."""
    st.subheader("What the usual counters say")
    batch = min(wl.batch, AUDIT_LIMITS["batch"][1])
    st.caption(
        f"torchinfo, fvcore, thop, ptflops, calflops, torch's FlopCounterMode, parameter sums and the 6N rule on "
        f"transformers' model of this config (meta device, full size; ptflops, and every forward counter on "
        f"DeBERTa, on a small CPU twin; the row says where it ran), "
        f"batch {batch} × {wl.seq_len} tokens, beside the exact figures. Every difference is the sum of causes "
        f"computed from the config."
    )
    key = ("audit", cfg, batch, wl.seq_len)
    st.button(
        "Run the counters", key="audit_run", on_click=st.session_state.__setitem__, args=("_audit_key", key)
    )
    if st.session_state.get("_audit_key") != key:
        return
    with st.spinner("Running the counters…"):
        result = _audit(cfg, batch, wl.seq_len)
    with st.container(key="audit_table"):
        st.dataframe(audit_frame(result), hide_index=True, width="stretch")
    st.caption(
        f"Unexplained differences: **{result.unexplained}**; per component: **{result.unexplained_components}**."
    )
    with st.expander("Causes of every difference", expanded=True):
        st.dataframe(causes_frame(result), hide_index=True, width="stretch")
    with st.expander("Per component: embeddings, projection, each layer, heads"):
        st.caption(
            "Where a tool reports per module (FlopCounterMode, fvcore, thop, ptflops, calflops; torchinfo's "
            "per-layer parameters): each component's figure beside the exact one, parameters held (a shared block "
            "by the first layer that runs it) or forward FLOPs run."
        )
        with st.container(key="audit_components"):
            st.dataframe(components_frame(result), hide_index=True, width="stretch")
    st.download_button(
        "Audit JSON",
        partial(_audit_json, result),
        file_name=exports.file_name(cfg, "audit", "json"),
        mime="application/json",
        key="audit_json",
    )


def _audit_json(result: Audit) -> str:
    import json

    return json.dumps(result.to_dict(), indent=2) + "\n"


def doctor_frame(diagnosis: Diagnosis) -> pd.DataFrame:
    return pd.DataFrame([f.to_dict() for f in diagnosis.findings])


def render_doctor(name: str, diagnosis: Diagnosis, key: str = "doctor", heading: bool = True) -> None:
    """The config doctor's findings on a config.json (``key`` prefixes the elements' keys: the uploaded and
    the pasted config can both be on the page)."""
    if heading:
        st.subheader("Config doctor")
    st.caption(f"ALBERT's known traps in **{escape_markdown(name)}**, each with its numbers for this config.")
    if not diagnosis.findings:
        st.caption("No trap applies.")
    for f in diagnosis.findings:
        with st.container(key=f"{key}_{f.code}"):
            st.markdown(
                f"{SEVERITY_ICONS[f.severity]} **{f.severity}: {escape_markdown(f.code)}**: {escape_markdown(f.what)}"
            )
            st.caption(
                f"Changes {escape_markdown(f.changes)}: {escape_markdown(f.number)} · "
                f"Fix: {escape_markdown(f.fix)} · "
                f"Effect: {escape_markdown(f.effect)} · From: {escape_markdown(f.source)}"
            )


MAX_PASTE_CHARS = 20_000  # a transformers config.json is a few kB


def render_doctor_paste() -> None:
    """Paste a config.json and get the config doctor's findings (the text is read as JSON bytes only: never
    as a path, never evaluated)."""
    with st.expander("Config doctor: paste a transformers config.json", expanded=False):
        text = st.text_area(
            "config.json",
            key="doctor_paste",
            max_chars=MAX_PASTE_CHARS,
            height=160,
            placeholder='{"model_type": "albert", "hidden_size": 768, ...}',
            help="The traps of an ALBERT config (dropout, groups, E against H, vocabulary, ...), "
            "each with its numbers. Upload a file in the sidebar's 'Start from a config.json' to "
            "load it as the sidebar's model too.",
        )
        if not text.strip():
            return
        try:
            diagnosis = diagnose(text.encode("utf-8"))
        except ValueError as exc:
            st.error(f"Cannot read this config: {escape_markdown(str(exc))}")
            return
        render_doctor("the pasted config", diagnosis, key="doctor_pasted", heading=False)
