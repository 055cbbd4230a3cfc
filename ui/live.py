"""Streamlit-side helpers of the Live model page: bounded caches of live models and their runs,
the analytic-vs-live count table, and the checkpoint / hub switches read from the environment.

Memory stays bounded for a hosted demo: at most two built models, one loaded checkpoint and four
runs are cached (process-wide), each freed after MODEL_TTL_S unused; every real build, forward pass
and kept output reserves its bytes from the process budget (`albert_core.live.budget`), and live work runs
one piece at a time (`budget.LIVE_WORK`), so a crowd meets "the server is busy", not an out-of-memory kill.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from albert_core import ModelConfig, settings
from albert_core.configuration.hf_config import config_from_hf
from albert_core.counting.params import COMPONENT_INFO, ParamBreakdown, component_of
from albert_core.live import budget

MAX_TOKENS = 128  # the live run's longest input; the budget check covers batch 1 x this
# Even on the meta device every attention / FFN block is a Python module (~25 kB, ~1 ms to build):
# above this many blocks the proof build itself would cost a hosted demo too much memory and time.
MAX_META_BLOCKS = 1024
# Plain words, not emoji: a browser without an emoji font (headless Chromium) drew empty boxes.
MATCH, MISMATCH = "match", "MISMATCH"
# Work a rerun may start without a click, in counted FLOPs (2 GFLOP: about 10-20 ms on the benchmark
# machine): more (the latency runs, the saved-activation pass of a bigger model) waits behind a button,
# so a text edit stays cheap for every visitor and nobody waits for work they did not ask for.
AUTO_WORK_FLOPS = 2e9
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?")


# ----------------------------------------------------------------------------- environment switches
SIDEBAR_FIELDS = ("every model field (preset, family, V, E, H, L, heads, I, P, T, activation, sharing, G, K, "
                  "head, tying) and the dtype")


def used_fields_note(seq_cap: int) -> str:
    """Which sidebar fields this page uses, and which it does not."""
    return (f"This page uses the sidebar's {SIDEBAR_FIELDS}. The sidebar's batch, sequence length and optimizer "
            f"do not apply: it runs one sequence of up to {seq_cap} tokens (at most {MAX_TOKENS}, and at most P).")


def refusal(cfg: ModelConfig, seq_cap: int, dtype: str, check: budget.BudgetCheck) -> tuple[str, list[str]]:
    """The message for a config too big for this server's budget, and what would fit instead, as
    changes a visitor can make in the sidebar (`albert_core.live.budget.alternatives`)."""
    from albert_core.format import fmt_bytes

    text = (f"Too big to build here: {cfg.label} in {dtype} needs about {fmt_bytes(check.estimate)} (weights + "
            f"one forward pass of {seq_cap} tokens), over the memory budget of {fmt_bytes(check.budget)} that this "
            "server shares among its visitors.")
    offers = []
    for alt in budget.alternatives(cfg, seq_cap, dtype, budget_bytes=check.budget):
        size = fmt_bytes(alt.estimate)
        if alt.field == "dtype":
            offers.append(f"dtype bf16 or fp16 in the sidebar: about {size}")
        elif alt.field == "seq_len":
            offers.append(f"a shorter sequence: max positions P = {alt.value} or less in the sidebar "
                          f"(the page runs up to P tokens): about {size}")
        else:
            offers.append(f"fewer layers: L = {alt.value} or less in the sidebar: about {size}")
    return text, offers


def bounded(where: Any, label: str, top: int, key: str, rule: str, help: str) -> int:
    """A whole-number input from 1 to ``top``: a value above ``top`` is shown as ``top`` with a message
    naming the rule (a widget maximum alone turns the box red and says nothing)."""
    from albert_core.configuration.config import LIMITS

    value = where.number_input(label, 1, LIMITS["num_layers"][1] * LIMITS["inner_group_num"][1], 1, key=key,
                               help=help)
    if value > top:
        where.warning(f"{label} {value} does not exist: {rule}; showing {label.lower()} {top}.")
        return top
    return int(value)


def check_hub_id(repo_id: str) -> str:
    """A hub model id such as 'albert/albert-base-v2'; ValueError naming the rule otherwise."""
    repo_id = repo_id.strip()
    if not _HUB_ID.fullmatch(repo_id) or ".." in repo_id:
        raise ValueError("hub id must look like 'owner/name' (letters, digits, '-', '_', '.'; at most 96 each)")
    return repo_id


# ----------------------------------------------------------------------------- counts
def live_counts(model: Any) -> dict[str, int]:
    """Parameters of a live model per component (tied / shared tensors once), on any device."""
    out: dict[str, int] = {}
    for name, p in model.named_parameters():  # named_parameters() yields each tensor once
        comp = component_of(name)
        out[comp] = out.get(comp, 0) + p.numel()
    return out


def match_table(analytic: ParamBreakdown, live: dict[str, int]) -> pd.DataFrame:
    """Component, label, analytic count, live count and a MATCH / MISMATCH mark; the last row holds the totals."""
    names = [c.name for c in analytic.components] + sorted(set(live) - set(analytic.by_name()))
    exact = analytic.by_name()
    rows = []
    for name in names:
        a, b = exact.get(name), live.get(name)
        rows.append({
            "component": name,
            "label": COMPONENT_INFO.get(name, (name, ""))[0],
            "analytic": a,
            "live": b,
            "match": MATCH if a is not None and a == b else MISMATCH,
        })
    a_total, b_total = analytic.total, sum(live.values())
    rows.append({"component": "total", "label": "Total (tied weights once)", "analytic": a_total,
                 "live": b_total, "match": MATCH if a_total == b_total else MISMATCH})
    df = pd.DataFrame(rows)
    return df.astype({"analytic": "Int64", "live": "Int64"})


# ----------------------------------------------------------------------------- cached resources
def torch_dtype(name: str):
    from albert_core.live.model import TORCH_DTYPES

    return TORCH_DTYPES[name]


def too_many_blocks(cfg: ModelConfig) -> str | None:
    """Why ``cfg`` is not built at all (even on the meta device), or None."""
    blocks = cfg.attention_copies + cfg.ffn_copies
    if blocks <= MAX_META_BLOCKS:
        return None
    return (f"it holds {blocks:,} attention and feed-forward blocks, more than the {MAX_META_BLOCKS:,} this "
            "server builds as modules, even on the meta device")


# Built and loaded models live in bounded caches that free them after MODEL_TTL_S unused (and when
# memory is short); their weights are reserved in the process budget for as long as they live.
MODEL_TTL_S = 300.0
WAIT_S = 10.0  # how long a visitor's live work waits for memory or the CPU before "the server is busy"
_MODELS = budget.ExpiringCache(max_entries=2, ttl_s=MODEL_TTL_S)
_CHECKPOINTS = budget.ExpiringCache(max_entries=1, ttl_s=MODEL_TTL_S)
_RUNS = budget.ExpiringCache(max_entries=4, ttl_s=MODEL_TTL_S)


@dataclass(frozen=True)
class ModelRef:
    """Which live model: the sidebar config (random seeded weights) or a checkpoint folder. Small and
    hashable, so pages and fragments keep this rather than the model (which a cache may free)."""

    cfg: ModelConfig
    dtype: str
    seq_len: int
    folder: str | None = None
    mtime_ns: int = 0
    roots: tuple[str, ...] = ()
    lab: bool = False  # a lab run (the lab's own loader: it also reads partial-sharing layouts)


def built_model(cfg: ModelConfig, dtype: str, seq_len: int):
    """A real model of ``cfg``, built once per config (budget-checked by build_model: MemoryBudgetError
    above it, BusyError when other visitors hold the memory or the CPU)."""
    from albert_core.live.model import build_model

    if problem := too_many_blocks(cfg):
        raise ValueError(problem)

    def build():
        with budget.LIVE_WORK.enter("model build", wait_s=WAIT_S):
            return build_model(cfg, "cpu", torch_dtype(dtype), batch=1, seq_len=seq_len, wait_s=WAIT_S)

    return _MODELS.get((cfg, dtype, seq_len), build)


@st.cache_resource(max_entries=2, show_spinner=False)
def meta_model(cfg: ModelConfig, dtype: str):
    """Shapes only: proves the count without allocating weights (ValueError above MAX_META_BLOCKS)."""
    from albert_core.live.model import build_model

    if problem := too_many_blocks(cfg):
        raise ValueError(problem)

    return build_model(cfg, "meta", torch_dtype(dtype))


def checkpoint_model(folder: str, mtime_ns: int, roots: tuple[str, ...]):
    """A checkpoint folder loaded by `load_pretrained_folder` (confined to ``roots``, budget-checked
    for one sequence of up to MAX_TOKENS). ``mtime_ns`` is in the key so a re-saved folder reloads."""
    from albert_core.live.interop import confine_folder, load_pretrained_folder

    def load():
        # the same confinement load_pretrained_folder applies, before config.json is read
        cfg = config_from_hf(confine_folder(folder, roots))
        seq_len = min(MAX_TOKENS, cfg.max_position_embeddings)
        with budget.LIVE_WORK.enter("checkpoint load", wait_s=WAIT_S):
            return load_pretrained_folder(folder, allowed_roots=roots, batch=1, seq_len=seq_len, wait_s=WAIT_S)

    return _CHECKPOINTS.get((folder, mtime_ns, roots), load)


def lab_checkpoint_model(folder: str, mtime_ns: int, roots: tuple[str, ...], seq_len: int):
    """A finished lab run's trained model, in the same budgeted expiring cache as checkpoints."""
    from ui.live_lab import load_lab_model

    def load():
        with budget.LIVE_WORK.enter("lab run load", wait_s=WAIT_S):
            return load_lab_model(folder, roots, seq_len)

    return _CHECKPOINTS.get((folder, mtime_ns, roots, seq_len), load)


