"""The Live model page's "measure a variant of your own": a visitor's choice of E, sharing and LoRA rank for the
trained MiniLM, planned before any work (`albert_core.lab.posthoc_jobs.plan`: exact counts, memory against the
budget, CPU time from the shipped grid's pace), queued as the visitor's own job (cancel; others who ask for the same
variant see it read-only), and shown when done as the shipped grid's variants are: beside the original and the
baselines, with the same rule's verdict."""

from __future__ import annotations

import streamlit as st

from albert_core.counting.posthoc import Variant
from albert_core.format import escape_markdown, fmt_bytes, fmt_count, fmt_flops
from albert_core.lab.posthoc_jobs import JobRefused, JobStatus, get_jobs, plan
from albert_core.lab.posthoc_reference import verdict_phrase
from albert_core.live.minilm import PARAMETERS
from ui.live import posthoc_figures as fp
from ui.owner import keep, owner

E_CHOICES = (None, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 320)
RANK_CHOICES = (0, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128)
JOB_KEY = "_posthoc_job"  # session state: the key of the visitor's last job
POLL_S = 2.0


def own_variant_section(doc: dict | None) -> None:
    """The visitor's choice, its plan, the button, and the job's status or result."""
    st.markdown("**Measure a variant of your own**")
    c = st.columns(3)
    e = c[0].selectbox("Word table E", E_CHOICES, key="posthoc_own_e",
                       format_func=lambda x: "trained (V x H)" if x is None else f"E = {x} (SVD)")
    shared = c[1].checkbox("Share the six layers (their mean)", key="posthoc_own_shared")
    rank = c[2].selectbox("LoRA rank per layer", RANK_CHOICES, key="posthoc_own_rank", disabled=not shared,
                          format_func=lambda r: "none" if r == 0 else f"r = {r}")
    variant = Variant(e, shared, rank if shared else 0)
    try:
        p = plan(variant, doc)
    except JobRefused as exc:
        st.warning(escape_markdown(str(exc)))
        return
    if p.shipped:
        st.caption(escape_markdown(f"{variant.label}: already measured in the shipped grid above (row "
                                   f"'{variant.label}')."))
    else:
        n_dev = doc["data"]["dev_scored"] if doc else 1694
        st.caption(escape_markdown(
            f"{variant.label}: {fmt_count(p.parameters)} parameters ({p.parameters / PARAMETERS:.0%} of MiniLM), "
            f"{fmt_flops(p.flops_per_sequence)} per 128-token sentence (exact). The job measures it and the original "
            f"on the same {n_dev:,} dev sentences, as the grid above was measured: about {p.cpu_seconds:.0f} "
            f"CPU-seconds (the shipped grid's measured pace, twice), about {fmt_bytes(p.memory_bytes)} of memory "
            "(planned, held in the server's budget while it runs). One job runs at a time, one per visitor."))
        st.button("Measure it here", key="posthoc_own_submit", on_click=_submit, args=(variant, doc))
    key = st.session_state.get(JOB_KEY)
    if key:
        _job_panel(key, doc)


def _submit(variant: Variant, doc: dict | None) -> None:
    try:
        st.session_state[JOB_KEY] = get_jobs().submit(variant, owner(), doc)
        st.session_state.pop("_posthoc_error", None)
    except JobRefused as exc:
        st.session_state["_posthoc_error"] = str(exc)


def _cancel(key: str) -> None:
    get_jobs().cancel(key, owner())


def _job_panel(key: str, doc: dict | None) -> None:
    keep()
    if err := st.session_state.get("_posthoc_error"):
        st.warning(escape_markdown(err))
    status = get_jobs().status(key)
    if status is None:
        st.info("Your post-hoc job is not on this server any more (the server restarted): measure it again.")
        return
    active = not status.finished

    @st.fragment(run_every=POLL_S if active else None)
    def panel() -> None:
        now = get_jobs().status(key) or status
        show_status(now, get_jobs().owns(key, owner()))
        if active and now.finished:
            st.rerun()

    panel()


def show_status(s: JobStatus, mine: bool) -> None:
    """Progress and Cancel (the owner's) while it runs; the result beside its baselines when done."""
    if s.state == "queued":
        st.info(escape_markdown(f"{s.label}: queued, {s.position} job(s) ahead."))
    elif s.state == "running":
        st.progress(s.done / max(1, s.total), text=escape_markdown(
            f"{s.label}: " + (s.message if s.message else
                              f"measuring ({s.done} of {s.total} passes over the sentences, {s.seconds:.0f} s)")))
    elif s.state in ("cancelled", "failed"):
        st.warning(escape_markdown(f"{s.label}: {s.state}: {s.message}"))
    if not s.finished:
        if mine:
            st.button("Cancel", key="posthoc_own_cancel", on_click=_cancel, args=(s.key,))
        else:
            st.caption("Another visitor's job (read-only): measure it yourself to own it.")
        return
    if s.state == "done" and s.doc is not None:
        show_result(s.doc, s.key)


def show_result(doc: dict, key: str) -> None:
    """The variant's figures beside the original and the baselines (the shipped grid's table), and its verdict."""
    rows = {r["key"]: r for r in doc["variants"]}
    row, orig = rows[key], rows["original"]
    b = doc["baselines"]
    vs = row["vs_original"]
    phrase = verdict_phrase(vs, doc["settings"]["bootstrap"])
    st.markdown(escape_markdown(
        f"{row['label']}: accuracy {row['accuracy']['mean']:.1%} against the original's {orig['accuracy']['mean']:.1%} "
        f"on the same sentences ({phrase}): {vs['verdict']}; fidelity {row['fidelity']['mean']:.3f} (unrelated "
        f"sentences: {b['unrelated_cosine']['mean']:.3f}); bag-of-words {b['bag_of_words']['mean']:.1%}, majority "
        f"class {b['majority']['mean']:.1%}. Measured now on this server, {doc['environment']['cpu']}, "
        f"{doc['seconds']['cpu']:.0f} CPU-seconds."))
    st.dataframe(fp.grid_frame(doc), hide_index=True, key="posthoc_own_table")
