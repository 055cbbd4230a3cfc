"""The live model on the visitor's text: one cached forward pass (`run_text`, hidden states and attention
maps kept), the timing runs (`timing`) and the saved-activation pass (`saved_bytes`), with torch's thread
count and the check that the visitor is still there.

At most four runs are cached (process-wide), each freed after `live_models.MODEL_TTL_S` unused; a run's
kept outputs stay reserved in the process budget while it is cached or shown, and every pass goes through
the one live-work gate (`budget.LIVE_WORK`), waiting at most `live_models.WAIT_S`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from albert_core import settings
from albert_core.live import budget
from ui.live import models as live_models
from ui.live.models import MAX_TOKENS, ModelRef, model_of

_RUNS = budget.ExpiringCache(max_entries=4, ttl_s=live_models.MODEL_TTL_S)
_THREADS_LOCK = threading.Lock()


def set_torch_threads() -> int:
    """Intra-op threads for live work, chosen once per process ($ALBERT_EXPLORER_TORCH_THREADS, default
    1: on a shared 2-core host a second thread mostly waits for a core, see docs/benchmarks.md). Set
    here, not per request, because torch's pool is process-wide."""
    import torch

    with _THREADS_LOCK:
        wanted = settings.torch_threads()
        if torch.get_num_threads() != wanted:
            torch.set_num_threads(wanted)
        return torch.get_num_threads()


def session_alive() -> Callable[[], bool]:
    """A check that the visitor who started the current run is still connected (always True outside a
    server, e.g. under AppTest): repeated work stops between runs when the tab has closed."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not st.runtime.exists():
        return lambda: True
    runtime, session_id = st.runtime.get_instance(), ctx.session_id
    return lambda: runtime.is_active_session(session_id)


@dataclass(frozen=True)
class Run:
    """One forward pass on the user's text, with hidden states and attention maps kept."""

    encoded: Any  # albert_core.text.encoding.Encoded
    output: Any  # albert_core.live.model.EncoderOutput
    seconds: float  # wall time of that forward pass: decides whether more runs wait for a click


def _encode(model: Any, text: str, pair: str | None, checkpoint: str | None):
    from albert_core.text.encoding import encode

    cfg = model.config
    return encode(text, cfg, min(MAX_TOKENS, cfg.max_seq_len), pair, checkpoint)  # the rows after the offset


def run_text(ref: ModelRef, text: str, pair: str | None) -> Run:
    """Tokenize and run once (hidden states and attentions kept), once per model and text; the kept
    outputs stay reserved in the memory budget while the run is cached or shown."""
    import torch

    def run() -> Run:
        wait_s = live_models.WAIT_S
        model = model_of(ref)
        enc = _encode(model, text, pair, ref.folder)
        set_torch_threads()
        with budget.LIVE_WORK.enter("forward pass", wait_s=wait_s), torch.inference_mode():
            t0 = time.perf_counter()
            out = model(**enc.tensors(model.config.type_vocab_size), output_hidden_states=True, output_attentions=True)
            seconds = time.perf_counter() - t0
        kept = sum(t.numel() * t.element_size() for t in (*out.hidden_states, *out.attentions))
        result = Run(enc, out, seconds)
        return budget.reserve(kept, "kept hidden states and attention maps", wait_s=wait_s).hold_until_freed(result)

    return _RUNS.get((ref, text, pair), run)


@st.cache_data(max_entries=16, show_spinner=False)
def timing(ref: ModelRef, text: str, pair: str | None, n: int, _alive: Callable[[], bool] = lambda: True) -> dict:
    """Median latency of n forward passes, achieved GFLOP/s and the share of the matmul probe. Stops
    (Cancelled, nothing cached) when ``_alive()`` turns False between runs."""
    from albert_core.live.analysis import achieved_gflops, matmul_peak_gflops, measure_latency

    threads = set_torch_threads()
    model = model_of(ref)
    enc = run_text(ref, text, pair).encoded
    with budget.LIVE_WORK.enter("timing runs", wait_s=live_models.WAIT_S):
        lat = measure_latency(model, enc, n=n, warmup=1, should_stop=lambda: not _alive())
        peak = matmul_peak_gflops()  # measured once per process and thread count (about half a second)
    gflops = achieved_gflops(model.config, 1, len(enc), lat.median_s)
    return {"median_s": lat.median_s, "p10": lat.p10, "p90": lat.p90, "gflops": gflops, "peak": peak,
            "threads": threads}


@st.cache_data(max_entries=16, show_spinner=False)
def saved_bytes(ref: ModelRef, text: str, pair: str | None) -> int:
    """Bytes autograd really saves for backward on the user's text (training-mode forward)."""
    from albert_core.live.analysis import saved_activation_bytes

    model = model_of(ref)
    enc = run_text(ref, text, pair).encoded
    with budget.LIVE_WORK.enter("saved-activation pass", wait_s=live_models.WAIT_S):
        return saved_activation_bytes(model, enc)