def model_of(ref: ModelRef):
    """The live model of ``ref`` (from its cache, rebuilt or reloaded if the cache freed it)."""
    if ref.lab:
        return lab_checkpoint_model(ref.folder, ref.mtime_ns, ref.roots, ref.seq_len)
    if ref.folder is not None:
        return checkpoint_model(ref.folder, ref.mtime_ns, ref.roots)
    return built_model(ref.cfg, ref.dtype, ref.seq_len)


def forward_cap_problem(cfg: ModelConfig, seq_len: int) -> str | None:
    """Why one forward pass over ``seq_len`` tokens is over the per-request compute cap, or None."""
    from albert_core.counting.flops import count_flops

    try:
        budget.check_flops(count_flops(cfg, 1, seq_len).forward, f"one forward pass over {seq_len} tokens")
    except budget.ComputeBudgetError as exc:
        return str(exc)
    return None


def session_alive() -> Callable[[], bool]:
    """A check that the visitor who started the current run is still connected (always True outside a
    server, e.g. under AppTest): repeated work stops between runs when the tab has closed."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not st.runtime.exists():
        return lambda: True
    runtime, session_id = st.runtime.get_instance(), ctx.session_id
    return lambda: runtime.is_active_session(session_id)


def hub_folder(repo_id: str, seq_len: int) -> Path:
    """Download a hub model's config, check the memory budget, then its safetensors and tokenizer
    files (never pickles). Only called when `hub_allowed()`; never in tests."""
    from huggingface_hub import hf_hub_download, snapshot_download

    from albert_core.counting.params import count_params
    from albert_core.live.model import MemoryBudgetError, check_budget

    repo_id = check_hub_id(repo_id)
    cfg = config_from_hf(hf_hub_download(repo_id, "config.json"))
    check = check_budget(cfg, 1, min(seq_len, cfg.max_position_embeddings),
                         extra_bytes=4 * count_params(cfg).total)
    if not check.ok:
        raise MemoryBudgetError(check.message)
    patterns = ["*.json", "*.safetensors", "vocab.txt", "spiece.model"]
    return Path(snapshot_download(repo_id, allow_patterns=patterns))


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


def tokens_frame(encoded: Any) -> pd.DataFrame:
    """One row per token (position, token, id, segment): read top to bottom, no sideways scroll."""
    return pd.DataFrame({
        "token": list(encoded.tokens),
        "id": [int(i) for i in encoded.ids],
        "segment": ["A" if int(t) == 0 else "B" for t in encoded.token_type_ids],
    })


@dataclass(frozen=True)
class Run:
    """One forward pass on the user's text, with hidden states and attention maps kept."""

    encoded: Any  # albert_core.text.encoding.Encoded
    output: Any  # albert_core.live.model.EncoderOutput
    seconds: float  # wall time of that forward pass: decides whether more runs wait for a click


