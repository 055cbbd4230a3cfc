"""The Live model page's build and count proof: the chosen model against this server's memory budget and
compute cap, built on the CPU (or, when it does not fit, on the meta device: shapes only, no memory), and its
parameters counted per component beside `count_params` (`albert_core.live.count_proof`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from albert_core import settings
from albert_core.configuration.config import ModelConfig
from albert_core.counting.flops import count_flops
from albert_core.counting.params import count_params
from albert_core.format import escape_markdown, fmt_bytes, fmt_count, fmt_flops, fmt_params, fmt_share
from albert_core.live import budget
from albert_core.live.count_proof import MATCH, live_counts, match_table
from ui.live.models import MAX_TOKENS, ModelRef, built_model, meta_model, model_of, too_many_blocks

SIDEBAR_FIELDS = ("every model field (preset, family, V, E, H, L, heads, I, P, T, activation, sharing, G, K, "
                  "head, tying) and the dtype")


def used_fields_note(seq_cap: int) -> str:
    """Which sidebar fields this page uses, and which it does not."""
    return (f"This page uses the sidebar's {SIDEBAR_FIELDS}. The sidebar's batch, sequence length and optimizer "
            f"do not apply: it runs one sequence of up to {seq_cap} tokens (at most {MAX_TOKENS}, and at most P).")


def refusal(cfg: ModelConfig, seq_cap: int, dtype: str, check: budget.BudgetCheck) -> tuple[str, list[str]]:
    """The message for a config too big for this server's budget, and what would fit instead, as
    changes a visitor can make in the sidebar (`albert_core.live.budget.alternatives`)."""
    text = (f"Too big to build here: {cfg.label} in {dtype} needs about {fmt_bytes(check.estimate)} (weights + "
            f"one forward pass of {seq_cap} tokens), over the memory budget of {fmt_bytes(check.budget)} that this "
            "server shares among its visitors.")
    offers = []
    for alt in budget.alternatives(cfg, seq_cap, dtype, budget_bytes=check.budget):
        size = fmt_bytes(alt.estimate)
        if alt.field == "dtype":
            offers.append(f"dtype bf16 or fp16 in the sidebar: about {size}")
        elif alt.field == "seq_len":
            runs = f"P - {cfg.position_offset}" if cfg.position_offset else "P"  # the table's rows after its offset
            offers.append(f"a shorter sequence: max positions P = {alt.value + cfg.position_offset} or less in the "
                          f"sidebar (the page runs up to {runs} tokens): about {size}")
        else:
            offers.append(f"fewer layers: L = {alt.value} or less in the sidebar: about {size}")
    return text, offers


def forward_cap_problem(cfg: ModelConfig, seq_len: int) -> str | None:
    """Why one forward pass over ``seq_len`` tokens is over the per-request compute cap, or None."""
    try:
        budget.check_flops(count_flops(cfg, 1, seq_len).forward, f"one forward pass over {seq_len} tokens")
    except budget.ComputeBudgetError as exc:
        return str(exc)
    return None


def show_budget(cfg: ModelConfig, seq_cap: int, dtype: str) -> budget.BudgetCheck:
    """The estimated memory beside the server's budget, and the compute cap; returns the budget check."""
    check = budget.check_budget(cfg, 1, seq_cap, dtype)
    c = st.columns(3)
    c[0].metric("Estimated memory", fmt_bytes(check.estimate),
                help="Weights plus one forward pass of one sequence of up to "
                f"{seq_cap} tokens, from estimate_memory.")
    c[1].metric("Memory budget", fmt_bytes(check.budget),
                help="Set by whoever runs this server, for the whole server: every visitor's models and runs "
                "share it, and nothing beyond it is allocated.")
    c[2].metric("Share of the budget", fmt_share(check.estimate / check.budget),
                help="Estimated memory / memory budget; above 100% as a multiple of the budget.")
    st.progress(min(1.0, check.estimate / check.budget))
    cap = settings.max_gflop()
    forward_flops = count_flops(cfg, 1, seq_cap).forward
    st.caption(f"Compute is capped too: each request may run at most {cap:,g} GFLOP of live work on this server; "
               f"one forward pass of this model over {seq_cap} tokens counts "
               f"{fmt_flops(forward_flops)}. Live work runs one visitor at a time.")
    return check


@dataclass(frozen=True)
class Proof:
    """What the build left: the model to run on text (None: nothing was built), the count table, the device
    it was counted on, and why no real model was built (with what would fit instead)."""

    ref: ModelRef | None
    table: pd.DataFrame
    device: str
    build_error: str | None = None
    fits_instead: tuple[str, ...] = ()

    @property
    def runnable(self) -> bool:
        return self.ref is not None and not self.build_error


def build_and_count(cfg: ModelConfig, dtype: str, seq_cap: int, ref: ModelRef | None,
                    check: budget.BudgetCheck) -> Proof:
    """Build the sidebar's config (``ref`` None) when it fits the budget and the compute cap, else on the meta
    device, or take the loaded model of ``ref``; count it per component. Stops the page (with a warning) for a
    config of more blocks than the server builds even as shapes. Keeps no model: the caches own them."""
    if ref is None and (problem := too_many_blocks(cfg)):
        st.warning(f"No live model for {escape_markdown(cfg.label)}: {escape_markdown(problem)}. "
                   "Its exact analytic count is on the Explorer page.")
        st.stop()
    build_error, fits_instead = None, []
    over_cap = forward_cap_problem(cfg, seq_cap)
    analytic = count_params(cfg)
    model = None
    with st.status(f"Preparing {cfg.label}…", expanded=False) as status:
        if ref is not None:  # a loaded model: in its cache, unless the cache freed it since
            try:
                model = model_of(ref)
            except budget.MemoryBudgetError as exc:  # BusyError included: reloading it does not fit now
                build_error = str(exc)
        elif check.ok and not over_cap:
            status.update(
                label=f"Building {cfg.label} ({fmt_params(analytic.total)} parameters, {dtype}) on the CPU…")
            try:
                model = built_model(cfg, dtype, seq_cap)
                ref = ModelRef(cfg, dtype, seq_cap)
            except budget.MemoryBudgetError as exc:  # BusyError included
                build_error = str(exc)
        elif not check.ok:
            build_error, fits_instead = refusal(cfg, seq_cap, dtype, check)
        else:
            build_error = f"Too costly to run here: {over_cap}."
        proof_model = model
        if model is None:
            status.update(label="Building on the meta device (shapes only)…")
            proof_model = meta_model(cfg, dtype)
        status.update(label="Counting the live model's parameters per component…")
        table = match_table(analytic, live_counts(proof_model))
        device = "meta" if model is None else "cpu"
        status.update(label=f"Built and counted on {device}", state="complete")
    return Proof(ref, table, device, build_error, tuple(fits_instead))


def show_proof(proof: Proof) -> None:
    """Why no real model was built (if so), then the analytic-vs-live count, component by component."""
    if proof.build_error:
        (st.warning if "busy" in proof.build_error else st.error)(escape_markdown(proof.build_error))
        if proof.fits_instead:
            st.info("What fits on this server:\n" + "".join(f"\n- {escape_markdown(o)}" for o in proof.fits_instead))
        st.info("Built on the **meta device** instead (shapes only, no memory): the parameter count below is "
                "still the real model's, so the proof holds for any size.")

    st.subheader("Analytic vs live parameter count")
    table, device = proof.table, proof.device
    total_row = table.iloc[-1]
    if (table["match"] == MATCH).all():
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
