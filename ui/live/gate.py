"""When live work starts on the Live model page, and how a refusal is said: cheap work runs at once,
costlier work waits for the visitor's click (`clicked_or_fast`); a full server is a notice, anything else an
error (`busy_or_error`)."""

from __future__ import annotations

import streamlit as st

from albert_core.format import escape_markdown, fmt_duration, sentence_case
from albert_core.live.budget import BusyError, Cancelled

# Work a rerun may start without a click, in counted FLOPs (2 GFLOP: a few hundredths of a second on a CPU core,
# docs/benchmarks.md): more (the latency runs, the saved-activation pass of a bigger model) waits behind a button,
# so a text edit stays cheap for every visitor and nobody waits for work they did not ask for.
AUTO_WORK_FLOPS = 2e9


def clicked_or_fast(what: str, forward_s: float, runs: int, flops: int, key: str, done_key: tuple) -> bool:
    """Run ``what`` (``runs`` forward passes of ``flops`` each) at once when it counts at most
    AUTO_WORK_FLOPS; otherwise only after a click, remembered for this model, text and run count
    (``done_key``), so a visitor never waits for work they did not ask for and an edit never re-runs
    it silently."""
    done = st.session_state.setdefault("live_done", set())
    cost_s = forward_s * runs
    if runs * flops <= AUTO_WORK_FLOPS or done_key in done:
        return True
    slot = st.empty()
    with slot.container():
        st.info(f"One forward pass took {fmt_duration(forward_s, digits=2)} on this machine, so to {what} takes about "
                f"{fmt_duration(cost_s, digits=2)}: it waits for your click.")
        clicked = st.button(f"{sentence_case(what)} (about {fmt_duration(cost_s, digits=2)})", key=key)
    if clicked:
        done.add(done_key)
        slot.empty()  # the results replace the offer
    return clicked


def busy_or_error(what: str, exc: Exception) -> None:
    """A full server is a notice (try again), anything else an error; then this section stops."""
    if isinstance(exc, BusyError):
        st.warning(f"Cannot {what} right now: {escape_markdown(str(exc))}.")
    elif isinstance(exc, Cancelled):
        st.info(escape_markdown(str(exc)))
    else:
        st.error(f"Cannot {what}: {escape_markdown(str(exc))}")