def _encode(model: Any, text: str, pair: str | None, checkpoint: str | None):
    from albert_core.text.encoding import encode

    cfg = model.config
    return encode(text, cfg, min(MAX_TOKENS, cfg.max_position_embeddings), pair, checkpoint)


def run_text(ref: ModelRef, text: str, pair: str | None) -> Run:
    """Tokenize and run once (hidden states and attentions kept), once per model and text; the kept
    outputs stay reserved in the memory budget while the run is cached or shown."""
    import torch

    def run() -> Run:
        model = model_of(ref)
        enc = _encode(model, text, pair, ref.folder)
        set_torch_threads()
        with budget.LIVE_WORK.enter("forward pass", wait_s=WAIT_S), torch.inference_mode():
            t0 = time.perf_counter()
            out = model(**enc.tensors(), output_hidden_states=True, output_attentions=True)
            seconds = time.perf_counter() - t0
        kept = sum(t.numel() * t.element_size() for t in (*out.hidden_states, *out.attentions))
        result = Run(enc, out, seconds)
        return budget.reserve(kept, "kept hidden states and attention maps", wait_s=WAIT_S).hold_until_freed(result)

    return _RUNS.get((ref, text, pair), run)


@st.cache_data(max_entries=16, show_spinner=False)
def timing(ref: ModelRef, text: str, pair: str | None, n: int, _alive: Callable[[], bool] = lambda: True) -> dict:
    """Median latency of n forward passes, achieved GFLOP/s and the share of the matmul probe. Stops
    (Cancelled, nothing cached) when ``_alive()`` turns False between runs."""
    from albert_core.live.analysis import achieved_gflops, matmul_peak_gflops, measure_latency

    threads = set_torch_threads()
    model = model_of(ref)
    enc = run_text(ref, text, pair).encoded
    with budget.LIVE_WORK.enter("timing runs", wait_s=WAIT_S):
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
    with budget.LIVE_WORK.enter("saved-activation pass", wait_s=WAIT_S):
        return saved_activation_bytes(model, enc)
